"""Speed: training throughput by FLOPs, scaling over cards, spot rework, bandwidth-bound decode.

Defaults come from docs/estimates.md, "Speed" and are named, overridable parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.domain.catalog import CardType, Network
from planner.domain.model_card import ModelCard
from planner.estimate.core import Assumptions
from planner.estimate.memory import ServeSetup, TrainSetup, kv_bytes_per_sequence, layer_split
from planner.estimate.precision import weight_bytes

# Model FLOPs utilisation (model FLOPs: 6P + attention, recompute not counted) of a tuned job
# without recompute. docs/estimates.md: Megatron 41-56% on A100, Llama 3 405B 38-43% on H100;
# torchtitan FSDP on 64 A100 measured 58-61%. Consumer cards and the 910B lower, by judgement.
MFU = {
    "datacenter": 0.50,
    "consumer": 0.35,
    "ascend-910b": 0.35,
}
CONSUMER_CARDS = {"rtx3090", "rtx4090", "rtx4090-48g"}
# Full activation checkpointing recomputes the forward: torchtitan's MFU drops 58% → 52%
# (selective → full AC), torchtune's 3B ladder loses 21% of tokens/s.
CHECKPOINTING_SPEED = 0.85
QLORA_SLOWDOWN = 1.2  # dequantising NF4 each step: ~20% slower than LoRA (measured on a 4090)
OFFLOAD_SPEED = {"none": 1.0, "optimizer": 0.85, "optimizer+params": 0.6}
# Scaling efficiency eff(n) = 1 / (1 + c × log2 n) within a node, by interconnect.
# NVLink: docs/estimates.md ≈ 0.95 data-parallel; consumer PCIe without P2P 0.7-0.8 at 8 cards.
INTRA_NODE_COST = {"nvlink": 0.015, "hccs": 0.02, "pcie": 0.09, "pcie-no-p2p": 0.15}
SHARDED_COST_FACTOR = 1.5  # ZeRO-2/3 and FSDP move more bytes per step than plain DDP
# torchtitan: 5,762 → 5,605 tokens/s per GPU from 8 to 128 H100 (16 nodes, 400 Gb/s RDMA).
INTER_NODE_COST = {"fast": 0.01, "slow": 0.1}  # ≥ 200 Gbit/s fabric, or slower
# Decode reaches this share of memory bandwidth (docs/estimates.md, "Decode").
# gpt-fast on A100: Llama-2-7B bf16 at ~0.69 of peak bandwidth; Qwen2.5 on vLLM ~0.63.
VLLM_DECODE_EFFICIENCY = {"16bit": 0.7, "int8": 0.65, "4bit": 0.5}
HF_DECODE_EFFICIENCY = 0.3
# Tensor-parallel decode all-reduces twice per layer (after attention and after the MLP); at
# batch-1 message sizes each costs a latency, not bandwidth. NVLink: the median implied by the
# calibration set's gpt-fast TP rows (benchmarks/measurements/calibration.yaml); PCIe and HCCS
# by judgement (no measurement), marked as assumed in the output.
ALLREDUCE_SECONDS = {"nvlink": 22e-6, "hccs": 30e-6, "pcie": 60e-6, "pcie-no-p2p": 100e-6}
# A serving engine's scheduler and sampler cost each decode step a fixed time: the mean
# implied by the calibration set's vLLM batch-1 rows (Qwen2.5 7B/14B/72B, Qwen2-7B). gpt-fast
# (one compiled loop) has none; plain HF generate's is inside its low bandwidth share.
ENGINE_STEP_SECONDS = {"vllm": 1.8e-3, "gpt-fast": 0.0, "hf": 0.0}
# Each expert a decode step touches is its own small GEMM launch: fitted on the calibration
# set's Qwen3-30B-A3B (SGLang) row; Mixtral's two experts per layer barely feel it.
EXPERT_SECONDS = 9e-6
TP_DECODE_COST = {"nvlink": 0.12, "hccs": 0.12, "pcie": 0.3, "pcie-no-p2p": 0.45}


def mfu_default(card: CardType) -> float:
    if card.id in CONSUMER_CARDS:
        return MFU["consumer"]
    return MFU.get(card.id, MFU["datacenter"])


def peak_flops(card: CardType, precision: str) -> float:
    """Dense peak FLOP/s for the training precision (fp8 doubles it on cards that have it)."""
    tflops = card.bf16_tflops.value
    if precision == "fp8" and card.fp8.value:
        tflops *= 2
    elif precision == "fp32":
        tflops /= 2  # TF32 tensor cores run at half the 16-bit rate
    return tflops * 1e12


def flops_per_token(model: ModelCard, setup: TrainSetup) -> tuple[float, str]:
    """Model FLOPs per token: 6P (full), 4P (LoRA: no weight gradients for frozen weights),
    2P (forward only), plus attention 12·L·h·s (a third of it forward only). P = active params."""
    params = float(model.active_params)
    factor = {"full": 6.0, "lora": 4.0, "qlora": 4.0, "eval": 2.0}[setup.method]
    attention = 12.0 * model.layers * model.hidden * setup.seq_len
    if setup.method == "eval":
        attention /= 3
    return factor * params + attention, f"{factor:g}·P + attention FLOPs per token"


def link_kind(card: CardType) -> str:
    """The card's link between cards of a node; PCIe without peer-to-peer is its own kind."""
    if card.interconnect.value == "pcie" and not card.p2p.value:
        return "pcie-no-p2p"
    return card.interconnect.value


def scaling_efficiency(
    card: CardType, cards: int, cards_per_node: int, network: Network | None, sharded: bool
) -> tuple[float, str]:
    """Share of linear speed-up kept over `cards` cards (1 for one card), in (0, 1]."""
    link = link_kind(card)
    cost = INTRA_NODE_COST[link] * (SHARDED_COST_FACTOR if sharded else 1.0)
    in_node = min(cards, cards_per_node)
    efficiency = 1.0 / (1.0 + cost * math.log2(in_node))
    nodes = math.ceil(cards / cards_per_node)
    text = f"{link} within a node: 1/(1 + {cost:.3g}·log2 n)"
    if nodes > 1:
        speed = "fast" if network is not None and network.gbps >= 200 else "slow"
        efficiency /= 1.0 + INTER_NODE_COST[speed] * math.log2(nodes)
        text += f"; {nodes} nodes over a {speed} network"
    return efficiency, text


def spot_factor(
    preemptions_per_hour: float, checkpoint_minutes: int, restart_minutes: int
) -> float:
    """Expected share of useful time on spot: 1 ÷ (1 + λ × (interval ÷ 2 + restart))."""
    lost_hours = (checkpoint_minutes / 2 + restart_minutes) / 60
    return 1.0 / (1.0 + preemptions_per_hour * lost_hours)


@dataclass(frozen=True)
class TrainSpeed:
    tokens_per_s: float  # total over all cards
    efficiency: float
    assumptions: tuple[str, ...]


def train_speed(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: TrainSetup,
    cards_per_node: int = 8,
    network: Network | None = None,
) -> TrainSpeed:
    """Estimated tokens/s of the whole job: FLOPs ÷ (cards × peak × MFU × efficiency)."""
    notes = Assumptions()
    work, work_text = flops_per_token(model, setup)
    mfu = setup.knobs.mfu or mfu_default(card)
    # A sequential layer split (pipeline) computes on one card at a time.
    parallel = 1 if setup.knobs.pipeline else cards
    efficiency, eff_text = scaling_efficiency(
        card, parallel, cards_per_node, network, (setup.knobs.zero or 0) >= 2
    )
    speed = parallel * peak_flops(card, setup.precision) * mfu * efficiency / work
    notes.add("flops", work_text)
    notes.add("mfu", f"MFU {mfu:.0%} of {card.id}'s dense {setup.precision} peak")
    notes.card(card, "bf16_tflops")
    if parallel > 1:
        notes.add("scaling", f"scaling efficiency {efficiency:.0%} on {cards} cards ({eff_text})")
    if setup.knobs.checkpointing and setup.method != "eval":
        speed *= CHECKPOINTING_SPEED
        notes.add("recompute", f"activation checkpointing: {CHECKPOINTING_SPEED:.0%} speed")
    if setup.method == "qlora":
        speed /= QLORA_SLOWDOWN
        notes.add("qlora", f"QLoRA dequantisation: {QLORA_SLOWDOWN:g}× slower than LoRA")
    offload = OFFLOAD_SPEED[setup.knobs.offload or "none"]
    if offload < 1:
        speed *= offload
        notes.add("offload_speed", f"CPU offload: {offload:.0%} of on-card speed")
    k = setup.knobs
    if k.pipeline and cards > 1:
        notes.add("pipeline_speed", f"layers split in sequence: the speed of one card, not {cards}")
    if k.packed is False and k.mean_seq_len and setup.micro_batch > 1:
        real = min(k.mean_seq_len, setup.seq_len) / setup.seq_len
        speed *= real
        notes.add(
            "padding",
            f"unpacked batches padded to {setup.seq_len}: {real:.0%} of tokens are real "
            f"(mean {k.mean_seq_len})",
        )
    return TrainSpeed(speed, efficiency, tuple(str(a) for a in notes.frozen()))


def scale_measured(
    tokens_per_s: float,
    measured_card: CardType,
    measured_cards: int,
    measured_efficiency: float,
    card: CardType,
    cards: int,
    efficiency: float,
    precision: str,
) -> float:
    """A measured throughput carried to another card and count (docs/rules.md, rule 2): by the
    ratio of dense peaks at the precision, and by cards × scaling efficiency."""
    peak_ratio = peak_flops(card, precision) / peak_flops(measured_card, precision)
    return tokens_per_s * peak_ratio * (cards * efficiency) / (measured_cards * measured_efficiency)


# --- decode -------------------------------------------------------------------------------


def decode_efficiency(setup: ServeSetup) -> float:
    """Share of memory bandwidth a decode step reaches, by engine and weight format."""
    if setup.engine == "hf":
        return HF_DECODE_EFFICIENCY
    if setup.precision in ("int4", "nf4"):
        return VLLM_DECODE_EFFICIENCY["4bit"]
    return VLLM_DECODE_EFFICIENCY["int8" if setup.precision == "int8" else "16bit"]


def tp_efficiency(card: CardType, cards: int) -> float:
    """Share of linear decode speed-up kept by tensor parallelism over `cards` cards."""
    return 1.0 / (1.0 + TP_DECODE_COST[link_kind(card)] * math.log2(cards))


def weights_read_per_step(model: ModelCard, setup: ServeSetup, batch: int) -> float:
    """Weight bytes one decode step reads: all of a dense model but the input embedding (one
    row per token); for MoE the shared part plus the experts the batch's tokens touch,
    E × (1 − (1 − k/E)^batch) of them per layer."""
    notes = Assumptions()
    total = weight_bytes(model, setup.precision, notes)
    if not model.tied_embeddings:
        total -= model.vocab * model.hidden * 2.0  # the input embedding stays 16-bit
    if model.moe is None:
        return total
    moe = model.moe
    expert_bytes = total * (
        3 * model.hidden * moe.expert_intermediate * model.layers / model.params
    )
    return total - expert_bytes * (moe.experts - experts_touched(model, batch))


def experts_touched(model: ModelCard, batch: int) -> float:
    """Experts per layer a decode step of `batch` tokens runs (0 for a dense model)."""
    if model.moe is None:
        return 0.0
    moe = model.moe
    return moe.experts * (1 - (1 - moe.experts_per_token / moe.experts) ** max(batch, 1))


def decode_step_seconds(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, batch: int
) -> float:
    """One decode step of `batch` sequences at full context: bytes read ÷ effective bandwidth,
    plus two all-reduce latencies per layer under tensor parallelism and one launch per
    expert touched. Tensor parallel reads each card's share at once; a layer split in turn."""
    weights = weights_read_per_step(model, setup, batch) / cards
    kv = batch * kv_bytes_per_sequence(model, setup, cards)
    bandwidth = card.bandwidth_gbs.value * 1e9 * decode_efficiency(setup)
    fixed = model.layers * experts_touched(model, batch) * EXPERT_SECONDS
    fixed += ENGINE_STEP_SECONDS.get(setup.engine, 0.0)
    if layer_split(setup, cards):
        return (weights + kv) * cards / bandwidth + fixed
    allreduce = 2 * model.layers * ALLREDUCE_SECONDS[link_kind(card)] if cards > 1 else 0.0
    return (weights + kv) / bandwidth + allreduce + fixed


def max_batch_for_speed(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, min_tokens_per_s: float
) -> int:
    """Largest batch whose every request still decodes at `min_tokens_per_s` (0: not even one)."""
    if decode_step_seconds(model, card, cards, setup, 1) * min_tokens_per_s > 1:
        return 0
    low, high = 1, 1
    while decode_step_seconds(model, card, cards, setup, high * 2) * min_tokens_per_s <= 1:
        high *= 2
        if high > 1 << 20:
            return high
    high *= 2
    while high - low > 1:  # step time grows with the batch: bisect
        mid = (low + high) // 2
        if decode_step_seconds(model, card, cards, setup, mid) * min_tokens_per_s <= 1:
            low = mid
        else:
            high = mid
    return low
