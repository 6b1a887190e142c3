"""The base of the project's result records: frozen dataclasses that become plain dicts."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar


class Record:
    """A dataclass of results. :meth:`to_dict` gives its fields as plain Python (nested
    dataclasses as dicts too), as results.json and the JSON-lines sweeps store them; a record
    whose fields hold arrays or derived figures extends it."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
