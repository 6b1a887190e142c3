"""``csv`` and ``txt``: one access per line; the key column (and optionally a size and a time
column) chosen by index or, with a header line, by name. ``csv`` splits on commas, ``txt`` on
whitespace (or on ``delimiter=``). The header is detected when not said. Integers are decimal
ASCII digits with an optional sign (``1_000``, other scripts' digits, ``0x10`` are refused)."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from typing import Optional, Union

import numpy as np

from osbench.errors import ArgumentError, TraceFileError
from osbench.traces.formats._io import Source, fail, int_array, parse_int
from osbench.traces.formats.format import Format, Options
from osbench.traces.trace import Trace

READS = ("key_column", "size_column", "time_column", "header", "delimiter")
"""The options of the text formats."""

MEMORY_PER_BYTE = 8.0
"""A parsed integer holds about 40 bytes until the columns become arrays: a few times the
bytes of its digits."""


def _read(path: str, src: Source, sep: Optional[str], options: Options) -> Trace:
    key_column, header = options.key_column, options.header
    rows: Iterator[tuple[int, str]] = ((no, line) for no, _, line in src.lines() if line.strip())
    first = next(rows, None)
    if first is None:
        raise fail(path, "line 1", "no records (the file holds only blank lines)")

    def split(line: str) -> list[str]:
        return [f.strip() for f in line.split(sep)]

    first_no, first_line = first
    names = split(first_line)
    if header is None:
        if isinstance(key_column, str):
            header = True
        else:
            # A name has no digit (in any script): a first line "1_000" or "١٢٣" is data, and refused.
            k = key_column if isinstance(key_column, int) and 0 <= key_column < len(names) else 0
            header = not any(ch.isdigit() for ch in names[k])
    if not header:
        rows = itertools.chain([first], rows)

    def column(arg: str, value: Union[int, str, None]) -> Optional[int]:
        if value is None:
            return None
        if isinstance(value, str):
            if not header:
                raise ArgumentError(f"{arg}={value!r} is not accepted: a column name needs a header line (header=True)")
            if value not in names:
                raise ArgumentError(f"{arg}={value!r} is not accepted: the header has columns {', '.join(names)}")
            return names.index(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ArgumentError(f"{arg}={value!r} is not accepted: a column index (0-based) or a header name")
        return value

    kc = column("key_column", key_column)
    sc = column("size_column", options.size_column)
    tc = column("time_column", options.time_column)
    assert kc is not None
    asked = {c: arg for arg, c in (("time_column", tc), ("size_column", sc), ("key_column", kc)) if c is not None}
    wanted = [c for c in (kc, sc, tc) if c is not None]
    need = max(wanted) + 1
    cols: list[list[int]] = [[] for _ in wanted]
    last_no = None
    for line_no, line in rows:
        fields = split(line)
        if len(fields) < need:
            raise fail(
                path,
                f"line {line_no}",
                f"{len(fields)} fields, but {asked[need - 1]}={need - 1} asks for a column {need - 1} "
                "(columns are numbered from 0)",
            )
        try:
            for out, c in zip(cols, wanted):
                out.append(parse_int(path, line_no, c, fields[c]))
        except TraceFileError as exc:
            if line_no == first_no:
                raise TraceFileError(f"{exc} (if the first line is a header, pass header=True)") from None
            raise
        if sc is not None and cols[1][-1] < 1:
            raise fail(path, f"line {line_no}, column {sc + 1}", f"{cols[1][-1]} is not a size (sizes are >= 1)")
        last_no = line_no
    if last_no is None:
        raise fail(path, f"line {first_no + 1}", "no records after the header")
    where = f"lines {first_no}-{last_no}"
    arrays = [int_array(path, c, where) for c in cols]
    keys = arrays[0]
    sizes = arrays[1] if sc is not None else None
    times = arrays[-1] if tc is not None else None
    return Trace(keys, sizes=sizes, times=times)


def _write(t: Trace, keys: np.ndarray, sep: str, options: Options) -> bytes:
    columns: list[tuple[str, np.ndarray]] = [("key", keys)]
    if t.sizes is not None:
        columns.append(("size", np.asarray(t.sizes)))
    if t.times is not None:
        columns.append(("time", np.asarray(t.times)))
    out = io.StringIO()
    if options.header:
        out.write(sep.join(name for name, _ in columns) + "\n")
    lists = [c.tolist() for _, c in columns]
    for row in zip(*lists):
        out.write(sep.join(str(v) for v in row) + "\n")
    return out.getvalue().encode("utf-8")


CSV = Format(
    "csv",
    lambda path, src, o: _read(path, src, o.delimiter if o.delimiter is not None else ",", o),
    lambda t, keys, o: _write(t, keys, o.delimiter if o.delimiter is not None else ",", o),
    detect=lambda name, head: name.endswith(".csv"),
    precedence=4,
    memory_per_byte=MEMORY_PER_BYTE,
    reads=READS,
)

TXT = Format(
    "txt",
    lambda path, src, o: _read(path, src, o.delimiter, o),  # None: split on whitespace
    lambda t, keys, o: _write(t, keys, o.delimiter if o.delimiter is not None else " ", o),
    detect=lambda name, head: name.endswith((".txt", ".tsv", ".trace")),
    precedence=5,
    memory_per_byte=MEMORY_PER_BYTE,
    reads=READS,
)
