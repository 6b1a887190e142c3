"""The engine semantics osbench reproduces, by name: derived from the native core's table
(``_native.SERVE_ENGINES``, declared once in ``rust/osbench-core/src/serve/mod.rs: ENGINES``).

A semantics is a folder on each side (``rust/osbench-core/src/serve/<name>/``,
``python/osbench/serve/<name>/``) and one row of that table. Its module
``osbench.serve.<name>.engines`` gives ``Config`` (its configuration, whose fields are the
row's ``config_fields``), ``CHOICES`` (the fields taking one of a few names, and those names),
``configure`` (that configuration from a model and GPU, as :func:`osbench.serve.simulate`
fills it in), ``pool_blocks`` (the KV pool's size in the blocks its runs count), ``run(requests,
config, step_time, *, engine, record, concurrency)`` and ``run_alone`` (each request alone, for
``slowdown``; a function that returns None where the semantics does not give it), and
optionally ``REPEATED`` (the fields given as a list, a command-line flag per item, and what
reads an item). The row's ``engines`` say which engines run it, the first being its default:
``("native", "reference")`` for vLLM's and SGLang's; a semantics with no native side lists
``("reference",)``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from osbench import _checks, _native
from osbench.errors import ArgumentError, ArgumentTypeError


@dataclass(frozen=True)
class Semantics:
    """One row of :data:`ENGINES`."""

    name: str
    follows: str
    """The release of the real engine it reproduces, step for step."""
    policies: tuple[str, ...]
    config_fields: tuple[str, ...]
    engines: tuple[str, ...]
    """The engines that run it, the first its default (``"native"``, ``"reference"``)."""

    def module(self) -> ModuleType:
        """Its configuration and runs (``osbench.serve.<name>.engines``)."""
        return importlib.import_module(f"osbench.serve.{self.name}.engines")

    def engine(self, engine: Any = None) -> str:
        """The engine to run this semantics on: ``engine`` checked against :attr:`engines`, or
        its default (the first) when None."""
        if engine is None:
            return self.engines[0]
        engine = _checks.engine(engine)
        if engine not in self.engines:
            raise ArgumentError(
                f"engine={engine!r} is not accepted with semantics={self.name!r}: use "
                f"{' or '.join(repr(e) for e in self.engines)} (the engines osbench.serve.ENGINES lists for it; "
                f"{self.engines[0]!r} is its default)"
            )
        return engine


ENGINES: dict[str, Semantics] = {
    name: Semantics(name, follows, tuple(policies), tuple(fields), tuple(engines))
    for name, follows, policies, fields, engines in _native.SERVE_ENGINES
}
"""Every engine semantics, by name, in the core's order."""


def semantics(name: Any) -> Semantics:
    """The row of :data:`ENGINES` named ``name``; an unknown name is refused with the table."""
    if not isinstance(name, str):
        raise ArgumentTypeError(f"semantics={name!r} is not accepted: it must be a str, one of {', '.join(ENGINES)}")
    if name not in ENGINES:
        table = "; ".join(
            f"{s.name!r} ({s.follows}; policies {', '.join(s.policies)}; engines {', '.join(s.engines)})"
            for s in ENGINES.values()
        )
        raise ArgumentError(f"semantics={name!r} is not accepted: it must be one of {table}")
    return ENGINES[name]
