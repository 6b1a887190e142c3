"""Requests described by plain values: what ``osbench serve simulate``'s options and a serving
sweep's spec say, turned into :class:`~osbench.serve.Requests` in one place.

A description is a dict with one source:

- ``trace``: a request log, by dataset name or path (Azure or Mooncake; ``format`` when the
  file's content does not tell), or
- a generator: ``poisson = [N, RATE]``, ``gamma = [N, RATE, CV]`` or ``conversations = [N, RATE]``
  (``"N,RATE"`` as text works too), with ``prompt_len`` and ``output_len`` (for conversations:
  each message and each answer), ``system_prompts = "COUNT,LENGTH[,FRACTION]"``, and for
  conversations ``turns = "LO,HI"`` and ``think_time`` (seconds); ``seed``. Lengths are
  :func:`length` specs; what is not given takes the generator's default;

then, in this order: ``limit`` (keep the first N requests), ``fit`` (leave out the requests
longer than the ``max_model_len`` the run will have, and count them) and ``rate`` (rescale the
arrivals to this many requests per second, :meth:`Requests.at_rate`).
"""

from __future__ import annotations

import inspect
import numbers
from typing import Any, NamedTuple, Optional

import numpy as np

from osbench import _checks
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.config import EngineConfig
from osbench.serve.models import Model
from osbench.serve.requests import Requests
from osbench.serve.workloads import Empirical, LengthSpec, Lognormal, SystemPrompts

GENERATORS: dict[str, tuple[str, ...]] = {
    "poisson": ("n", "rate"),
    "gamma": ("n", "rate", "cv"),
    "conversations": ("n_conversations", "rate"),
}
"""The generators a description can name, and the numbers each takes (those of the
:class:`Requests` class method of that name)."""

KEYS = (
    "trace",
    "format",
    *GENERATORS,
    "prompt_len",
    "output_len",
    "system_prompts",
    "turns",
    "think_time",
    "seed",
    "limit",
    "fit",
    "rate",
)
"""Every key a description may have."""

LENGTH_FORMS = "TOKENS, lognormal:MEAN,SIGMA[,MAX] or empirical:TRACE (a trace's lengths, by dataset name or path)"

# The generators' own parameter names for the two lengths.
_LENGTH_PARAMETERS = {
    "poisson": ("prompt_len", "output_len"),
    "gamma": ("prompt_len", "output_len"),
    "conversations": ("message_len", "answer_len"),
}


def generator_default(generator: str, key: str) -> Any:
    """The default of a generator's ``prompt_len`` or ``output_len`` (for conversations: its
    ``message_len`` or ``answer_len``), read from the generator's signature."""
    parameter = _LENGTH_PARAMETERS[generator][("prompt_len", "output_len").index(key)]
    return inspect.signature(getattr(Requests, generator)).parameters[parameter].default


def _numbers(name: str, value: Any, count: int) -> list[float]:
    """``count`` numbers from a list or from text such as ``"2000,10"``."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or len(items) != count:
        raise ArgumentError(f"{name}={value!r} is not accepted: give {count} numbers, as a list or as text like 1,2")
    out = []
    for item in items:
        try:
            x = float(item) if isinstance(item, str) else item
        except ValueError:
            raise ArgumentError(f"{name}={value!r} is not accepted: {item!r} is not a number") from None
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise ArgumentTypeError(f"{name}={value!r} is not accepted: {item!r} is not a number")
        out.append(float(x))
    return out


def _count(name: str, x: float) -> int:
    if not float(x).is_integer():
        raise ArgumentError(f"{name}={x!r} is not accepted: it must be a whole number")
    return int(x)


def length(name: str, value: Any, column: str) -> LengthSpec:
    """A length distribution from a plain value: an int (or its text), ``"lognormal:MEAN,SIGMA"``
    or ``"lognormal:MEAN,SIGMA,MAX"`` (:class:`~osbench.serve.Lognormal`), or
    ``"empirical:TRACE"``: lengths drawn from a trace's ``column`` (``"prompt_len"`` or
    ``"output_len"``), the trace by dataset name or path (:class:`~osbench.serve.Empirical`)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        kind, _, rest = value.partition(":")
        if not rest and kind.strip().isdigit():
            return int(kind)
        if kind == "lognormal" and rest:
            parts = _numbers(name, rest, len(rest.split(",")))
            if len(parts) in (2, 3):
                cap = None if len(parts) == 2 else _count(name, parts[2])
                return Lognormal(parts[0], parts[1], cap)
        if kind == "empirical" and rest:
            return Empirical(np.asarray(getattr(Requests.read(rest), column)))
    raise ArgumentError(f"{name}={value!r} is not accepted: give {LENGTH_FORMS}")


def _system_prompts(value: Any) -> Optional[SystemPrompts]:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or len(items) not in (2, 3):
        raise ArgumentError(
            f"system_prompts={value!r} is not accepted: give COUNT,LENGTH or COUNT,LENGTH,FRACTION "
            "(how many prompts, their tokens, the share of requests that open with one)"
        )
    x = _numbers("system_prompts", items, len(items))
    fraction = x[2] if len(x) == 3 else 1.0
    return SystemPrompts(_count("system_prompts", x[0]), _count("system_prompts", x[1]), fraction)


def _turns(value: Any) -> Any:
    if isinstance(value, str):
        x = _numbers("turns", value, len(value.split(",")))
        if len(x) == 1:
            return _count("turns", x[0])
        if len(x) == 2:
            return _count("turns", x[0]), _count("turns", x[1])
        raise ArgumentError(f"turns={value!r} is not accepted: give TURNS or LO,HI")
    if isinstance(value, list):
        return tuple(value)
    return value


def _generated(kind: str, d: dict[str, Any]) -> Requests:
    x = _numbers(kind, d[kind], len(GENERATORS[kind]))
    args: list[Any] = [_count(kind, x[0]), *x[1:]]
    prompt, output = _LENGTH_PARAMETERS[kind]
    options: dict[str, Any] = {}
    if d.get("prompt_len") is not None:
        options[prompt] = length("prompt_len", d["prompt_len"], "prompt_len")
    if d.get("output_len") is not None:
        options[output] = length("output_len", d["output_len"], "output_len")
    if d.get("system_prompts") is not None:
        options["system_prompts"] = _system_prompts(d["system_prompts"])
    if d.get("seed") is not None:
        options["seed"] = d["seed"]
    if kind == "conversations":
        if d.get("turns") is not None:
            options["turns"] = _turns(d["turns"])
        if d.get("think_time") is not None:
            options["think_time"] = d["think_time"]
    else:
        only = [k for k in ("turns", "think_time") if d.get(k) is not None]
        if only:
            raise ArgumentError(f"{only[0]}={d[only[0]]!r} is not accepted with {kind}: it is for conversations")
    try:
        generated: Requests = getattr(Requests, kind)(*args, **options)
    except ArgumentError as error:  # named by the source the user wrote, as well as the generator's argument
        raise type(error)(f"{kind}={d[kind]!r} is not accepted: {error}") from None
    return generated


def max_model_len(options: dict[str, Any]) -> int:
    """The ``max_model_len`` :func:`~osbench.serve.simulate` runs with, given its options: the
    one given, else the model's, else :class:`EngineConfig`'s default."""
    if options.get("max_model_len") is not None:
        return _checks.positive_int("max_model_len", options["max_model_len"])
    if options.get("model") is not None:
        return Model.preset(options["model"]).max_model_len
    return EngineConfig.max_model_len


class LeftOut(NamedTuple):
    """What :func:`fit` left out: how many requests, and their tokens (prompt and output)."""

    requests: int
    tokens: int
    total_tokens: int
    """The tokens of every request, the left-out ones included."""

    @property
    def token_share(self) -> float:
        """The share of the tokens left out (0 when there were none)."""
        return self.tokens / self.total_tokens if self.total_tokens else 0.0


def fit(requests: Requests, limit: int) -> tuple[Requests, LeftOut]:
    """The requests whose prompt and output fit in ``limit`` tokens, and what was left out."""
    lengths = requests.prompt_len.astype(np.int64) + requests.output_len
    keep = lengths <= limit
    left_out = LeftOut(int(len(requests) - keep.sum()), int(lengths[~keep].sum()), int(lengths.sum()))
    return (requests[keep] if left_out.requests else requests), left_out


def requests(description: dict[str, Any], options: Optional[dict[str, Any]] = None) -> tuple[Requests, LeftOut]:
    """The requests a description names (see the module docstring), and what ``fit`` left
    out. ``options``: the :func:`~osbench.serve.simulate` options of the run, which ``fit``
    reads its ``max_model_len`` from."""
    if not isinstance(description, dict):
        raise ArgumentTypeError(
            f"requests={description!r} is not accepted: give a trace (dataset name or path) or a table with one of "
            f"trace, {', '.join(GENERATORS)}"
        )
    unknown = [k for k in description if k not in KEYS]
    if unknown:
        raise ArgumentError(
            f"{unknown[0]}={description[unknown[0]]!r} is not accepted: requests take {', '.join(KEYS)}"
        )
    sources = [k for k in ("trace", *GENERATORS) if description.get(k) is not None]
    if len(sources) != 1:
        raise ArgumentError(
            f"requests={description!r} is not accepted: name exactly one source, a trace or one of "
            f"{', '.join(GENERATORS)}"
        )
    (kind,) = sources
    if kind == "trace":
        extra = [k for k in KEYS[KEYS.index("prompt_len") : KEYS.index("seed") + 1] if description.get(k) is not None]
        if extra:
            raise ArgumentError(
                f"{extra[0]}={description[extra[0]]!r} is not accepted with a trace: it is for the generators"
            )
        reqs = Requests.read(str(description["trace"]), format=description.get("format"))
    else:
        if description.get("format") is not None:
            raise ArgumentError(f"format={description['format']!r} is not accepted with {kind}: it is for a trace")
        reqs = _generated(kind, description)
    if description.get("limit") is not None:
        reqs = reqs[: _checks.positive_int("limit", description["limit"])]
    left_out = LeftOut(0, 0, 0)
    if description.get("fit"):
        reqs, left_out = fit(reqs, max_model_len(options or {}))
    if description.get("rate") is not None:
        reqs = reqs.at_rate(description["rate"])
    return reqs, left_out


__all__ = [
    "GENERATORS",
    "KEYS",
    "LENGTH_FORMS",
    "LeftOut",
    "fit",
    "generator_default",
    "length",
    "max_model_len",
    "requests",
]
