"""What a trace file format is to the registry: a name and the functions that read, write,
stream and recognise it. One module per format fills one :class:`Format`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Optional, Union

import numpy as np

from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.traces.formats._io import Source
from osbench.traces.trace import Trace


@dataclass(frozen=True)
class Options:
    """Everything :func:`~osbench.traces.read` and :func:`~osbench.traces.write` take besides
    the path and the trace; a format reads the options its ``reads`` names, and any other
    given a value besides its default is refused (:meth:`Format.check_reads`)."""

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

    def __post_init__(self) -> None:
        for name in ("key_column", "size_column", "time_column"):
            value = getattr(self, name)
            if (value is not None or name == "key_column") and (
                isinstance(value, bool) or not isinstance(value, (int, str))
            ):
                raise ArgumentTypeError(f"{name}={value!r} is not accepted: a column index (0-based) or a header name")
        for name in ("key_field", "size_field", "time_field"):
            value = getattr(self, name)
            if (value is not None or name == "key_field") and (isinstance(value, bool) or not isinstance(value, int)):
                raise ArgumentTypeError(f"{name}={value!r} is not accepted: the index of a field of the struct")
        if self.header is not None and not isinstance(self.header, bool):
            raise ArgumentTypeError(f"header={self.header!r} is not accepted: True, False or None (detected)")
        if self.delimiter is not None and (
            not isinstance(self.delimiter, str)
            or not self.delimiter
            or "\n" in self.delimiter
            or "\r" in self.delimiter
        ):
            raise ArgumentError(
                f"delimiter={self.delimiter!r} is not accepted: a non-empty string without line breaks, or None"
            )
        if self.struct is not None and not isinstance(self.struct, str):
            raise ArgumentTypeError(f"struct={self.struct!r} is not accepted: a struct format string such as '<IQIq'")


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
    """One trace file format, in one of two kinds.

    - Fixed-size records: ``layout(path, source, options)`` gives the record layout (it may
      read a header from ``source``); the registry reads the records, whole or in bounded
      pieces, with one set of checks (a truncated record, a count other than the header's).
    - Lines: ``read(path, source, options)`` reads the whole trace from ``source``.

    ``write(trace, keys, options)``: the bytes of the file (None: read only).
    ``detect(name, head)``: whether a file of this name (lower case, ``.zst`` set aside)
    starting with ``head`` is in this format (None: only when asked for by name); detectors
    are tried by ``precedence``, lowest first. ``memory_per_byte``: the memory a whole read
    takes per byte of the file's data (parsed text costs more than its bytes), checked against
    the memory free before a read. ``reads``: the :class:`Options` fields it reads (or writes).
    """

    name: str
    read: Optional[Callable[[str, Source, Options], Trace]] = None
    write: Optional[Callable[[Trace, np.ndarray, Options], bytes]] = None
    layout: Optional[Callable[[str, Source, Options], Layout]] = None
    detect: Optional[Callable[[str, bytes], bool]] = None
    precedence: int = 0
    memory_per_byte: float = 3.0
    reads: tuple[str, ...] = ()

    def check_reads(self, options: Options, defaults: Options = Options(), verb: str = "reads") -> None:
        """Refuse an option this format does not read, given a value besides its default (an
        Azure log has no key column to choose: ``key_column=99`` is no choice it makes)."""
        for f in dataclasses.fields(Options):
            value = getattr(options, f.name)
            if f.name not in self.reads and value != getattr(defaults, f.name):
                which = ", ".join(self.reads) if self.reads else "none"
                raise ArgumentError(
                    f"{f.name}={value!r} is not accepted for format={self.name!r}: it {verb} no {f.name} "
                    f"(the options it {verb}: {which})"
                )
