"""Step time: the linear model, the roofline worked by hand from the presets' numbers, its
regimes (decode memory-bound, prefill compute-bound, MoE reading few experts), and errors."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osbench.serve import GPU, Batch, Model, StepTime
from osbench.serve.steptime import ALLREDUCE_LATENCY, MBU, MFU, OVERHEAD, _power


def decode(n: int, context: int) -> Batch:
    """``n`` requests decoding one token each, ``context`` cached tokens in all."""
    return Batch(n, 0, 0, n, context, context + n)


def prefill(tokens: int) -> Batch:
    """One prompt of ``tokens`` tokens, nothing cached."""
    return Batch(1, 1, tokens, 0, 0, tokens * (tokens + 1) // 2)


def test_batch_new_tokens() -> None:
    assert Batch(3, 1, 100, 2, 50, 0).new_tokens == 102


def test_linear() -> None:
    t = StepTime.linear(0.01, 1e-4, 1e-3, 1e-6)
    assert t(Batch(3, 1, 100, 2, 5000, 0)) == 0.01 + 1e-4 * 100 + 1e-3 * 2 + 1e-6 * 5000
    assert t.spec() == ("linear", (0.01, 1e-4, 1e-3, 1e-6))
    assert t.coefficients == (0.01, 1e-4, 1e-3, 1e-6)
    for bad in (-1.0, float("nan"), float("inf"), True, "1"):
        with pytest.raises(ValueError, match=r"a=.* is not accepted"):
            StepTime.linear(bad, 0, 0, 0)  # type: ignore[arg-type]


def test_roofline_decode_by_hand() -> None:
    # Llama-3-8B on one H100, one request decoding with 1000 tokens cached: memory-bound twice.
    m, g = Model.preset("llama-3-8b"), GPU.preset("h100-sxm")
    t = StepTime.roofline("llama-3-8b", "h100-sxm")
    bandwidth = 3.35e12 * MBU
    weights = (8_030_261_248 - 128_256 * 4096) * 2  # all but the embedding table, bf16
    kv = 131_072 * 1001  # 1000 cached tokens read, one written
    expected = OVERHEAD + weights / bandwidth + kv / bandwidth
    assert math.isclose(t(decode(1, 1000)), expected, rel_tol=1e-12)
    assert 6e-3 < t(decode(1, 0)) < 8e-3  # ~143 tokens/s for one stream
    assert t.params == {"model": "llama-3-8b", "gpu": g.name, "tp": 1, "mfu": MFU, "mbu": MBU, "overhead": OVERHEAD}
    assert m.dtype == "bf16"


def test_roofline_prefill_by_hand() -> None:
    # An 8192-token prompt: the matrix products are compute-bound, as is its attention.
    t = StepTime.roofline("llama-3-8b", "h100-sxm")
    peak = 989.4e12 * MFU
    layers = 8_030_261_248 - 2 * 128_256 * 4096
    linear = (2 * layers * 8192 + 2 * 128_256 * 4096) / peak
    attention = 4 * 32 * 32 * 128 * (8192 * 8193 // 2) / peak
    assert math.isclose(t(prefill(8192)), OVERHEAD + linear + attention, rel_tol=1e-12)
    assert 0.2 < t(prefill(8192)) < 0.4  # ~25k prompt tokens/s


def test_roofline_moe_reads_only_routed_experts() -> None:
    m = Model.preset("mixtral-8x7b")
    t = StepTime.roofline(m, "h100-sxm", tp=1)
    bandwidth = 3.35e12 * MBU
    expert = m.layers * m.mlp_parameters * 2
    dense = (m.parameters - m.embedding_parameters) * 2 - 8 * expert
    # One token goes through 2 of the 8 experts of each layer: 2 expected.
    assert math.isclose(
        t(decode(1, 0)), OVERHEAD + (dense + 2 * expert) / bandwidth + 131_072 / bandwidth, rel_tol=1e-12
    )
    # Two tokens: 8 * (1 - (6/8)**2) = 3.5 experts expected.
    assert math.isclose(
        t(decode(2, 0)), OVERHEAD + (dense + 3.5 * expert) / bandwidth + 2 * 131_072 / bandwidth, rel_tol=1e-12
    )
    # A big batch touches every expert: all the weights once.
    big = t(decode(256, 0)) - OVERHEAD - 256 * 131_072 / bandwidth
    assert math.isclose(big, (dense + 8 * expert) / bandwidth, rel_tol=1e-9)


def test_roofline_tensor_parallel_splits_the_work() -> None:
    one = StepTime.roofline("llama-3-8b", "h100-sxm", tp=1, overhead=0)
    two = StepTime.roofline("llama-3-8b", "h100-sxm", tp=2, overhead=0)
    for b in (decode(64, 64_000), prefill(4096)):
        # Half the work on each GPU, plus two all-reduces per layer of each new token's hidden state:
        # a ring all-reduce over 2 GPUs sends half the 8 KiB message over the 450 GB/s NVLink.
        allreduce = 2 * 32 * (ALLREDUCE_LATENCY + 0.5 * 2 * b.new_tokens * 4096 * 2 / 450e9)
        assert math.isclose(two(b), one(b) / 2 + allreduce, rel_tol=1e-9)
    assert StepTime.roofline("llama-3-70b", "h100-sxm").params["tp"] == 4
    assert StepTime.roofline(model="llama-3-8b", gpu="h100-sxm", tp=2) == StepTime.roofline("llama-3-8b", "h100-sxm", 2)


def test_roofline_counts_the_norms_all_reduces() -> None:
    # MiniMax-M2.5's q/k norms across heads add two all-reduces a layer of one float32 a token
    # (the roofline's all-reduce terms: fixed seconds per step, seconds per new token)
    m = Model.preset("minimax-m2.5")
    per_head = dataclasses.replace(m, qk_norm_across_heads=False)
    four, alone = StepTime.roofline(m, "h200", tp=4), StepTime.roofline(per_head, "h200", tp=4)
    link = GPU.preset("h200").link_bandwidth
    fixed, per_token = (four.coefficients[i] - alone.coefficients[i] for i in (11, 12))
    assert math.isclose(fixed, 2 * m.layers * ALLREDUCE_LATENCY, rel_tol=1e-12)
    assert math.isclose(per_token, 2 * m.layers * (2 * 3 / 4) * 4 / link, rel_tol=1e-9)
    one = StepTime.roofline(m, "h200", tp=1)
    assert one.coefficients[11] == one.coefficients[12] == 0.0  # on one GPU: nothing to reduce


def test_roofline_spec_gives_the_same_times() -> None:
    t = StepTime.roofline("qwen2.5-7b", "l40s", mfu=0.4, mbu=0.8, overhead=2e-3)
    kind, coefficients = t.spec()
    assert kind == "roofline" and len(coefficients) == 13 and all(isinstance(c, float) for c in coefficients)
    again = StepTime(kind, coefficients)
    for b in (decode(1, 0), decode(100, 123_456), prefill(3000), Batch(5, 2, 777, 3, 9999, 123_456)):
        assert again(b) == t(b)  # bit-equal: the same operations in the same order
    assert t.to_dict()["coefficients"] == list(coefficients)


@settings(max_examples=200, deadline=None)
@given(
    base=st.tuples(*[st.integers(0, 10_000)] * 4),
    extra=st.sampled_from(["prefill_tokens", "decode_seqs", "context_tokens", "attention_pairs"]),
    name=st.sampled_from(["llama-3-8b", "mixtral-8x7b"]),
)
def test_more_work_never_takes_less_time(base: tuple[int, int, int, int], extra: str, name: str) -> None:
    prefill_tokens, decode_seqs, context, pairs = base
    b = Batch(decode_seqs + 1, 1, prefill_tokens, decode_seqs, context, pairs)
    more = Batch(**{**b.__dict__, extra: getattr(b, extra) + 1000})
    t = StepTime.roofline(name, "a100-80gb", tp=2)
    assert t(more) >= t(b) > 0


@settings(max_examples=100, deadline=None)
@given(x=st.floats(0, 1), n=st.integers(0, 10_000))
def test_power_by_squaring(x: float, n: int) -> None:
    assert math.isclose(_power(x, n), x**n, rel_tol=1e-12, abs_tol=1e-300)


def test_roofline_errors() -> None:
    for name, kwargs in (
        ("mfu", {"mfu": 0}),
        ("mfu", {"mfu": 1.5}),
        ("mbu", {"mbu": float("nan")}),
        ("overhead", {"overhead": -1}),
        ("overhead", {"overhead": float("inf")}),
    ):
        with pytest.raises(ValueError, match=f"{name}=.* is not accepted"):
            StepTime.roofline("llama-3-8b", "h100-sxm", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tp=5 is not accepted for llama-3-8b"):
        StepTime.roofline("llama-3-8b", "h100-sxm", tp=5)
    with pytest.raises(ValueError, match="model='llama-2' is not accepted"):
        StepTime.roofline("llama-2", "h100-sxm")
    with pytest.raises(ValueError, match="kind='cubic' is not accepted"):
        StepTime("cubic", (1.0,))
    with pytest.raises(ValueError, match="a linear model has 4, got 2"):
        StepTime("linear", (1.0, 2.0))
