"""Writing output files (every ``--out``, ``--figure``, :func:`osbench.traces.write`, the report
and host folders), and figures rendered to PNG bytes for them.

What is at the path decides how it is written:

- a regular file, or nothing yet: replaced atomically (a temporary file beside it, flushed to
  disk, then renamed over it), so a reader sees the old file or the whole new one, never half of
  it; an existing file keeps its permissions;
- a symbolic link: written through to its target, by the same rules (a link to a regular file
  has its target replaced and stays a link; a dangling link has its target created);
- a character device (``/dev/null``, a terminal) or a named pipe that has a reader: written as a
  stream, never replaced (renaming over ``/dev/null`` would turn it into a regular file); so is
  an open file named through ``/proc`` (``/dev/stdout``, ``/dev/fd/N``), which is written where
  that descriptor points;
- a directory, a block device, a socket, a named pipe with no reader (the write would wait for
  ever), or a loop of links: refused with an :class:`~osbench.errors.ArgumentError` naming the
  path, before anything is written.
"""

from __future__ import annotations

import csv
import errno
import io
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from osbench.errors import ArgumentError

PathLike = Union[str, "os.PathLike[str]"]

_MAX_LINKS = 40
"""Symbolic links followed at most (Linux's own limit), beyond which the path is a loop."""


def write_bytes(path: PathLike, data: bytes, *, name: str = "path") -> None:
    """Write ``data`` to ``path`` as the module says (``name``: the argument, for errors)."""
    target, opened = _follow(Path(path), name)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        _replace(target, data, None)
        return
    except OSError as exc:
        raise _refused(name, path, exc.strerror or str(exc)) from None
    if stat.S_ISREG(mode) and not opened:
        _replace(target, data, stat.S_IMODE(mode))
    elif stat.S_ISCHR(mode) or stat.S_ISREG(mode):
        _stream(target, data, os.O_WRONLY | os.O_TRUNC)
    elif stat.S_ISFIFO(mode):
        try:
            _stream(target, data, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            raise _refused(name, path, "a named pipe with no reader (the write would wait for ever)") from None
    else:
        kind = "a directory" if stat.S_ISDIR(mode) else "a block device" if stat.S_ISBLK(mode) else "a socket"
        raise _refused(name, path, kind)


def write_text(path: PathLike, text: str, *, name: str = "path") -> None:
    write_bytes(path, text.encode("utf-8"), name=name)


def write_csv(path: PathLike, rows: Sequence[Mapping[str, Any]], *, name: str = "path") -> None:
    """``rows`` (dicts of the same keys, the first one's in order) as a CSV with a header,
    atomically (:func:`write_bytes`)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else [])
    writer.writeheader()
    writer.writerows(rows)
    write_text(path, buf.getvalue(), name=name)


def _refused(name: str, path: PathLike, what: str) -> ArgumentError:
    return ArgumentError(
        f"{name}={os.fspath(path)!r} is not accepted: it is {what}; give a file path (or a character device, "
        "or a named pipe with a reader)"
    )


def _follow(path: Path, name: str) -> tuple[Path, bool]:
    """The path the data goes to: symbolic links followed (relative ones from their own folder),
    and whether it names an open file through ``/proc`` (where links are no names to follow)."""
    original = path
    for _ in range(_MAX_LINKS):
        folder = Path(os.path.realpath(path.parent))
        path = folder / path.name
        if folder.parts[:2] == ("/", "proc"):
            return path, True
        if not path.is_symlink():
            return path, False
        path = folder / os.readlink(path)
    raise _refused(name, original, f"a loop of symbolic links (more than {_MAX_LINKS})")


def _stream(path: Path, data: bytes, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        if flags & os.O_NONBLOCK:
            os.set_blocking(fd, True)
        with os.fdopen(fd, "wb", closefd=False) as f:
            f.write(data)
    finally:
        os.close(fd)


def _replace(path: Path, data: bytes, mode: Union[int, None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask  # mkstemp makes 0600; give the usual permissions
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def figure_png(fig: Any) -> bytes:
    """PNG bytes of a matplotlib figure, which is then closed (figures left open pile up)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
