"""Online caches: one access at a time, either engine, behind one class that checks each
access's arguments the same way for both (:mod:`._args`)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Callable, Optional

from osbench import _checks, _native
from osbench.cache import _args, reference
from osbench.cache import admission as _admission
from osbench.cache.reference import admission as ref_admission


class _ReferenceCache:
    """A reference-engine cache with the native ``OnlineCache``'s calls: ``access(key, size,
    cost)`` with checked arguments, ``used``, ``len``, ``in``."""

    def __init__(
        self,
        policy: str,
        capacity: int,
        sizes: bool,
        parameters: dict[str, Any],
        gate: tuple[Optional[str], dict[str, Any]] = (None, {}),
    ) -> None:
        self._cache = reference.make(policy, capacity, **parameters)
        self._sizes = sizes
        self._gate = None if gate[0] is None else ref_admission.make(gate[0], capacity, **gate[1])

    def access(self, key: Hashable, size: Optional[int], cost: Optional[float]) -> bool:
        if self._gate is not None:
            return ref_admission.access(self._cache, self._gate, key, None, size, cost)
        if cost is not None:
            return bool(self._cache.access(key, None, 1 if size is None else size, cost))
        if size is not None:
            return bool(self._cache.access(key, None, size))
        return bool(self._cache.access(key))

    @property
    def used(self) -> int:
        return int(self._cache.used) if self._sizes else len(self._cache)

    def __len__(self) -> int:
        return len(self._cache)

    def __contains__(self, key: Any) -> bool:
        return key in self._cache


class OnlineCache:
    """What :func:`new` returns: ``access(key, size=None, cost=None) -> bool`` (True on a
    hit; a miss inserts the key; ``size`` in bytes is required when the cache was made with
    sizes, ``cost`` when it was made with costs, both kept from the access that brings the
    object in), ``len``, ``in``, ``used`` (bytes held with sizes, else objects held), and the
    ``capacity``, ``name``, ``sizes`` and ``costs`` it was made with."""

    __slots__ = ("_cache", "access", "capacity", "costs", "name", "sizes")

    access: Callable[..., bool]

    def __init__(self, cache: Any, policy: str, capacity: int, sizes: bool, costs: bool) -> None:
        self._cache = cache
        self.access = _args.online_access(cache.access, sizes, costs)
        self.capacity, self.name, self.sizes, self.costs = capacity, policy, sizes, costs

    @property
    def used(self) -> int:
        return int(self._cache.used)

    def __len__(self) -> int:
        return len(self._cache)

    def __contains__(self, key: Any) -> bool:
        return _args.online_key(key) in self._cache

    def __repr__(self) -> str:
        unit = "bytes" if self.sizes else "objects"
        return f"<OnlineCache {self.name} of {self.capacity} {unit}: {len(self)} held>"


def new(
    policy: str,
    capacity: int,
    *,
    engine: str = "native",
    sizes: bool = False,
    costs: bool = False,
    admission: Optional[str] = None,
    admission_params: Optional[dict[str, Any]] = None,
    **parameters: Any,
) -> OnlineCache:
    """An online cache: ``c.access(key)`` returns True on a hit; ``len(c)``, ``key in c``,
    ``c.used``.

    ``sizes=True``: ``capacity`` counts bytes and every access gives the object's size,
    ``c.access(key, size)`` (a positive integer), as in :func:`~osbench.cache.replay` (an
    object larger than the cache is never admitted; a hit keeps the size the object entered
    with); ``c.used`` is the bytes held (without sizes: the objects held).
    ``costs=True`` (the policies in ``COSTED_POLICIES``): every access gives the object's
    cost, ``c.access(key, cost=c)`` or ``c.access(key, size, c)`` (finite, positive); an
    object keeps the cost it entered with.
    Native keys are integers in [-2**63, 2**64); reference keys are any hashable.
    Offline policies (``opt``) need the future and have no online form.
    ``admission`` and ``admission_params``: an admission filter in front of the cache, as for
    :func:`~osbench.cache.replay`.
    ``parameters``: the policy's, as for :func:`~osbench.cache.replay`."""
    policy = _args.policy(policy)
    capacity = _checks.positive_int("capacity", capacity)
    engine = _checks.engine(engine)
    parameters = _args.parameters(policy, parameters, [capacity])
    gate = _admission.check(admission, admission_params)
    sizes, costs = _args.flag("sizes", sizes), _args.flag("costs", costs)
    _args.online(policy, costs)
    if engine == "reference":
        cache: Any = _ReferenceCache(policy, capacity, sizes, parameters, gate)
    else:
        cache = _native.OnlineCache(policy, capacity, parameters, sizes, costs, *gate)
    return OnlineCache(cache, policy, capacity, sizes, costs)
