"""Published measurements of memory and speed, and gpuplan's estimate of each.

Every case cites its source (repository + path or URL, with the row quoted) and states the
knobs the source states; where the source is silent, the choice is named. Used by
tests/test_estimate_accuracy.py (each within its tolerance) and by
benchmarks/estimate_accuracy.py (the table of errors, median and worst).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planner.domain.catalog import CardType, Network
from planner.domain.errors import Issue
from planner.domain.load import load_catalog, load_model
from planner.domain.model_card import ModelCard
from planner.domain.recipes import TrainKnobs, recipe_knobs
from planner.estimate.core import GB, GIB
from planner.estimate.memory import (
    ServeSetup,
    TrainSetup,
    serve_memory,
    train_memory,
)
from planner.estimate.speed import decode_step_seconds, train_speed

_, CARDS = load_catalog("jizhisuan-2026-09")


def model(name: str) -> ModelCard:
    return load_model(name, None, lambda _p, message: Issue("tests", None, None, (), message))


def card(name: str, memory_gib: float | None = None) -> CardType:
    """A shipped card; `memory_gib` set to what the measuring run's framework reported."""
    spec = CARDS[name]
    if memory_gib is None:
        return spec
    return spec.model_copy(
        update={"memory_gib": spec.memory_gib.model_copy(update={"value": memory_gib})}
    )


# Cards measured in the sources but not rented in the seeds' market (NVIDIA datasheets).
A10G = CardType.model_validate(
    {
        "id": "a10g",
        "name": "NVIDIA A10G (AWS)",
        "memory_gb": 24,
        "memory_gib": 22.30,
        "bandwidth_gbs": 600,
        "bf16_tflops": 70,
        "fp8": False,
        "interconnect": "pcie",
        "interconnect_gbs": 32,
        "tdp_w": 300,
    }
)


@dataclass(frozen=True)
class Case:
    """One published figure and how gpuplan estimates the same thing."""

    id: str
    what: str  # memory | kv budget | activations | decode tok/s | train tok/s/GPU | OOM
    measured: float
    unit: str
    tolerance: float  # relative; the estimate must be within it
    source: str
    estimate: Callable[[], float]
    note: str = ""

    def error(self) -> float:
        return (self.estimate() - self.measured) / self.measured


def _vllm_budget(m: str, c: CardType, batched: int, seqs: int) -> tuple[float, float]:
    setup = ServeSetup(batched_tokens=batched, max_seqs=seqs, concurrency=0)
    estimate, budget = serve_memory(model(m), c, 1, setup)
    return budget / GIB, estimate.breakdown["activations"] / GIB


def _hf_total(m: str, c: CardType, cards: int, context: int, precision: str = "bf16") -> float:
    setup = ServeSetup(precision=precision, engine="hf", concurrency=1, context_tokens=context)
    estimate, _ = serve_memory(model(m), c, cards, setup)
    return estimate.total


def _train(
    m: str,
    c: CardType,
    cards: int,
    method: str,
    recipe: str | None,
    seq: int,
    batch: int,
    **knobs: object,
) -> float:
    setup = TrainSetup(
        method, recipe_knobs(method, recipe, TrainKnobs.model_validate(knobs)), "bf16", seq, batch
    )
    return train_memory(model(m), c, cards, setup).total


def _fits(m: str, c: CardType, method: str, seq: int, batch: int, **knobs: object) -> float:
    setup = TrainSetup(
        method, recipe_knobs(method, None, TrainKnobs.model_validate(knobs)), "bf16", seq, batch
    )
    return 1.0 if train_memory(model(m), c, 1, setup).fits else 0.0


def _decode(m: str, c: CardType, cards: int, precision: str, context: int) -> float:
    setup = ServeSetup(precision=precision, context_tokens=context)
    return 1.0 / decode_step_seconds(model(m), c, cards, setup, 1)


def _titan(m: str, seq: int, batch: int, checkpointing: bool) -> float:
    knobs = recipe_knobs("full", "fsdp-full-shard", TrainKnobs(checkpointing=checkpointing))
    setup = TrainSetup("full", knobs, "bf16", seq, batch)
    # 64 A100 80GB = 8 nodes of 8 over a fast fabric (torchtitan's cluster)
    speed = train_speed(model(m), card("a100-80g"), 64, setup, 8, Network(gbps=400))
    return speed.tokens_per_s / 64


LITGPT = (
    "Lightning-AI/litgpt tutorials/resource-tables.md "
    "(A100-SXM4-40GB, bf16-true, max_memory_allocated)"
)
LITGPT_LORA = dict(optimizer="adamw-bf16", checkpointing=False, lora_rank=8, lora_targets="attn")
TORCHTUNE = "pytorch/torchtune README.md 'Memory and training speed' (bs 2, packed 2048, compile)"
GPTFAST = "pytorch-labs/gpt-fast README.md (A100-80GB at 330 W, bs 1, compiled)"
QWEN = "QwenLM/Qwen2.5 docs/source/benchmark/speed_benchmark.rst (A100 80GB, bs 1)"
TITAN = "pytorch/torchtitan docs/performance.md (64x A100 80GB, FSDP2, tokens/s per GPU)"

CASES: list[Case] = [
    # --- serving memory ----------------------------------------------------------------
    Case(
        "vllm-3090-llama3.1-8b-kv",
        "kv budget",
        3.81,
        "GiB",
        0.15,
        "vllm-project/vllm#10517 (RTX 3090, max-model-len 20000: 'kv_cache_size=3.81GiB', "
        "total_gpu_memory=23.58GiB, utilization 0.90)",
        lambda: _vllm_budget("llama-3.1-8b", card("rtx3090", 23.58), 20000, 256)[0],
    ),
    Case(
        "vllm-3090-llama3.1-8b-act",
        "activations",
        17.06 - 14.99,
        "GiB",
        0.15,
        "vllm-project/vllm#10517 ('peak_torch_memory=17.06GiB', weights 14.99 GiB, 20000 tokens)",
        lambda: _vllm_budget("llama-3.1-8b", card("rtx3090", 23.58), 20000, 256)[1],
    ),
    Case(
        "vllm-a10g-r1-distill-8b-act",
        "activations",
        0.85,
        "GiB",
        0.10,
        "awslabs/data-on-eks ray-vllm-deepseek.md ('Activation memory: 0.85 GiB', "
        "max_model_len 8192, max_num_seqs 4)",
        lambda: _vllm_budget("llama-3.1-8b", A10G, 8192, 4)[1],
    ),
    Case(
        "vllm-a10g-r1-distill-8b-kv",
        "kv budget",
        4.17,
        "GiB",
        0.15,
        "awslabs/data-on-eks ray-vllm-deepseek.md ('KV Cache: 4.17 GiB' of 22.30 GiB x 0.90)",
        lambda: _vllm_budget("llama-3.1-8b", A10G, 8192, 4)[0],
    ),
    Case(
        "hf-qwen2.5-7b-a100-short",
        "memory",
        14.38,
        "GiB",
        0.10,
        QWEN + ": BF16, input 1, 2048 generated: 14.38 (GiB, labelled GB)",
        lambda: _hf_total("qwen2.5-7b", card("a100-80g"), 1, 2049) / GIB,
    ),
    Case(
        "hf-qwen2.5-7b-a100-30k",
        "memory",
        19.97,
        "GiB",
        0.15,
        QWEN + ": BF16, input 30720, 2048 generated: 19.97",
        lambda: _hf_total("qwen2.5-7b", card("a100-80g"), 1, 30720 + 2048) / GIB,
    ),
    Case(
        "hf-qwen2.5-72b-2xa100",
        "memory",
        136.20,
        "GiB (both cards)",
        0.10,
        QWEN + ": BF16 72B on 2 GPUs, input 1: 136.20 in all",
        lambda: 2 * _hf_total("qwen2.5-72b", card("a100-80g"), 2, 2049) / GIB,
    ),
    Case(
        "litgpt-llama2-7b-generate",
        "memory",
        13.52,
        "GB",
        0.10,
        LITGPT + ", single-GPU inference: 'Llama 2 | None | 1 x A100 | 13.52 GB'",
        lambda: _hf_total("llama-2-7b", card("a100-40g"), 1, 256) / GB,
    ),
    Case(
        "litgpt-llama2-70b-nf4dq-generate",
        "memory",
        37.21,
        "GB",
        0.10,
        LITGPT + ": '70 B | Llama 2 | bnb.nf4-dq | 1 x A100 | 37.21 GB'",
        lambda: _hf_total("llama-2-70b", card("a100-40g"), 1, 256, "nf4") / GB,
    ),
    # --- fine-tuning memory -------------------------------------------------------------
    Case(
        "litgpt-llama2-7b-lora-mb1",
        "memory",
        21.30,
        "GB",
        0.10,
        LITGPT + ": LoRA r=8 q,v, micro-batch 1, Alpaca (longest 1304 tokens): 21.30 GB",
        lambda: (
            _train("llama-2-7b", card("a100-40g"), 1, "lora", None, 1304, 1, **LITGPT_LORA) / GB
        ),
        "no checkpointing on one GPU; q,v adapters modelled as q,k,v,o (4M vs 8M params)",
    ),
    Case(
        "litgpt-llama2-7b-lora-mb2",
        "memory",
        29.07,
        "GB",
        0.10,
        LITGPT + ": micro-batch 2: 29.07 GB",
        lambda: (
            _train("llama-2-7b", card("a100-40g"), 1, "lora", None, 1304, 2, **LITGPT_LORA) / GB
        ),
    ),
    Case(
        "litgpt-llama2-13b-lora-mb1",
        "memory",
        38.12,
        "GB",
        0.10,
        LITGPT + ": 13 B micro-batch 1: 38.12 GB",
        lambda: (
            _train("llama-2-13b", card("a100-40g"), 1, "lora", None, 1304, 1, **LITGPT_LORA) / GB
        ),
    ),
    Case(
        "litgpt-llama2-7b-qlora-mb1",
        "memory",
        13.84,
        "GB",
        0.20,
        LITGPT + ": bnb.nf4-dq micro-batch 1: 13.84 GB",
        lambda: (
            _train("llama-2-7b", card("a100-40g"), 1, "qlora", None, 1304, 1, **LITGPT_LORA) / GB
        ),
        "bitsandbytes' 4-bit layers peak ~2 GB above our count; cause not modelled",
    ),
    Case(
        "litgpt-llama2-13b-qlora-mb1",
        "memory",
        22.55,
        "GB",
        0.20,
        LITGPT + ": 13 B bnb.nf4-dq micro-batch 1: 22.55 GB",
        lambda: (
            _train("llama-2-13b", card("a100-40g"), 1, "qlora", None, 1304, 1, **LITGPT_LORA) / GB
        ),
    ),
    Case(
        "torchtune-llama3.1-8b-full-4090",
        "memory",
        18.9,
        "GiB",
        0.15,
        TORCHTUNE + ": 'Llama 3.1 8B | Full finetune | 1x 4090 | 18.9 GiB'",
        lambda: (
            _train("llama-3.1-8b", card("rtx4090"), 1, "full", "low-memory-single-device", 2048, 2)
            / GIB
        ),
    ),
    Case(
        "torchtune-llama3.1-8b-lora-4090",
        "memory",
        16.2,
        "GiB",
        0.25,
        TORCHTUNE + ": 'Llama 3.1 8B | LoRA | 1x 4090 | 16.2 GiB'",
        lambda: (
            _train(
                "llama-3.1-8b",
                card("rtx4090"),
                1,
                "lora",
                None,
                2048,
                2,
                lora_rank=8,
                lora_targets="all",
                chunked_loss=True,
            )
            / GIB
        ),
        "rank 8 on q,v,o + MLP at the time (medium confidence); compile lowers the real peak",
    ),
    Case(
        "torchtune-llama3.1-8b-qlora-4090",
        "memory",
        7.4,
        "GiB",
        0.30,
        TORCHTUNE + ": 'Llama 3.1 8B | QLoRA | 1x 4090 | 7.4 GiB'",
        lambda: (
            _train(
                "llama-3.1-8b",
                card("rtx4090"),
                1,
                "qlora",
                None,
                2048,
                2,
                lora_rank=8,
                lora_targets="all",
                chunked_loss=True,
                optimizer="adamw",
            )
            / GIB
        ),
        "torchao NF4 + compile; likely 'active' memory, without the CUDA context we count",
    ),
    Case(
        "torchtune-llama3.1-70b-lora-8xa100",
        "memory",
        27.6,
        "GiB",
        0.25,
        TORCHTUNE + ": 'Llama 3.1 70B | LoRA | 8x A100 | 27.6 GiB'",
        lambda: (
            _train(
                "llama-3.1-70b",
                card("a100-80g"),
                8,
                "lora",
                None,
                2048,
                2,
                zero=3,
                lora_rank=16,
                lora_targets="all",
                chunked_loss=True,
            )
            / GIB
        ),
        "FSDP over 8 cards; we hold two gathered embedding-sized units, FSDP2 often fewer",
    ),
    Case(
        "torchtune-llama3.1-70b-full-offload-8xa100",
        "memory",
        13.9,
        "GiB",
        0.30,
        TORCHTUNE + ": 'Llama 3.1 70B | Full finetune | 8x A100 | 13.9 GiB **' (CPU offload)",
        lambda: (
            _train(
                "llama-3.1-70b",
                card("a100-80g"),
                8,
                "full",
                "fsdp-full-shard",
                2048,
                2,
                offload="optimizer+params",
                chunked_loss=True,
            )
            / GIB
        ),
    ),
    # --- out of memory (1 = fits, 0 = does not) -------------------------------------------
    Case(
        "litgpt-llama2-7b-lora-mb4-oom",
        "fits",
        0.0,
        "fits",
        0.0,
        LITGPT + ": '7 B | Llama 2 | None | 4 | ... | OOM'",
        lambda: _fits("llama-2-7b", card("a100-40g"), "lora", 1304, 4, **LITGPT_LORA),
    ),
    Case(
        "litgpt-llama2-13b-lora-mb2-oom",
        "fits",
        0.0,
        "fits",
        0.0,
        LITGPT + ": '13 B | Llama 2 | None | 2 | ... | OOM'",
        lambda: _fits("llama-2-13b", card("a100-40g"), "lora", 1304, 2, **LITGPT_LORA),
    ),
    Case(
        "litgpt-llama2-13b-lora-mb1-fits",
        "fits",
        1.0,
        "fits",
        0.0,
        LITGPT + ": '13 B | Llama 2 | None | 1 | ... | 38.12 GB'",
        lambda: _fits("llama-2-13b", card("a100-40g"), "lora", 1304, 1, **LITGPT_LORA),
    ),
    # --- decode speed -------------------------------------------------------------------
    Case(
        "gptfast-llama2-7b-bf16",
        "decode tok/s",
        104.9,
        "tok/s",
        0.15,
        GPTFAST + ": 'Llama-2-7B | Base | 104.9'",
        lambda: _decode("llama-2-7b", card("a100-80g"), 1, "bf16", 256),
    ),
    Case(
        "gptfast-llama2-70b-int8",
        "decode tok/s",
        19.13,
        "tok/s",
        0.15,
        GPTFAST + ": 'Llama-2-70B | 8-bit | 19.13'",
        lambda: _decode("llama-2-70b", card("a100-80g"), 1, "int8", 256),
    ),
    Case(
        "gptfast-llama2-70b-bf16-tp2",
        "decode tok/s",
        21.32,
        "tok/s",
        0.15,
        GPTFAST + ": tensor parallel, 70B on 2 GPUs: 21.32",
        lambda: _decode("llama-2-70b", card("a100-80g"), 2, "bf16", 256),
    ),
    Case(
        "gptfast-llama2-70b-bf16-tp8",
        "decode tok/s",
        62.50,
        "tok/s",
        0.15,
        GPTFAST + ": tensor parallel, 70B on 8 GPUs: 62.50",
        lambda: _decode("llama-2-70b", card("a100-80g"), 8, "bf16", 256),
    ),
    Case(
        "gptfast-mixtral-int8",
        "decode tok/s",
        56.04,
        "tok/s",
        0.25,
        "pytorch-labs/gpt-fast mixtral-moe/README.md: 'int8 | 56.04' (1 GPU)",
        lambda: _decode("mixtral-8x7b", card("a100-80g"), 1, "int8", 256),
        "MoE decode factor 0.65 was calibrated on this gpt-fast data",
    ),
    Case(
        "gptfast-mixtral-bf16-tp2",
        "decode tok/s",
        78.75,
        "tok/s",
        0.25,
        "pytorch-labs/gpt-fast mixtral-moe/README.md: 'baseline(bfloat16) | ... | 78.75' (2 GPUs)",
        lambda: _decode("mixtral-8x7b", card("a100-80g"), 2, "bf16", 256),
    ),
    Case(
        "vllm-qwen2.5-7b-bs1",
        "decode tok/s",
        84.28,
        "tok/s",
        0.15,
        QWEN + ", vLLM 0.6.3: 7B BF16 input 1: 84.28",
        lambda: _decode("qwen2.5-7b", card("a100-80g"), 1, "bf16", 2049),
    ),
    Case(
        "vllm-qwen2.5-14b-bs1",
        "decode tok/s",
        46.30,
        "tok/s",
        0.15,
        QWEN + ", vLLM 0.6.3: 14B BF16 input 1: 46.30",
        lambda: _decode("qwen2.5-14b", card("a100-80g"), 1, "bf16", 2049),
    ),
    Case(
        "vllm-qwen2.5-72b-tp4",
        "decode tok/s",
        31.37,
        "tok/s",
        0.15,
        QWEN + ", vLLM 0.6.3: 72B BF16 on 4 GPUs, input 1: 31.37",
        lambda: _decode("qwen2.5-72b", card("a100-80g"), 4, "bf16", 2049),
    ),
    # --- training speed -----------------------------------------------------------------
    Case(
        "torchtitan-llama3-8b-64xa100",
        "train tok/s/GPU",
        2973,
        "tok/s",
        0.30,
        TITAN + ": 'Llama 3 8B, bs 1, selective op AC: 2973 WPS (58.2% MFU)'",
        lambda: _titan("llama-3.1-8b", 8192, 1, False),
        "selective activation checkpointing modelled as none",
    ),
    Case(
        "torchtitan-llama2-13b-64xa100",
        "train tok/s/GPU",
        2162,
        "tok/s",
        0.30,
        TITAN + ": 'Llama 2 13B, bs 2, no AC: 2162 WPS (61.1% MFU)'",
        lambda: _titan("llama-2-13b", 4096, 2, False),
    ),
    Case(
        "torchtitan-llama3-70b-64xa100",
        "train tok/s/GPU",
        331,
        "tok/s",
        0.30,
        TITAN + ": 'Llama 3 70B, bs 1, full AC: 331 WPS (51.7% MFU)'",
        lambda: _titan("llama-3.1-70b", 8192, 1, True),
    ),
]
