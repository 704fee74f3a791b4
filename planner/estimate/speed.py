"""Speed: training throughput by FLOPs, scaling over cards, spot rework, bandwidth-bound decode.

Defaults come from docs/estimates.md, "Speed" and are named, overridable parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.domain.catalog import CardType, Network
from planner.domain.model_card import ModelCard
from planner.estimate.bands import kind_of, speed_margin
from planner.estimate.core import Assumptions
from planner.estimate.memory import (
    ADAPTER_BYTES,
    ServeSetup,
    TrainSetup,
    base_format,
    kv_bytes_per_sequence,
    layer_split,
    lora_params,
)
from planner.estimate.precision import WEIGHT_BYTES, weight_bytes

# Share of the dense peak that a tuned fine-tune's executed FLOPs reach on one card
# (executed_flops_per_token: recompute counted, frozen weights' gradients not), by chip
# family, fitted together with the communication model below on the calibration set's
# training rows, full fine-tunes and LoRA alike (benchmarks/RESULTS.md lists them): Ampere
# data-centre cards reach a larger share of their peak than Hopper (A100 rows of torchtitan,
# InternEvo, VectorLM, torchtune; H100/H200 rows of torchtitan, Megatron and NeMo, bf16 and
# FP8 alike); Ada from the RTX 4090 rows (torchtune). The rest have no calibration row and
# are assumed: GeForce Ampere (FP32-accumulate tensor math at half rate) and the 910B 0.35,
# others 0.5.
MFU_BY_ARCHITECTURE = {"ampere": 0.68, "hopper": 0.45, "ada": 0.8}
MFU_ASSUMED = {"ampere-geforce": 0.35, "ascend": 0.35}
MFU_UNKNOWN = 0.5
# A QLoRA base is dequantised by a streaming kernel at this share of the card's bandwidth:
# NF4 0.7, assumed (torchtune's compiled torchao NF4 rows run as fast as their LoRA, so the
# term must stay small); int4 GPTQ/AWQ bases dequantise through auto-gptq's training
# kernels, fitted on the calibration set's Qwen Q-LoRA rows (their step time grows by the
# base's bytes, not its tokens: +0.2 s a micro-batch for 7B, +2.7 s for 72B): 0.10, the
# share whose errors there centre on zero (median -1.1%, mean |error| 6.4%), counting the
# quantised matrices alone (the 16-bit embeddings and LM head are not dequantised).
DEQUANT_BANDWIDTH_SHARE = {"nf4": 0.7, "int4": 0.10}
# Eager (uncompiled) LoRA runs each adapter as its own small modules, a latency per adapted
# matrix per pass beyond its FLOPs (PEFT's Python forward, dropout, two thin matmuls, the
# scaled add), whatever the tokens: fitted on the calibration set's Qwen LoRA rows (at 256
# tokens a micro-batch their steps took 2-3 × the FLOPs' time; at 8,192 barely more).
ADAPTER_SECONDS = 120e-6
# ZeRO-3/FSDP gathers each layer's weights in collectives of its own, forward and backward
# (and the recompute): a latency per layer per pass beyond the bytes, counted with the step's
# communication (so it hides behind compute as the bytes do). 4 ms, fitted on the calibration
# set's training rows (Qwen-72B LoRA under DeepSpeed ZeRO-3 on 4 A100s took 17.6 s for 8
# micro-batches of 256 tokens, twice their FLOPs and bytes; the FSDP rows of torchtitan and
# VectorLM, with long micro-batches, hide it).
GATHER_SECONDS = 4e-3
OFFLOAD_SPEED = {"none": 1.0, "optimizer": 0.85, "optimizer+params": 0.6}
# Scaling over cards: each optimizer step's collectives (NCCL-style rings) move, per card,
# (n − 1)/n of: twice the gradients under data parallelism or ZeRO-1/2 (all-reduce), or the
# weights twice (all-gathered for forward and backward) plus the gradients (reduce-scatter)
# under ZeRO-3/FSDP. Within a node over the card's link, across nodes over the node's
# network (hierarchical: each node moves the volume once over its NICs). Communication hides
# behind COMM_OVERLAP of the step's compute; what is left stretches the step. Fitted on the
# calibration set's multi-card rows (benchmarks/RESULTS.md).
# Share of the link's per-direction GB/s a collective reaches; GeForce cards without
# peer-to-peer copy through host memory, over a bridge both cards share (fitted: 0.2).
LINK_SHARE = {"nvlink": 0.8, "hccs": 0.8, "pcie": 0.8, "pcie-no-p2p": 0.2}
NETWORK_SHARE = 0.8  # of the node's network, per direction
COMM_OVERLAP = 0.5
NODE_LATENCY_S = 5e-3  # per node a step's collectives cross (ring hops, stragglers)
SLOW_NETWORK_GBPS = 25.0  # nodes without a stated network: plain Ethernet, assumed
GRAD_BYTES = 2.0  # 16-bit gradients are what the collectives move (LoRA: the adapters' format)
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
# gpt-fast's weight-only int8 and int4 linears dequantise in kernels of their own, which at
# batch 1 cost a latency per layer beyond their bytes: 30 µs, fitted on the calibration set's
# gpt-fast int8/int4 rows (their errors were +11% to +29% without it, and grew with the layer
# count per card: worst on 8-way tensor parallel, where each card's bytes are few).
LAYER_SECONDS = {("gpt-fast", True): 30e-6}
# Each expert a decode step touches is its own small GEMM launch: fitted on the calibration
# set's Qwen3-30B-A3B (SGLang) row; Mixtral's two experts per layer barely feel it.
EXPERT_SECONDS = 9e-6
TP_DECODE_COST = {"nvlink": 0.12, "hccs": 0.12, "pcie": 0.3, "pcie-no-p2p": 0.45}
# Share of the dense peak a prefill (and a compute-bound decode batch) reaches, by chip
# family: the calibration set's time-to-first-token rows. Hopper at 16 bit 0.33 (TensorRT-LLM
# 8B and 70B on H100 at light load); A100 about twice that share, 0.68 (TensorRT-LLM and
# LMDeploy, Llama-2-7B, 2,048-token prompts: 133 and 139 ms); FP8 reaches 1.36 × the 16-bit
# share of its doubled peak (the H100 and H200 FP8 rows ran 1.26 and 1.46 × faster than that
# share; TensorRT-LLM's FP8 kernels). Other families have no calibration row: 0.33, assumed.
PREFILL_MFU = 0.33
PREFILL_EFFICIENCY = {"ampere": 0.68, "hopper": 0.33}
FP8_COMPUTE_SHARE = 1.36
# A serving step of at least BATCHED_TOKENS tokens (a large decode batch, prompt chunks
# beside it) runs its GEMMs at this share of the dense peak. The prefill shares above come
# from time to first token at light load, which also holds the scheduler's and a decode
# step's latency; thousands of tokens a step keep the tensor cores busier. Hopper 0.55:
# fitted on the calibration set's batched-throughput rows (TensorRT-LLM at max load; 0.33
# left them 13% slow at the median and 40% at p90, 0.55 gives +3% and 23%); A100 keeps its
# prefill share (the fit did not move it); other families the Hopper prefill share, assumed.
BATCHED_TOKENS = 1024
BATCH_COMPUTE_SHARE = {"ampere": 0.68, "hopper": 0.55}
BATCH_COMPUTE_UNKNOWN = 0.33


def mfu_default(card: CardType) -> tuple[float, str]:
    """The share of `card`'s dense peak an estimate's executed FLOPs reach, and where it comes
    from: the same for every method (LoRA's cost is in the FLOPs it executes)."""
    family = card.architecture.value.lower()
    if family in MFU_BY_ARCHITECTURE:
        mfu, source = MFU_BY_ARCHITECTURE[family], f"measured on {family} cards"
    elif family in MFU_ASSUMED:
        mfu, source = MFU_ASSUMED[family], f"assumed for {family} cards (no measurement)"
    else:
        mfu, source = MFU_UNKNOWN, f"assumed ({family} cards have no measurement)"
    return mfu, source


def peak_flops(card: CardType, precision: str) -> float:
    """Dense peak FLOP/s for the training precision (fp8 doubles it on cards that have it)."""
    tflops = card.bf16_tflops.value
    if precision == "fp8" and card.fp8.value:
        tflops *= 2
    elif precision == "fp32":
        tflops /= 2  # TF32 tensor cores run at half the 16-bit rate
    return tflops * 1e12


def flops_per_token(model: ModelCard, setup: TrainSetup) -> tuple[float, str]:
    """Model FLOPs per token (what MFU counts): 6P (full), 4P (LoRA: no weight gradients for
    frozen weights), 2P (forward only), plus attention 12·L·h·s (a third of it forward only).
    P = active params."""
    params = float(model.active_params)
    factor = {"full": 6.0, "lora": 4.0, "qlora": 4.0, "eval": 2.0}[setup.method]
    attention = 12.0 * model.layers * model.hidden * setup.seq_len
    if setup.method == "eval":
        attention /= 3
    return factor * params + attention, f"{factor:g}·P + attention FLOPs per token"


def executed_flops_per_token(model: ModelCard, setup: TrainSetup) -> tuple[float, str]:
    """FLOPs a card executes per token, pass by pass: the forward 2P; the backward's input
    gradients 2P, through every layer, frozen or not (the loss's gradient must reach the
    first adapter); weight gradients 2P for trained weights only (a full fine-tune: LoRA's
    adapters are r·(in + out) a matrix, negligible); with activation checkpointing one more
    forward (2P) recomputes what was dropped. Attention has no weights: 4·L·h·s a forward,
    twice that in the backward. P = active params."""
    params = float(model.active_params)
    attention = 4.0 * model.layers * model.hidden * setup.seq_len
    if setup.method == "eval":
        return 2.0 * params + attention, "forward 2·P + attention FLOPs per token"
    passes = ["forward 2·P", "input gradients 2·P"]
    if setup.method == "full":
        passes.append("weight gradients 2·P")
    linear, attn = 2.0 * len(passes), 3.0
    if setup.knobs.checkpointing:
        passes.append("recompute 2·P")
        linear, attn = linear + 2.0, attn + 1.0
    text = " + ".join(passes) + " + attention FLOPs per token executed"
    return linear * params + attn * attention, text


def link_kind(card: CardType) -> str:
    """The card's link between cards of a node; PCIe without peer-to-peer is its own kind."""
    if card.interconnect.value == "pcie" and not card.p2p.value:
        return "pcie-no-p2p"
    return card.interconnect.value


def link_gbs(card: CardType) -> float:
    """Per-direction GB/s a collective reaches on the card's link within a node: NVLink and
    HCCS are quoted as both directions together, PCIe per direction."""
    gbs = card.interconnect_gbs.value
    if card.interconnect.value in ("nvlink", "hccs"):
        gbs /= 2
    return gbs * LINK_SHARE[link_kind(card)]


def step_volume(model: ModelCard, setup: TrainSetup) -> tuple[float, str]:
    """Bytes a step's collectives move (before the (n − 1)/n of a ring)."""
    k = setup.knobs
    if setup.method in ("lora", "qlora"):
        rank, targets = k.lora_rank or 16, k.lora_targets or "attn"
        trained = float(lora_params(model, rank, targets))
        grads = trained * ADAPTER_BYTES[k.lora_precision or "fp32"]
        weights = weight_bytes(model, base_format(setup), Assumptions())
    else:
        grads = float(model.params) * GRAD_BYTES
        weights = float(model.params) * 2.0
    if (k.zero or 0) >= 3:
        return 2 * weights + grads, "weights all-gathered twice + gradients reduce-scattered"
    return 2 * grads, "gradients all-reduced"


def scaling_efficiency(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: TrainSetup,
    cards_per_node: int = 8,
    network: Network | None = None,
    one_card: float | None = None,
) -> tuple[float, str]:
    """Share of linear speed-up kept over `cards` cards (1 for one card), in (0, 1]: a step's
    compute on one card (at `one_card` tokens/s where the caller has it) against its
    collectives' exposed time."""
    if cards <= 1 or setup.method == "eval":
        return 1.0, ""
    if one_card is None:
        one_card = single_card_speed(model, card, setup)[0]
    compute = setup.tokens / one_card
    volume, what = step_volume(model, setup)
    in_node = min(cards, cards_per_node)
    nodes = math.ceil(cards / cards_per_node)
    # a ring moves (n − 1)/n of the volume through each card: what is timed and said
    moved = volume * (in_node - 1) / in_node
    seconds = moved / (link_gbs(card) * 1e9) if in_node > 1 else 0.0
    text = f"{what}: {volume / 1e9:.1f} GB a step"
    if in_node > 1:
        text += (
            f", each card moving {moved / 1e9:.1f} GB of it over {link_kind(card)} at "
            f"{link_gbs(card):.0f} GB/s"
        )
    if (setup.knobs.zero or 0) >= 3:
        seconds += model.layers * passes(setup) * GATHER_SECONDS
        text += (
            f", {model.layers} layers gathered {passes(setup)} times "
            f"({GATHER_SECONDS * 1e3:g} ms each)"
        )
    if nodes > 1:
        gbps = network.gbps if network is not None else SLOW_NETWORK_GBPS
        across = volume * (nodes - 1) / nodes
        seconds += across / (gbps / 8 * NETWORK_SHARE * 1e9)
        seconds += NODE_LATENCY_S * nodes
        text += (
            f" and {across / 1e9:.1f} GB over a {gbps:g} Gb/s network"
            + ("" if network is not None else " (assumed)")
            + f" at {NETWORK_SHARE:.0%} of its rate, {NODE_LATENCY_S * 1e3:g} ms a node"
        )
    exposed = max(0.0, seconds - COMM_OVERLAP * compute)
    text += f"; {seconds:.2f} s against {compute:.2f} s of compute, {COMM_OVERLAP:.0%} overlapped"
    return compute / (compute + exposed), text


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
    # Model FLOPs utilisation of the tokens/s itself, per card computing, the scaling
    # efficiency in it: tokens_per_s = cards computing × peak × mfu ÷ model FLOPs per token.
    mfu: float = 0.0


def single_card_speed(
    model: ModelCard,
    card: CardType,
    setup: TrainSetup,
    notes: Assumptions | None = None,
) -> tuple[float, float]:
    """Tokens/s of one card running the job, and of its compute alone: peak × the family's
    utilisation ÷ the FLOPs executed per token (recompute included), then less QLoRA's
    dequantisation, eager adapters' latency and CPU offload. A stated MFU counts model
    FLOPs, recompute inside it, and pays the same. The "mfu" note states the share of the
    peak; `train_speed` ends it with the MFU of the speed it returns."""
    notes = notes if notes is not None else Assumptions()
    peak = peak_flops(card, setup.precision)
    model_work, _ = flops_per_token(model, setup)
    notes.card(card, "bf16_tflops")
    if setup.knobs.mfu:
        speed = peak * setup.knobs.mfu / model_work
        notes.add("flops", f"{model_work / 1e9:.0f} GFLOPs of model work per token")
        notes.add(
            "mfu",
            f"{setup.knobs.mfu:.0%} of {card.id}'s dense peak on model FLOPs (stated: per "
            "card, before multi-card overhead, which the scaling efficiency adds)",
        )
    else:
        work, work_text = executed_flops_per_token(model, setup)
        share, source = mfu_default(card)
        speed = peak * share / work
        notes.add("flops", work_text)
        # a quantised base computes in 16 bit (no int4/int8 tensor-core training)
        computes = "16-bit" if setup.precision in QUANTISED_BASES else setup.precision
        notes.add(
            "mfu",
            f"{share:.0%} of {card.id}'s dense {computes} peak on the executed FLOPs ({source})",
        )
    compute = speed
    fmt = base_format(setup)
    if setup.method in ("lora", "qlora") and fmt in QUANTISED_BASES:
        seconds = dequantise_seconds(model, card, setup)
        speed = setup.tokens / (setup.tokens / speed + seconds)
        bits = "8-bit" if fmt == "int8" else "4-bit"
        notes.add(
            "qlora",
            f"a {bits} base is dequantised to 16 bit once a pass: {seconds * 1e3:.0f} ms "
            f"a micro-batch of {setup.tokens} tokens",
        )
    latency, what = fixed_seconds(model, setup)
    if latency:
        speed = setup.tokens / (setup.tokens / speed + latency)
        notes.add("latency", f"{latency * 1e3:.0f} ms a micro-batch of fixed latency ({what})")
    offload = OFFLOAD_SPEED[setup.knobs.offload or "none"]
    if offload < 1:
        speed *= offload
        notes.add("offload_speed", f"CPU offload: {offload:.0%} of on-card speed")
    return speed, compute


def mfu_of(model: ModelCard, card: CardType, setup: TrainSetup, tokens_per_s: float) -> float:
    """Model FLOPs utilisation of one card at `tokens_per_s` (docs/estimates.md): model FLOPs
    per token (6P or 4P + attention) × tokens/s ÷ the dense peak."""
    return tokens_per_s * flops_per_token(model, setup)[0] / peak_flops(card, setup.precision)


# What a job's speed pays beyond its compute, by the note that states it: the MFU stated
# beside the compute's share of the peak is what remains after them.
SPEED_COSTS = {
    "qlora": "dequantisation",
    "latency": "fixed latency",
    "offload_speed": "offload",
    "padding": "padding",
    "speed_margin": "speed margin",
}


# base formats a LoRA trains over by dequantising each matrix for its 16-bit GEMMs
QUANTISED_BASES = ("nf4", "int4", "int8")


def passes(setup: TrainSetup) -> int:
    """Passes over the layers a micro-batch makes: forward, backward, and the recompute."""
    return 3 if setup.knobs.checkpointing else 2


def dequantise_seconds(model: ModelCard, card: CardType, setup: TrainSetup) -> float:
    """Memory time a QLoRA micro-batch spends dequantising its base: each pass over the
    layers reads every quantised matrix in its packed format and writes it out in 16 bit for
    the GEMM, at the bandwidth share its kernels reach (DEQUANT_BANDWIDTH_SHARE). The
    embeddings and LM head stay 16-bit and are not dequantised."""
    fmt = base_format(setup)
    quantised = float(model.params - model.embedding_params)
    packed = quantised * WEIGHT_BYTES[fmt]
    written = 2.0 * quantised
    bandwidth = card.bandwidth_gbs.value * 1e9 * DEQUANT_BANDWIDTH_SHARE.get(fmt, 0.7)
    return passes(setup) * (packed + written) / bandwidth


def adapters_per_layer(model: ModelCard, targets: str) -> int:
    """Adapted matrices a token passes in one layer: q, v; q, k, v, o; or those and the MLP's
    three (each expert the token is routed to, on a mixture of experts)."""
    count = {"qv": 2, "attn": 4, "all": 4}[targets]
    if targets == "all":
        routed = 1 if model.moe is None else model.moe.experts_per_token + model.moe.shared_experts
        count += 3 * routed
    return count


def fixed_seconds(model: ModelCard, setup: TrainSetup) -> tuple[float, str]:
    """Latency a micro-batch pays whatever its tokens: eager LoRA's adapter modules
    (ADAPTER_SECONDS a matrix a pass)."""
    seconds, parts = 0.0, []
    k = setup.knobs
    if setup.method in ("lora", "qlora") and not k.compile:
        adapters = model.layers * adapters_per_layer(model, k.lora_targets or "attn")
        seconds += adapters * passes(setup) * ADAPTER_SECONDS
        parts.append(f"{adapters} eager adapters × {passes(setup)} passes")
    return seconds, ", ".join(parts)


def train_speed(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: TrainSetup,
    cards_per_node: int = 8,
    network: Network | None = None,
) -> TrainSpeed:
    """Estimated tokens/s of the whole job: one card's speed × cards × scaling efficiency."""
    notes = Assumptions()
    one, one_compute = single_card_speed(model, card, setup, notes)
    # A sequential layer split (pipeline) computes on one card at a time.
    parallel = 1 if setup.knobs.pipeline else cards
    efficiency, eff_text = scaling_efficiency(
        model, card, parallel, setup, cards_per_node, network, one
    )
    speed = one * parallel * efficiency
    if parallel > 1:
        notes.add("scaling", f"scaling efficiency {efficiency:.0%} on {cards} cards ({eff_text})")
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
    slower = speed_margin(setup.speed_margin, kind_of("train_tok_s", setup.method, "", False))
    if slower:
        speed *= 1.0 - slower
        notes.add(
            "speed_margin",
            f"planned at {1 - slower:.0%} of the estimate (speed margin"
            + (
                ": the lower band, how far below such estimates measured speeds lay)"
                if setup.speed_margin == "band"
                else ")"
            ),
        )
    # The MFU the tokens/s shown implies, per card computing (as MFU is measured: the
    # scaling efficiency, each micro-batch's fixed costs, padding and a speed margin are out
    # of it); before the scaling efficiency and in the compute alone, said beside it.
    mfu = mfu_of(model, card, setup, speed / parallel)
    before = mfu_of(model, card, setup, speed / (parallel * efficiency))
    compute = mfu_of(model, card, setup, one_compute)
    text = f": MFU {mfu:.1%} at the tokens/s shown"
    beside = []
    if round(before, 3) != round(mfu, 3):
        beside.append(f"{before:.1%} before the scaling efficiency of {efficiency:.0%}")
    costs = [what for name, what in SPEED_COSTS.items() if any(a.name == name for a in notes.items)]
    if costs and round(compute, 3) != round(before, 3):
        listed = " and ".join([", ".join(costs[:-1]), costs[-1]] if len(costs) > 1 else costs)
        beside.append(f"{compute:.1%} in the compute alone, less the {listed} below")
    if beside:
        text += f" ({'; '.join(beside)})"
    notes.amend("mfu", text)
    return TrainSpeed(speed, efficiency, tuple(str(a) for a in notes.frozen()), mfu)


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
    return VLLM_DECODE_EFFICIENCY[weight_kind(setup)]


def weight_kind(setup: ServeSetup) -> str:
    """The weights' format family: 16bit, int8 (and FP8) or 4bit."""
    if setup.precision in ("int4", "nf4"):
        return "4bit"
    return "int8" if setup.precision == "int8" else "16bit"


def layer_seconds(setup: ServeSetup) -> float:
    """Kernel latency per layer a decode step pays beyond its bytes (LAYER_SECONDS)."""
    quantised = weight_kind(setup) != "16bit"
    return LAYER_SECONDS.get((setup.engine, quantised), 0.0)


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


def compute_efficiency(card: CardType, precision: str, batched: bool = False) -> float:
    """The share of `card`'s dense peak at `precision` that a prefill (PREFILL_EFFICIENCY;
    PREFILL_MFU for families without a measurement) or, `batched`, a serving step of
    thousands of tokens (BATCH_COMPUTE_SHARE) reaches."""
    family = card.architecture.value.lower()
    if batched:
        share = BATCH_COMPUTE_SHARE.get(family, BATCH_COMPUTE_UNKNOWN)
    else:
        share = PREFILL_EFFICIENCY.get(family, PREFILL_MFU)
    if precision == "fp8" and card.fp8.value:
        share *= FP8_COMPUTE_SHARE
    return share


def compute_seconds(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: ServeSetup,
    flops: float,
    batched: bool = False,
) -> float:
    """Seconds for `flops` of forward work over a replica's cards at the compute share (a
    layer split computes on one card at a time; tensor parallel on all, less its overhead)."""
    rate = peak_flops(card, setup.precision) * compute_efficiency(card, setup.precision, batched)
    if layer_split(setup, cards):
        return flops / rate
    return flops / (rate * cards * tp_efficiency(card, cards))


def decode_step_seconds(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, batch: int
) -> float:
    """One decode step of `batch` sequences at `setup.context_tokens` (engine_step_seconds
    with no prompt tokens in it)."""
    return engine_step_seconds(model, card, cards, setup, batch)


def engine_step_seconds(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: ServeSetup,
    batch: int,
    chunk_tokens: float = 0.0,
    prompt_tokens: int = 0,
) -> float:
    """One engine step, as the kernels run it: `batch` sequences decode one token each at
    `setup.context_tokens`, beside `chunk_tokens` tokens of prompts `prompt_tokens` long
    (chunked prefill). The weight GEMMs take the longer of reading the weights and the step's
    2·P FLOPs per token (large steps are compute bound); attention then reads each decoding
    sequence's KV cache and computes the prompt chunk's 2·L·h·s FLOPs per token (its own
    kernels: they do not hide behind the GEMMs); tensor parallel adds two all-reduces per
    layer of the step's activations; plus per-layer kernel latency, one launch per expert
    touched, and the engine's scheduler and sampler. Tensor parallel reads each card's
    share at once; a layer split reads them in turn."""
    tokens = batch + chunk_tokens
    weights = weights_read_per_step(model, setup, math.ceil(tokens)) / cards
    kv = batch * kv_bytes_per_sequence(model, setup, cards)
    bandwidth = card.bandwidth_gbs.value * 1e9 * decode_efficiency(setup)
    fixed = model.layers * experts_touched(model, math.ceil(tokens)) * EXPERT_SECONDS
    fixed += ENGINE_STEP_SECONDS.get(setup.engine, 0.0)
    fixed += model.layers * layer_seconds(setup)
    batched = tokens >= BATCHED_TOKENS
    gemm = compute_seconds(model, card, cards, setup, 2.0 * model.active_params * tokens, batched)
    attention = compute_seconds(
        model, card, cards, setup, 2.0 * model.layers * model.hidden * prompt_tokens * chunk_tokens
    )
    if layer_split(setup, cards):
        return max(weights * cards / bandwidth, gemm) + kv * cards / bandwidth + attention + fixed
    allreduce = tp_allreduce_seconds(model, card, cards, tokens)
    return max(weights / bandwidth, gemm) + kv / bandwidth + attention + allreduce + fixed


def tp_allreduce_seconds(model: ModelCard, card: CardType, cards: int, tokens: float) -> float:
    """A tensor-parallel step's all-reduces: two per layer (after attention and after the
    MLP), each a latency plus the step's 16-bit activations (tokens × hidden × 2 B) moved
    2(n − 1)/n times over the link (a ring)."""
    if cards <= 1:
        return 0.0
    moved = tokens * model.hidden * 2.0 * 2 * (cards - 1) / cards
    each = ALLREDUCE_SECONDS[link_kind(card)] + moved / (link_gbs(card) * 1e9)
    return 2 * model.layers * each
