"""What a trace file format is to the registry: a name and the functions that read, write,
stream and recognise it. One module per format fills one :class:`Format`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Union

import numpy as np

from osbench.traces.formats._io import Reader
from osbench.traces.trace import Trace


@dataclass(frozen=True)
class Options:
    """Everything :func:`~osbench.traces.read` and :func:`~osbench.traces.write` take besides
    the path and the trace; a format uses the options it knows and ignores the others."""

    # text formats: columns by 0-based index or header name (read); a header line (None when
    # reading: detected); the delimiter (None: the format's own)
    key_column: Union[int, str] = 0
    size_column: Union[int, str, None] = None
    time_column: Union[int, str, None] = None
    header: Optional[bool] = None
    delimiter: Optional[str] = None
    # binary: a struct format with a byte order, and field indices
    struct: Optional[str] = None
    key_field: int = 0
    size_field: Optional[int] = None
    time_field: Optional[int] = None


@dataclass(frozen=True)
class Layout:
    """Fixed-size records as a streaming reader meets them: their dtype, which fields are the
    key, size and time (and one more column kept in ``Trace.fields``), and how many records a
    header promises (None: until the data ends)."""

    dtype: np.dtype
    key: str
    size: Optional[str] = None
    time: Optional[str] = None
    extra: Optional[str] = None
    count: Optional[int] = None


@dataclass(frozen=True)
class Format:
    """One trace file format.

    - ``read(path, data, options)``: the whole file's (decompressed) bytes to a :class:`Trace`.
    - ``write(trace, keys, options)``: the bytes of the file (None: read only).
    - ``layout(path, reader, options)``: the record layout, for reading in bounded memory
      (None: the file is read whole, then cut); it may read a header from ``reader``.
    - ``detect(name, head)``: whether a file of this name (lower case, ``.zst`` set aside)
      starting with ``head`` is in this format (None: only when asked for by name).
      Detectors are tried by ``precedence``, lowest first.
    """

    name: str
    read: Callable[[str, bytes, Options], Trace]
    write: Optional[Callable[[Trace, np.ndarray, Options], bytes]] = None
    layout: Optional[Callable[[str, Reader, Options], Layout]] = None
    detect: Optional[Callable[[str, bytes], bool]] = None
    precedence: int = 0
