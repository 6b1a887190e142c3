"""Random small workloads and routers for the tests of engines behind routers
(tests/serve/test_cluster.py, test_disagg.py), and their shared helpers."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import osbench as ob
from osbench.errors import ArgumentError
from osbench.serve.config import POLICIES
from osbench.serve.requests import Requests
from osbench.serve.routers import ROUTERS, PrefixAware, Random
from osbench.serve.steptime import StepTime

LINEAR = StepTime.linear(0.0037, 1.3e-5, 7.1e-4, 3.3e-7)


@st.composite
def workloads(draw, max_requests: int = 16):  # type: ignore[no-untyped-def]
    """Small workloads that make things happen: few blocks (preemptions, evictions), tiny
    budgets (chunks), shared prefixes (hits), priorities."""
    n = draw(st.integers(1, max_requests))
    block_size = draw(st.sampled_from([1, 2, 4, 8]))
    prompt = draw(st.lists(st.integers(1, 60), min_size=n, max_size=n))
    output = draw(st.lists(st.integers(1, 20), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.003, 0.05, 1.0]), min_size=n, max_size=n))
    source_block = draw(st.sampled_from([4, 8]))
    content = None
    if draw(st.booleans()):
        alphabet = draw(st.integers(1, 3))
        content = [[draw(st.integers(0, alphabet - 1)) for _ in range(-(-p // source_block))] for p in prompt]
    priority = draw(st.one_of(st.none(), st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    need = max(-(-(p + o - 1) // block_size) for p, o in zip(prompt, output))
    seqs = draw(st.integers(1, 6))
    chunked = draw(st.booleans())
    max_len = max(p + o for p, o in zip(prompt, output))
    cfg = {
        "num_blocks": need + 1 + draw(st.integers(0, 2 * need)),
        "block_size": block_size,
        "max_num_batched_tokens": max(draw(st.integers(seqs, 64)), seqs if chunked else max_len),
        "max_num_seqs": seqs,
        "max_model_len": max_len,
        "enable_chunked_prefill": chunked,
        "enable_prefix_caching": draw(st.booleans()),
        "policy": draw(st.sampled_from(POLICIES)),
    }
    reqs = Requests(np.cumsum(gaps), prompt, output, blocks=content, priority=priority, source_block=source_block)
    return reqs, cfg


def routers() -> st.SearchStrategy:
    """Every router by name, some with other parameters, and a user's rule."""
    return st.one_of(
        st.sampled_from(list(ROUTERS)),
        st.builds(Random, st.integers(0, 2**64 - 1)),
        st.builds(
            PrefixAware,
            st.sampled_from([0.0, 0.3, 0.9]),
            st.integers(0, 3),
            st.sampled_from([1.0, 1.5]),
            st.sampled_from([None, 1, 3]),
        ),
        st.just(lambda request, replicas: (request.index * 7 + request.prompt_len) % len(replicas)),
    )


def run_or_livelock(fn):  # type: ignore[no-untyped-def]
    """``fn()``, or the livelock error it raised (requests tied under priority can preempt
    one another forever, in a cluster as in one engine)."""
    try:
        return fn()
    except ArgumentError as error:
        if "forever" not in str(error):
            raise
        return error


def raw(result: ob.serve.ServeResult, record=None):  # type: ignore[no-untyped-def]
    """A ServeResult's arrays as an engine's run, to compare with one."""
    return ob.serve.EngineRun(
        arrival=np.asarray(result.arrival, dtype=np.float64),
        admitted=result.admitted,
        first_token=result.first_token,
        finish=result.finish,
        preemptions=result.preemptions,
        cached_tokens=result.cached_tokens,
        steps=result.steps,
        record=result.record if record is None else record,
    )
