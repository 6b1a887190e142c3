"""The measured step time: the tables read back at their own points, the interpolation and
extrapolation rules, the composition of a step, the errors, and the native core bit-equal to the
reference on random steps. Needs pyarrow and the AIConfigurator datasets (skips without them,
fails under CI=1)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import fields

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osbench.serve import GPU, Batch, Model, StepTime, kernels, measured, native, reference, simulate
from osbench.serve.config import EngineConfig
from osbench.serve.requests import Requests
from osbench.serve.run import batch_of
from osbench.serve.steptime import StepWork


@pytest.fixture(scope="module")
def have_tables(measured_tables: None) -> None:
    """pyarrow and the H100 and H200 tables (tests/serve/conftest.py)."""


@pytest.fixture(scope="module")
def qwen(have_tables: None) -> StepTime:
    return StepTime.measured("qwen3-32b", "h100", tp=2)


@pytest.fixture(scope="module")
def gpt_oss(have_tables: None) -> StepTime:
    """A model with sliding-window layers and MXFP4 experts."""
    return StepTime.measured("gpt-oss-120b", "h100", tp=2)


def decode(n: int, context: int) -> StepWork:
    return StepWork.of([(1, context, 1)] * n)


def test_step_work_is_the_engines_batch_with_the_prefill_chunks_apart() -> None:
    work = [(100, 0, 300), (1, 50, 1), (64, 128, 64), (1, 7, 1), (1, 9, 2)]
    w = StepWork.of(work)
    assert Batch(*(getattr(w, f.name) for f in fields(Batch))) == batch_of(work)
    # a request with two tokens outstanding is a prefill even when one is scheduled
    assert w.prefill_chunks == ((100, 0), (64, 128), (1, 9)) and w.prefill_context_tokens == 137
    assert w.context_tokens == 194


def test_the_tables_read_back_at_their_own_points(have_tables: None) -> None:
    t = kernels.tables("H100-SXM5-80GB")
    g = t.gemm["bfloat16"]
    i, j, k = 40, 12, 12  # m=1024, n=k=4096
    got = kernels.gemm_curve(t, "bf16", int(g.n[j]), int(g.k[k]), np.asarray([g.m[i]], dtype=np.float64))
    assert math.isclose(float(got[0]), g.latency[i, j, k], rel_tol=1e-12)
    grid = kernels.attention_grid(t, "generation", 32, 4, 128, "bf16")
    rows, cols, values = grid.rows.tolist(), grid.cols.tolist(), grid.values.ravel().tolist()
    assert kernels.bilinear(rows, cols, values, rows[3], cols[5]) == grid.values[3, 5]
    # midway between two measured lengths: the mean of the two (linear in context)
    mid = kernels.bilinear(rows, cols, values, rows[3], (cols[5] + cols[6]) / 2)
    assert math.isclose(mid, (grid.values[3, 5] + grid.values[3, 6]) / 2, rel_tol=1e-12)
    assert t.version == "0.24.0" and t.gpu == "h100_sxm"


def test_extrapolation_rules(have_tables: None) -> None:
    t = kernels.tables("H100-SXM5-80GB")
    g = t.gemm["bfloat16"]
    wide = kernels.gemm_curve(t, "bf16", 2 * 65536, 4096, np.asarray([64.0]))
    assert math.isclose(float(wide[0]), 2 * float(kernels.gemm_curve(t, "bf16", 65536, 4096, np.asarray([64.0]))[0]))
    grid = kernels.attention_grid(t, "context", 32, 4, 128, "bf16")
    rows, cols, values = grid.rows.tolist(), grid.cols.tolist(), grid.values.ravel().tolist()
    # twice the largest measured batch: twice its time
    assert kernels.bilinear(rows, cols, values, 2 * rows[-1], cols[4]) == 2 * grid.values[-1, 4]
    # the collector's holes and the lengths beyond it are filled in proportion to the work
    assert not np.isnan(grid.values).any() and (grid.values > 0).all()
    assert g.m[-1] == 32_768


def test_errors(have_tables: None) -> None:
    # refused under the name the caller gave: the preset's key, or the GPU's own name for a GPU
    with pytest.raises(ValueError, match=r"gpu='a100-80gb' is not accepted.*h100, h100-sxm, h200, rtx-pro-6000"):
        StepTime.measured("llama-3.1-8b", "a100-80gb")
    with pytest.raises(ValueError, match=r"gpu='A100-SXM4-80GB' is not accepted"):
        StepTime.measured("llama-3.1-8b", GPU.preset("a100-80gb"))
    assert StepTime.measured("llama-3.1-8b", "H100").params["tables"] == "h100_sxm"  # keys in any case
    # the tables are found by a preset's key as well as by the GPU's name; a key without tables
    # is refused under the key the caller gave
    assert kernels.tables("h200") is kernels.tables(GPU.preset("h200").name)
    with pytest.raises(ValueError, match=r"gpu='b200' is not accepted.*h100, h100-sxm, h200, rtx-pro-6000"):
        kernels.tables("b200")
    with pytest.raises(ValueError, match="heads=6, kv_heads=1, head_dim=64 per GPU is not accepted"):
        kernels.attention_grid(kernels.tables("H100-SXM5-80GB"), "context", 6, 1, 64, "fp8")
    with pytest.raises(ValueError, match="k=70000 is not accepted: the GEMM table of h100_sxm measures"):
        kernels.gemm_curve(kernels.tables("H100-SXM5-80GB"), "bf16", 4096, 70000, np.asarray([1.0]))
    with pytest.raises(ValueError, match="engine='sglang' is not accepted"):
        StepTime.measured("qwen3-32b", "h100", engine="sglang")
    t = StepTime.measured("llama-3.1-8b", "h100")
    with pytest.raises(ValueError, match="tokens=40000 is not accepted by the measured step time"):
        t(StepWork.of([(40000, 0, 40000)]))
    # an engine Batch with prefills cannot be priced without its chunks
    with pytest.raises(ValueError, match="give a StepWork"):
        t(batch_of([(100, 50, 300), (1, 10, 1)]))
    with pytest.raises(ValueError, match="give a StepWork"):
        t(batch_of([(100, 0, 300)]))
    assert t(batch_of([(1, 10, 1)])) == t(StepWork.of([(1, 10, 1)]))  # decode only: exact
    w = StepWork.of([(100, 50, 300), (1, 10, 1)])
    for chunks in ((), ((100, 50), (1, 0)), ((99, 50),), ((100, 61),)):
        bad = StepWork(*(getattr(w, f.name) for f in fields(Batch)), prefill_chunks=chunks)
        with pytest.raises(ValueError, match=r"prefill_chunks=.* is not accepted"):
            t(bad)
        assert t.tables is not None
        with pytest.raises(ValueError, match="prefill_chunks"):
            measured.native_seconds(t.tables, [bad])


def test_a_step_composed_by_hand(qwen: StepTime) -> None:
    tables = qwen.tables
    assert tables is not None
    w = decode(32, 1023)
    gen = kernels.attention_grid(kernels.tables("H100-SXM5-80GB"), "generation", 32, 4, 128, "bf16")
    row, col = list(gen.rows).index(32.0), list(gen.cols).index(1023.0)
    expected = tables.host_step + tables.tokens[32] + tables.seqs[32] + 64 * gen.values[row, col]
    assert math.isclose(qwen(w), expected, rel_tol=1e-12)
    # a chunk over a cached prefix computes its own rows of the attention matrix: fewer pairs
    # than a whole prompt of that length, more than a prompt of the chunk alone
    chunk = StepWork.of([(1024, 1024, 1024)])
    whole = StepWork.of([(2048, 0, 2048)])
    alone = StepWork.of([(1024, 0, 1024)])
    assert qwen(alone) < qwen(chunk) < qwen(whole)


def test_the_host_terms_are_the_callers(qwen: StepTime) -> None:
    # host_step replaces the per-step constant, host_request the per-request one; nothing else moves
    tables = qwen.tables
    assert tables is not None
    t = StepTime.measured("qwen3-32b", "h100", tp=2, host_step=1e-3, host_request=50e-6)
    assert t.tables is not None and t.tables.host_step == 1e-3 == t.coefficients[0]
    assert np.allclose(t.tables.seqs - tables.seqs, (50e-6 - measured.HOST_PER_REQUEST) * np.arange(len(tables.seqs)))
    assert np.array_equal(t.tables.tokens, tables.tokens) and t.params["host_request"] == 50e-6
    w = decode(32, 1023)
    assert math.isclose(t(w) - qwen(w), (1e-3 - tables.host_step) + 32 * (50e-6 - measured.HOST_PER_REQUEST))
    for name in ("host_step", "host_request"):
        with pytest.raises(ValueError, match=f"{name}=-1 is not accepted"):
            StepTime.measured("qwen3-32b", "h100", tp=2, **{name: -1})


def test_each_prefill_chunk_is_priced_over_its_own_context(qwen: StepTime) -> None:
    """A chunk of n tokens over c cached ones: the context table at (P chunks, c + n) over P,
    times its causal pairs over those of a whole prompt of c + n tokens (by hand here)."""
    tables = qwen.tables
    assert tables is not None
    ctx = kernels.attention_grid(kernels.tables("H100-SXM5-80GB"), "context", 32, 4, 128, "bf16")
    rows, cols = list(ctx.rows), list(ctx.cols)
    assert 2.0 in rows and 1024.0 in cols and 4096.0 in cols
    work = [(512, 512, 600), (1024, 3072, 1024)]  # contexts 1024 and 4096, both measured lengths
    w = StepWork.of(work)
    expected = tables.host_step + tables.tokens[512 + 1024] + tables.seqs[2]
    for (n, c), s in zip(w.prefill_chunks, (1024, 4096)):
        cell = 64 * ctx.values[rows.index(2.0), cols.index(float(s))]
        expected += cell / 2 * ((n * c + n * (n + 1) // 2) / (s * (s + 1) / 2))
    assert math.isclose(qwen(w), expected, rel_tol=1e-12)
    # P whole prompts of one length cost the table's (P, s) exactly
    whole = StepWork.of([(1024, 0, 1024)] * 2)
    only = (
        tables.host_step + tables.tokens[2048] + tables.seqs[2] + 64 * ctx.values[rows.index(2.0), cols.index(1024.0)]
    )
    assert math.isclose(qwen(whole), only, rel_tol=1e-12)
    # the same tokens with the contexts told apart differ from their mean: a long context is
    # priced at its own length (attention grows with it), not at the batch's average
    mean = StepWork.of([(512, 1792, 600), (1024, 1792, 1024)])
    assert qwen(w) != qwen(mean)
    assert qwen.params["tables"] == "h100_sxm" and qwen.params["vllm"] == "0.24.0"


def test_tensor_parallel_pays_its_all_reduces(have_tables: None) -> None:
    one = StepTime.measured("llama-3.1-8b", "h100", tp=1)
    two = StepTime.measured("llama-3.1-8b", "h100", tp=2)
    assert one.tables is not None and two.tables is not None
    # half the weights per GPU, but two all-reduces per layer: at one token the step is not halved
    assert two.tables.tokens[1] > one.tables.tokens[1] / 2


def test_norms_across_heads_pay_their_all_reduces(have_tables: None) -> None:
    # MiniMax-M2.5's q and k norms all-reduce one float32 a token each, per layer, under tp
    m = Model.preset("minimax-m2.5")
    four = StepTime.measured(m, "h200", tp=4)
    per_head = StepTime.measured(dataclasses.replace(m, qk_norm_across_heads=False), "h200", tp=4)
    assert four.tables is not None and per_head.tables is not None
    t = kernels.tables("h200")
    count = np.arange(1, len(four.tables.tokens), dtype=np.float64)
    norms = 2 * kernels.allreduce_curve(t, 4, count * 2, count <= measured.CUDA_GRAPH_MAX_TOKENS)
    # the two differ by those all-reduces and the q/k norms' elementwise bytes (the same here)
    assert np.allclose(four.tables.tokens[1:] - per_head.tables.tokens[1:], m.layers * norms, rtol=1e-9)
    one = StepTime.measured(m, "h200", tp=1)
    alone = StepTime.measured(dataclasses.replace(m, qk_norm_across_heads=False), "h200", tp=1)
    assert one.tables is not None and alone.tables is not None
    assert np.array_equal(one.tables.tokens, alone.tables.tokens)  # on one GPU: nothing to reduce


def test_block_fp8_weights_read_the_graph_timed_fp8_table(have_tables: None) -> None:
    # The fp8_block GEMM rows are timed eagerly: a floor of about 57 us however small the GEMM,
    # which CUDA graphs do not pay; where the GPU's work dominates, the two tables agree
    t = kernels.tables("h200")
    block, tensor = t.gemm["fp8_block"], t.gemm["fp8"]
    n, k = list(block.n).index(2048), list(block.k).index(3072)
    assert 50e-6 < block.latency[0, n, k] < 70e-6 and tensor.latency[0, n, k] < 12e-6
    big = list(block.n).index(8192), list(block.k).index(8192)
    assert 0.9 < block.latency[-1, big[0], big[1]] / tensor.latency[-1, big[0], big[1]] < 1.2
    m = Model.preset("minimax-m2.5")
    blocked = StepTime.measured(m, "h200", tp=4)
    per_tensor = StepTime.measured(dataclasses.replace(m, fp8_block=False), "h200", tp=4)
    assert blocked.tables is not None and per_tensor.tables is not None
    # the linear layers read one table; the experts read the MoE table's block-scaled rows in both
    assert np.array_equal(blocked.tables.tokens, per_tensor.tables.tokens)
    assert measured._moe_key(t, m, 4)[0] == "fp8_block"
    # an expert layer the table does not time at this tp is refused, and the validation skips it
    assert measured.moe_measured(m, GPU.preset("h200"), 4) and not measured.moe_measured(m, GPU.preset("h200"), 8)
    with pytest.raises(ValueError, match=r"moe_tp=8 is not accepted on h200_sxm"):
        StepTime.measured(m, "h200", tp=8)


def test_moe_reads_the_moe_table(have_tables: None) -> None:
    t = StepTime.measured("qwen3-30b-a3b", "h100")
    assert t(decode(8, 500)) > 0 and t(StepWork.of([(4096, 0, 4096)])) > t(decode(8, 500))


def test_sliding_window_layers_read_their_own_grids(gpt_oss: StepTime) -> None:
    """gpt-oss: 18 full-attention layers over every key, 18 windowed ones over at most 128 (by
    hand: the tables' cells times each kind's layers); its experts from the MXFP4 MoE table."""
    tables = gpt_oss.tables
    assert tables is not None and [(a.window) for a in tables.attention] == [0, 128]
    t = kernels.tables("H100-SXM5-80GB")
    full, windowed = (kernels.attention_grid(t, "generation", 32, 4, 64, "bf16", w) for w in (0, 128))
    row, col = list(full.rows).index(16.0), list(full.cols).index(4095.0)
    w = decode(16, 4095)
    expected = tables.host_step + tables.tokens[16] + tables.seqs[16]
    expected += 18 * full.values[row, col] + 18 * windowed.values[row, col]
    assert math.isclose(gpt_oss(w), expected, rel_tol=1e-12)
    # a windowed decode reads the same keys at any length past the window, a full one more
    assert windowed.values[row, col] < full.values[row, col]
    # a prompt's windowed pairs are the same however it is chunked: s tokens, min(i, 128) keys each
    assert kernels.prefill_pairs(3000, 0, 128) == kernels.prefill_pairs(1000, 0, 128) + kernels.prefill_pairs(
        2000, 1000, 128
    )
    assert kernels.prefill_pairs(3000, 0, 128) == 128 * 129 // 2 + (3000 - 128) * 128
    assert kernels.prefill_work(3000.0, 128) == kernels.prefill_pairs(3000, 0, 128)
    assert kernels.prefill_pairs(1024, 1024, 0) == 1024 * 1024 + 1024 * 1025 // 2
    assert measured._moe_key(t, Model.preset("gpt-oss-120b"), 2)[0] == "w4a16_mxfp4"
    # the MoE table's MXFP4 rows are gpt-oss's shape; a tp they do not measure is refused by name
    with pytest.raises(ValueError, match=r"model shape \(2880, 2880, 4, 128\) .* moe_tp=3 is not accepted"):
        kernels.moe_curve(t, ("w4a16_mxfp4", 2880, 2880, 4, 128, 3), np.arange(1.0, 3.0))


def test_marlin_is_carried_from_the_shape_the_tables_time_it_on(gpt_oss: StepTime) -> None:
    t = kernels.tables("H100-SXM5-80GB")
    source = ("w4a16_mxfp4", *kernels.MARLIN_MXFP4_SHAPE, 2)
    tokens, seconds = t.moe[source]
    # carried to its own shape, the kernel reads back its own measurements
    assert np.allclose(kernels.moe_carried_curve(t, source, source[1:], tokens), seconds, rtol=1e-12)
    # on gpt-oss's shape: faster than the Triton kernel at decode sizes, slower at prefill sizes
    shape = (2880, 2880, 4, 128, 2)
    at = np.array([1.0, 4.0, 16.0, 4096.0, 8192.0])
    marlin, triton = kernels.moe_carried_curve(t, source, shape, at), kernels.moe_curve(t, ("w4a16_mxfp4", *shape), at)
    assert (marlin[:3] < triton[:3]).all() and (marlin[3:] > 2 * triton[3:]).all()
    m = StepTime.measured("gpt-oss-120b", "h100", tp=2, mxfp4_moe="marlin")
    assert m.params["mxfp4_moe"] == "marlin" and m(decode(4, 1500)) < gpt_oss(decode(4, 1500))
    assert m(StepWork.of([(8192, 0, 8192)])) > gpt_oss(StepWork.of([(8192, 0, 8192)]))
    with pytest.raises(ValueError, match="mxfp4_moe='marlin' is not accepted for qwen3-30b-a3b"):
        StepTime.measured("qwen3-30b-a3b", "h100", mxfp4_moe="marlin")
    with pytest.raises(ValueError, match="mxfp4_moe='cutlass' is not accepted"):
        StepTime.measured("gpt-oss-120b", "h100", mxfp4_moe="cutlass")
    with pytest.raises(ValueError, match="is not accepted on h100_sxm: its MoE table does not measure it"):
        kernels.moe_carried_curve(t, ("w4a16_mxfp4", 1, 1, 1, 1, 1), shape, at)


def test_the_cuda_graph_size_is_the_callers(gpt_oss: StepTime) -> None:
    # InferenceMAX's gpt-oss servers capture steps up to 2,048 tokens: their all-reduces in the
    # graph; a step past 512 is cheaper so, and a small one the same
    big = StepTime.measured("gpt-oss-120b", "h100", tp=2, cuda_graph_tokens=2048)
    assert big.tables is not None and gpt_oss.tables is not None and big.params["cuda_graph_tokens"] == 2048
    assert (
        big.tables.tokens[1024] < gpt_oss.tables.tokens[1024] and big.tables.tokens[256] == gpt_oss.tables.tokens[256]
    )
    with pytest.raises(ValueError, match="cuda_graph_tokens=-1 is not accepted"):
        StepTime.measured("gpt-oss-120b", "h100", tp=2, cuda_graph_tokens=-1)


@settings(max_examples=60, deadline=None)
@given(
    work=st.lists(
        st.tuples(st.integers(1, 3000), st.integers(0, 140_000), st.booleans()).map(
            lambda x: (x[0], x[1], x[0] + 1) if x[2] else (1, x[1] + 1, 1)
        ),
        min_size=1,
        max_size=40,
    ).filter(lambda w: sum(n for n, _, _ in w) <= 32_768)
)
def test_native_equals_reference_bit_for_bit(
    qwen: StepTime, gpt_oss: StepTime, work: list[tuple[int, int, int]]
) -> None:
    w = StepWork.of(work)
    for t in (qwen, gpt_oss):  # full attention; full and sliding-window layers
        assert t.tables is not None
        assert measured.native_seconds(t.tables, [w])[0] == t(w)


@st.composite
def served(draw):  # type: ignore[no-untyped-def]
    """Workloads whose prompts are chunked over cached prefixes (tiny budgets, shared content,
    preemption by recompute under a small pool), with decode-only stretches for the jump."""
    n = draw(st.integers(1, 12))
    prompt = draw(st.lists(st.integers(1, 3000), min_size=n, max_size=n))
    output = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.002, 0.05, 2.0]), min_size=n, max_size=n))
    content = [[draw(st.integers(0, 1)) for _ in range(-(-p // 256))] for p in prompt]
    block_size = draw(st.sampled_from([16, 64]))
    need = max(-(-(p + o) // block_size) for p, o in zip(prompt, output))
    cfg = EngineConfig(
        num_blocks=need + 1 + draw(st.integers(0, 3 * need)),
        block_size=block_size,
        max_num_batched_tokens=draw(st.sampled_from([64, 512, 2048, 8192])),
        max_num_seqs=draw(st.integers(1, 8)),
        max_model_len=4096,
        enable_chunked_prefill=True,
        enable_prefix_caching=draw(st.booleans()),
    )
    return Requests(np.cumsum(gaps), prompt, output, blocks=content, source_block=256), cfg


@settings(max_examples=40, deadline=None)
@given(
    served(),
    st.sampled_from(
        [
            ("qwen3-32b", "h100", 2),
            ("llama-3.1-8b", "h200", 1),
            ("gpt-oss-120b", "h200", 4),
            ("minimax-m2.5", "h200", 4),
        ]
    ),
)
def test_the_native_engine_runs_the_measured_model_as_the_reference(have_tables: None, workload, target) -> None:  # type: ignore[no-untyped-def]
    reqs, cfg = workload
    step_time = StepTime.measured(*target)
    ours = reference.run(reqs, cfg, step_time, record=True)
    for jump in (True, False):
        theirs = native.run(reqs, cfg, step_time, record=True, jump=jump)
        for f in fields(ours.steps):
            assert np.array_equal(getattr(ours.steps, f.name), getattr(theirs.steps, f.name)), f.name
        for name in ("admitted", "first_token", "finish", "preemptions", "cached_tokens"):
            assert np.array_equal(getattr(ours, name), getattr(theirs, name), equal_nan=True), name


def test_simulate_takes_the_measured_model_on_both_engines(have_tables: None) -> None:
    reqs = Requests.poisson(60, rate=20.0, seed=3)
    step_time = StepTime.measured("llama-3.1-8b", "h100")
    a = simulate(reqs, model="llama-3.1-8b", gpu="h100", step_time=step_time, engine="native")
    b = simulate(reqs, model="llama-3.1-8b", gpu="h100", step_time=step_time, engine="reference")
    assert np.array_equal(a.ttft, b.ttft) and np.array_equal(a.e2e, b.e2e)
    assert (a.steps.prefill_seqs > 0).any() and np.isfinite(a.ttft).all()


def test_a_step_beyond_the_tables_is_refused_by_both_engines(have_tables: None) -> None:
    reqs = Requests(np.zeros(3), [20000, 20000, 20000], [5, 5, 5])
    step_time = StepTime.measured("llama-3.1-8b", "h100")
    for engine in ("native", "reference"):
        with pytest.raises(ValueError, match=r"tokens=60000 is not accepted.*32768.*max_num_batched_tokens"):
            simulate(
                reqs,
                model="llama-3.1-8b",
                gpu="h100",
                step_time=step_time,
                engine=engine,
                max_num_batched_tokens=60000,
                max_num_seqs=8,
            )
