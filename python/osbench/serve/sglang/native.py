"""SGLang 0.5.23's scheduler on the native engine (``osbench._native.serve_simulate_sglang``:
the core's ``serve/sglang/``, one file per component as here, over the core's radix tree, the
one ``osbench.radix`` runs), under the engine loop every native semantics shares.

Same arguments and the same :class:`~osbench.serve.run.EngineRun` as
:func:`osbench.serve.sglang.stepper.run`, held to it step for step
(``tests/serve/test_sglang_native.py``), with one difference: the step time must be a
:class:`~osbench.serve.StepTime`, whose arithmetic the core repeats bit for bit. The run
releases the GIL and stops on Ctrl-C (``KeyboardInterrupt``).
"""

from __future__ import annotations

import sys
from typing import Any, Optional

from osbench import _native
from osbench.errors import ArgumentTypeError
from osbench.serve.engines import ENGINES
from osbench.serve.requests import Requests
from osbench.serve.run import Concurrency, EngineRun, check_memory, client_options, engine_run
from osbench.serve.sglang.config import EngineConfig
from osbench.serve.sglang.stepper import check_requests
from osbench.serve.steptime import native_step_time

_SETTINGS = ENGINES["sglang"].config_fields
"""The configuration's fields the binding takes, as the core declares them."""


def run(
    requests: Requests,
    config: EngineConfig,
    step_time: Any,
    *,
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
) -> EngineRun:
    """Serve ``requests`` with SGLang 0.5.23's scheduler as ``config`` describes it, natively;
    see :func:`osbench.serve.sglang.stepper.run`. The prompts' tokens are those the reference
    takes (:func:`~osbench.serve.sglang.stepper.prompt_tokens`), passed as the one-token block
    keys they are made from (made in the core for prompts without content)."""
    check_requests(requests, config)
    clients = client_options(concurrency)
    timing = native_step_time(step_time)
    if not isinstance(record, bool):
        raise ArgumentTypeError(f"record={record!r} is not accepted: it must be True or False")
    check_memory(requests, config.running_cap, config.page_size, record)
    keys = offsets = None
    # Prompts without content go keyless: the core makes the keys prompt_block_keys gives them.
    if requests.block_ids is not None:
        keys, offsets = requests.prompt_block_keys(1)
    columns, detail, _ = _native.serve_simulate_sglang(
        {
            "arrival": requests.arrival,
            "prompt_len": requests.prompt_len,
            "output_len": requests.output_len,
            "keys": keys,
            "key_offsets": offsets,
        },
        {"settings": {name: getattr(config, name) for name in _SETTINGS}, **timing},
        {"record": record, "jump": False, **clients},
        # The admission adds the running requests' expected outputs with sum(), which CPython
        # compensates from 3.12 on (as the reference, and SGLang, then do).
        compensated_sum=sys.version_info >= (3, 12),
    )
    return engine_run(columns, detail)


__all__ = ["run"]
