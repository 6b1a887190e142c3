"""Model and GPU presets: parameter counts and KV bytes against the model cards, the KV pool
against vLLM's own log, lookups and errors."""

from __future__ import annotations

import dataclasses

import pytest

from osbench.serve import GPU, GPUS, MODELS, Model, num_blocks
from osbench.serve.models import GIB, GPU_MEMORY_UTILIZATION, RESERVE_BYTES


@pytest.mark.parametrize(
    ("name", "parameters", "active", "published"),
    [
        # the model cards' counts as they print them (Qwen's 7.61B is 7.6156B cut, not rounded)
        ("llama-3-8b", 8_030_261_248, 8_030_261_248, 8.03e9),
        ("llama-3-70b", 70_553_706_496, 70_553_706_496, 70.6e9),
        ("qwen2.5-7b", 7_615_616_512, 7_615_616_512, 7.61e9),
        ("mixtral-8x7b", 46_702_792_704, 12_879_925_248, 46.7e9),
    ],
)
def test_parameter_counts_match_the_model_cards(name: str, parameters: int, active: int, published: float) -> None:
    m = Model.preset(name)
    assert m.parameters == parameters and m.active_parameters == active
    assert abs(m.parameters - published) < (0.01e9 if published < 10e9 else 0.1e9)


def test_gpt_oss_matches_its_model_card() -> None:
    # "gpt-oss-120b: 116.83B total parameters, 5.13B active" (OpenAI's model card; the active count
    # leaves out the embedding table), every bias and sink of its config counted
    m = Model.preset("gpt-oss-120b")
    assert m.parameters == 116_829_156_672 and round(m.parameters / 1e9, 2) == 116.83
    assert round((m.active_parameters - m.embedding_parameters) / 1e9, 2) == 5.13
    # MXFP4 experts (4.25 bits a weight) and bf16 for the rest: 60.7 GiB, one 80 GB GPU holds it
    experts = m.layers * m.experts * m.mlp_parameters
    assert m.weight_bytes() == 2 * (m.parameters - experts) + -(-experts * 17 // 32)
    assert round(m.weight_bytes() / GIB, 1) == 60.7 and m.weight_bytes(2) == -(-m.weight_bytes() // 2)
    # only the 18 full-attention layers keep every token's KV (the windowed ones: a bounded few)
    assert m.full_attention_layers == 18 and m.kv_bytes_per_token() == 2 * 18 * 8 * 64 * 2
    assert m.kv_bytes_per_token(8) == 2 * 18 * 1 * 64 * 2
    # with FP8 weights the experts stay MXFP4: the rest of the weights halve
    f = Model.preset("gpt-oss-120b-fp8")
    assert (
        f.expert_dtype == "mxfp4"
        and m.weight_bytes() - f.weight_bytes() == m.parameters - experts - 2 * m.vocab_size * 2880
    )


def test_minimax_m2_5_is_its_config() -> None:
    # MiniMax-M2.5 (config.json as AIConfigurator ships it): 62 layers, 48 heads over 8 KV heads of
    # 128, 256 experts of 1,536 with 8 a token; "230B total, 10B active" on its model card
    m = Model.preset("minimax-m2.5")
    assert m.parameters == 228_689_748_992 and round(m.parameters / 1e9) == 229
    assert round((m.active_parameters - m.embedding_parameters) / 1e9, 1) == 10.4
    # released in FP8 blocks: the -fp8 option is the preset itself; bf16 embeddings and LM head
    assert m.dtype == "fp8" and m.fp8_block and Model.preset("minimax-m2.5-fp8") is m.fp8() is m
    unquantised = m.embedding_parameters + m.lm_head_parameters
    assert m.weight_bytes(1) == (m.parameters - unquantised) + 2 * unquantised  # 230 GB: four 80 GB GPUs
    # its q and k norms span every head of the layer: a weight per element, and two all-reduces
    assert m.norm_parameters == 2 * 3072 + (48 + 8) * 128 and m.norm_allreduces == 2
    assert (
        Model.preset("qwen3-32b").norm_allreduces == 0 and Model.preset("qwen3-32b").norm_parameters == 2 * 5120 + 256
    )


def test_contradictory_norm_and_scale_fields_are_refused() -> None:
    m = Model.preset("minimax-m2.5")
    with pytest.raises(ValueError, match="qk_norm_across_heads=True is not accepted with qk_norm=False"):
        dataclasses.replace(m, qk_norm=False)
    with pytest.raises(ValueError, match="fp8_block=True is not accepted with dtype='bf16'"):
        dataclasses.replace(m, dtype="bf16")


def test_published_details() -> None:
    qwen = Model.preset("qwen2.5-7b")
    assert (
        round((qwen.parameters - qwen.embedding_parameters - qwen.lm_head_parameters) / 1e9, 2) == 6.53
    )  # non-embedding
    assert round(Model.preset("mixtral-8x7b").active_parameters / 1e9, 1) == 12.9  # "12.9B active parameters per token"


@pytest.mark.parametrize(
    ("name", "tp", "kv_bytes"),
    [
        ("llama-3-8b", 1, 131_072),  # 2 * 32 layers * 8 KV heads * 128 * 2 bytes = 128 KiB
        ("llama-3-8b", 2, 65_536),
        ("llama-3-8b", 16, 16_384),  # 8 KV heads on 16 GPUs: one head each, replicated
        ("llama-3-70b", 1, 327_680),  # 2 * 80 * 8 * 128 * 2 = 320 KiB
        ("llama-3-70b", 4, 81_920),
        ("qwen2.5-7b", 1, 57_344),  # 2 * 28 * 4 * 128 * 2 = 56 KiB
        ("qwen2.5-7b", 4, 14_336),
        ("mixtral-8x7b", 1, 131_072),
    ],
)
def test_kv_bytes_per_token(name: str, tp: int, kv_bytes: int) -> None:
    assert Model.preset(name).kv_bytes_per_token(tp) == kv_bytes


def test_model_defaults_to_its_own_tensor_parallel_degree() -> None:
    m = Model.preset("llama-3-70b")
    assert m.tp == 4 and m.kv_bytes_per_token() == 81_920 and m.weight_bytes() == m.weight_bytes(4)
    assert m.weight_bytes(1) == 2 * m.parameters


def test_num_blocks_matches_vllms_log() -> None:
    # vLLM V1 on one 80 GB H100, Llama-3.1-8B (Llama-3-8B's architecture), gpu_memory_utilization 0.9:
    # "GPU KV cache size: 447,088 tokens". RESERVE_BYTES was read off the same log's activation and
    # non-torch figures, so this checks the capacity, the weights, the KV bytes and the formula.
    tokens = num_blocks("llama-3-8b", "h100-sxm", gpu_memory_utilization=0.9) * 16
    assert abs(tokens / 447_088 - 1) < 0.01


def test_num_blocks_formula() -> None:
    m, g = Model.preset("qwen2.5-7b"), GPU.preset("a100-80gb")
    usable = -(-g.memory_bytes * 92 // 100)
    expected = (usable - m.weight_bytes(1) - RESERVE_BYTES) // (16 * m.kv_bytes_per_token(1))
    assert GPU_MEMORY_UTILIZATION == 0.92
    assert num_blocks(m, g) == expected == num_blocks(model="qwen2.5-7b", gpu="a100-80gb")
    assert num_blocks(m, g, block_size=32) == (usable - m.weight_bytes(1) - RESERVE_BYTES) // (
        32 * m.kv_bytes_per_token(1)
    )
    assert num_blocks(m, g, reserve_bytes=0) > num_blocks(m, g) > num_blocks(m, g, gpu_memory_utilization=0.5)
    # Twice the GPUs: half the weights and half the KV heads on each, so more than twice the blocks.
    assert num_blocks("llama-3-70b", "h100-sxm", tp=8) > 2 * num_blocks("llama-3-70b", "h100-sxm", tp=4)


def test_num_blocks_errors() -> None:
    with pytest.raises(ValueError, match="model='llama-3-70b' does not fit on gpu='H100-SXM5-80GB' with tp=1"):
        num_blocks("llama-3-70b", "h100-sxm", tp=1)
    with pytest.raises(ValueError, match="model='mixtral-8x7b' does not fit"):
        num_blocks("mixtral-8x7b", "l40s")
    assert num_blocks("mixtral-8x7b", "l40s", tp=4) > 0
    for bad in (0, 1.5, float("nan"), True):
        with pytest.raises(ValueError, match="gpu_memory_utilization="):
            num_blocks("llama-3-8b", "h100-sxm", gpu_memory_utilization=bad)
    with pytest.raises(ValueError, match="block_size=0 is not accepted"):
        num_blocks("llama-3-8b", "h100-sxm", block_size=0)
    with pytest.raises(ValueError, match="reserve_bytes=-1 is not accepted"):
        num_blocks("llama-3-8b", "h100-sxm", reserve_bytes=-1)
    with pytest.raises(ValueError, match="tp=3 is not accepted for llama-3-8b"):
        num_blocks("llama-3-8b", "h100-sxm", tp=3)


def test_lookups() -> None:
    assert Model.preset("Llama-3-8B") is MODELS["llama-3-8b"] and GPU.preset("H100-SXM") is GPUS["h100-sxm"]
    m = Model.preset("llama-3-8b")
    assert Model.preset(m) is m and GPU.preset(GPUS["l40s"]) is GPUS["l40s"]
    with pytest.raises(ValueError, match="model='gpt-5' is not accepted: use one of llama-3-8b, llama-3-70b"):
        Model.preset("gpt-5")
    with pytest.raises(
        ValueError, match="gpu='v100' is not accepted: use one of a100-80gb, h100-sxm, h200, l40s, rtx-pro-6000"
    ):
        GPU.preset("v100")
    with pytest.raises(ValueError, match="model=7 is not accepted"):
        Model.preset(7)  # type: ignore[arg-type]


def test_presets_are_documented_and_consistent() -> None:
    for key, m in MODELS.items():
        assert m.name == key and m.source.startswith("https://huggingface.co/") and m.source.endswith("config.json")
        # Qwen3 and gpt-oss decouple the head size from hidden_size (gpt-oss: 64 x 64 heads over 2,880)
        assert m.heads * m.head_dim == m.hidden_size or m.qk_norm or key == "gpt-oss-120b"
    for g in GPUS.values():
        assert g.source and g.bf16_flops < (g.fp8_flops or float("inf"))
    assert GPU.preset("h100-sxm").peak_flops("bf16") == GPU.preset("h100-sxm").peak_flops("fp16") == 989.4e12
    assert GPU.preset("h200").peak_flops("fp8") == 1978.9e12
    with pytest.raises(ValueError, match="dtype='fp8' is not accepted on A100-SXM4-80GB"):
        GPU.preset("a100-80gb").peak_flops("fp8")
    with pytest.raises(ValueError, match="dtype='int4' is not accepted"):
        GPU.preset("h100-sxm").peak_flops("int4")
    assert round(GPU.preset("h100-sxm").memory_bytes / GIB, 2) == 79.65  # nvidia-smi's 81559 MiB
    assert GPU.preset("h100") is GPU.preset("H100") is GPUS["h100-sxm"]  # an alias, listed in the table


def test_model_validation() -> None:
    base = MODELS["llama-3-8b"]
    with pytest.raises(ValueError, match="kv_heads=5 is not accepted: it must divide heads=32"):
        dataclasses.replace(base, kv_heads=5)
    with pytest.raises(ValueError, match="experts_per_token=3 is not accepted"):
        dataclasses.replace(base, experts=2, experts_per_token=3)
    with pytest.raises(ValueError, match="dtype='int8' is not accepted"):
        dataclasses.replace(base, dtype="int8")
    with pytest.raises(ValueError, match="layers=0 is not accepted"):
        dataclasses.replace(base, layers=0)
    with pytest.raises(ValueError, match="window_layers=0 is not accepted with sliding_window=128"):
        dataclasses.replace(base, sliding_window=128)
    with pytest.raises(ValueError, match="window_layers=32 is not accepted"):  # one layer at least attends to all
        dataclasses.replace(base, sliding_window=128, window_layers=32)
    with pytest.raises(ValueError, match="expert_dtype='mxfp4' is not accepted: the model has no experts"):
        dataclasses.replace(base, expert_dtype="mxfp4")
    with pytest.raises(ValueError, match="expert_dtype='int4' is not accepted"):
        dataclasses.replace(MODELS["qwen3-30b-a3b"], expert_dtype="int4")
    fp8 = dataclasses.replace(base, dtype="fp8")  # the weights; the KV cache has its own kv_dtype (vLLM's)
    assert (
        fp8.kv_bytes_per_token() == 131_072 and dataclasses.replace(fp8, kv_dtype="fp8").kv_bytes_per_token() == 65_536
    )
    assert fp8.weight_bytes() == base.parameters + base.embedding_parameters + base.lm_head_parameters
    assert isinstance(fp8, Model) and fp8.to_dict()["parameters"] == base.parameters
