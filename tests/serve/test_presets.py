"""The presets added for the measured step time: parameter counts against the model cards, the
FP8 option, the GPUs' datasheet figures, and the 128k default model."""

from __future__ import annotations

import pytest

from osbench.serve import GPUS, MODELS, Model
from osbench.serve.models import DEFAULT_MODEL, MIB


@pytest.mark.parametrize(
    ("name", "parameters", "active", "published", "published_active"),
    [
        ("llama-3.1-8b", 8_030_261_248, 8_030_261_248, 8.03e9, 8.03e9),
        ("llama-3.1-70b", 70_553_706_496, 70_553_706_496, 70.6e9, 70.6e9),
        ("qwen3-14b", 14_768_307_200, 14_768_307_200, 14.8e9, 14.8e9),
        ("qwen3-32b", 32_762_123_264, 32_762_123_264, 32.8e9, 32.8e9),
        ("qwen3-30b-a3b", 30_532_122_624, 3_353_032_704, 30.5e9, 3.3e9),
        ("qwen3-235b-a22b", 235_093_634_560, 22_190_763_520, 235e9, 22e9),
    ],
)
def test_parameter_counts_match_the_model_cards(
    name: str, parameters: int, active: int, published: float, published_active: float
) -> None:
    m = Model.preset(name)
    assert (m.parameters, m.active_parameters) == (parameters, active)
    # the cards round to three significant figures (Qwen3-235B-A22B's to two or three)
    assert abs(m.parameters / published - 1) < 0.005 and abs(m.active_parameters / published_active - 1) < 0.05


def test_non_embedding_counts_of_qwen3() -> None:
    # Qwen3-14B's card: "Number of Parameters (Non-Embedding): 13.2B"; Qwen3-32B's: 31.2B
    for name, published in (("qwen3-14b", 13.2), ("qwen3-32b", 31.2)):
        m = Model.preset(name)
        assert round((m.parameters - m.embedding_parameters - m.lm_head_parameters) / 1e9, 1) == published


def test_the_default_model_serves_128k_contexts() -> None:
    assert MODELS[DEFAULT_MODEL].max_model_len == 131_072 == MODELS["llama-3.1-70b"].max_model_len


def test_fp8_is_an_option_of_every_model() -> None:
    for name, m in MODELS.items():
        f = Model.preset(f"{name}-FP8")
        if m.dtype == "fp8":  # released in FP8 (MiniMax-M2.5): the option is the preset itself
            assert f is m and m.fp8() is m
            continue
        assert f == m.fp8() and f.name == f"{name}-fp8" and f.dtype == "fp8" and f.fp8() is f
        assert f.kv_bytes_per_token(1) == m.kv_bytes_per_token(1)  # the KV cache stays bf16
        # about half the bytes: the embedding table and the output projection stay bf16
        unquantised = m.embedding_parameters + m.lm_head_parameters
        apart = m.layers * m.experts * m.mlp_parameters if m.expert_dtype else 0  # gpt-oss's MXFP4 experts stay
        assert f.weight_bytes(1) == m.weight_bytes(1) - (m.parameters - unquantised - apart)
    with pytest.raises(ValueError, match="any of them with '-fp8'"):
        Model.preset("gpt-5-fp8")


def test_gpu_datasheet_figures() -> None:
    pro, work = GPUS["rtx-pro-6000"], GPUS["rtx-pro-6000-workstation"]
    assert (pro.bf16_flops, pro.fp8_flops, pro.bandwidth) == (500e12, 1000e12, 1597e9)
    assert work.bandwidth == 1792e9 and work.bf16_flops == pro.bf16_flops
    assert pro.memory_bytes == 97_887 * MIB  # AIConfigurator's measurement node
    g = GPUS["rtx-4090"]
    assert (g.bf16_flops, g.fp8_flops, g.bandwidth, g.memory_bytes) == (165.2e12, 330.3e12, 1008e9, 24_564 * MIB)
    b = GPUS["b200"]
    assert (b.bf16_flops * 8 * 2, b.fp8_flops * 8 * 2, b.bandwidth * 8) == (36e15, 72e15, 64e12)  # the HGX figures


def test_presets_fitting_a_request() -> None:
    from osbench.serve.models import presets_fitting

    assert presets_fitting(100_000) == ["llama-3.1-8b", "llama-3.1-70b", "gpt-oss-120b", "minimax-m2.5"]  # 128k up
    assert "qwen3-32b" in presets_fitting(40_000) and "llama-3-8b" not in presets_fitting(9_000)
    assert presets_fitting(200_000) == []
