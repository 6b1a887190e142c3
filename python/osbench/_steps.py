"""Passes over large arrays in bounded steps: the interpreter runs between steps, so Ctrl-C
stops the work of any size within milliseconds (numpy holds the interpreter, and the GIL
released, for the whole of one call), and the temporaries stay small."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Callable, TypeVar

import numpy as np

CHUNK = 1 << 20
"""Elements per step (8 MiB of int64): a few milliseconds of numpy work."""

R = TypeVar("R")


def spans(n: int) -> Iterator[tuple[int, int]]:
    """``[a, b)`` ranges of at most :data:`CHUNK` covering ``range(n)``, in order."""
    step = CHUNK
    for a in range(0, n, step):
        yield a, min(a + step, n)


def filled(n: int, dtype: Any, part: Callable[[int, int], Any]) -> np.ndarray:
    """An ``n``-array whose ``[a, b)`` is ``part(a, b)``, computed span by span in order."""
    out = np.empty(n, dtype=dtype)
    for a, b in spans(n):
        out[a:b] = part(a, b)
    return out


def offsets(n: int, counts: Callable[[int, int], np.ndarray]) -> np.ndarray:
    """``[0, c_0, c_0 + c_1, ...]`` (``n + 1`` int64) of the counts ``counts(a, b)`` gives."""
    out = np.zeros(n + 1, dtype=np.int64)
    for a, b in spans(n):
        part = out[a + 1 : b + 1]
        np.cumsum(counts(a, b), out=part)
        part += out[a]
    return out


def groups(offsets: np.ndarray) -> Iterator[tuple[int, int]]:
    """``[a, b)`` ranges of whole groups (group ``g`` is ``offsets[g]:offsets[g + 1]``) covering
    about :data:`CHUNK` elements each (more when one group alone is larger), in order."""
    n, total = len(offsets) - 1, int(offsets[-1])
    cuts = np.searchsorted(offsets, np.arange(0, total, CHUNK), side="right") - 1
    bounds = np.unique(np.concatenate([[0], np.minimum(cuts, n), [n]]))
    yield from zip(bounds[:-1].tolist(), bounds[1:].tolist())


def cumsum_from(values: np.ndarray, out: np.ndarray, carry: Any) -> Any:
    """``out = carry + cumsum(values)``, added one by one from ``carry`` (as one cumsum over
    the spans before would add them); returns the new carry."""
    out[:] = values
    if len(out):
        out[0] = carry + out[0]
        np.cumsum(out, out=out)
        return out[-1]
    return carry


__all__ = ["CHUNK", "cumsum_from", "filled", "groups", "offsets", "spans"]


def aside(n: int, work: Callable[[], R]) -> R:
    """``work()``, run on a worker thread when it is over ``n`` > :data:`CHUNK` elements, the
    caller waiting in 50 ms slices, so that Ctrl-C is answered at once: for whole-array numpy
    calls that cannot be split into steps without changing their result (a partition for a
    percentile, a pairwise sum), and release the GIL while they run. Interrupted, the caller
    raises KeyboardInterrupt and the worker's result, when it comes, is dropped."""
    if n <= CHUNK:
        return work()
    out: list[Any] = []

    def run() -> None:
        try:
            out.append((True, work()))
        except BaseException as exc:  # handed to the caller
            out.append((False, exc))

    worker = threading.Thread(target=run, name="osbench-aside", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
    ok, value = out[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
