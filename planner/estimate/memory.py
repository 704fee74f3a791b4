"""Memory per card: serving (weights, KV cache, workspace) and training (by recipe).

Formulas and defaults: docs/estimates.md. Every term is returned by name, in bytes, with the
assumptions that produced it, so a user can see why a card fits or not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TypeVar

from planner.domain.catalog import CardType
from planner.domain.model_card import ModelCard
from planner.domain.recipes import TrainKnobs
from planner.domain.scenario import Scenario
from planner.domain.workload import TrainWorkload
from planner.estimate.bands import kind_of, memory_margin
from planner.estimate.core import GIB, Assumptions, MemoryEstimate, gib, usable_bytes
from planner.estimate.precision import QUANTISED, WEIGHT_BYTES, kv_bytes_per_token, weight_bytes

KV_BLOCK_TOKENS = 16  # vLLM pages the KV cache in blocks of 16 tokens
# Outside the weights, KV and workspace: vLLM's logged non-torch memory (0.06-0.35 GiB) with
# slack; CUDA graphs are captured after the KV cache is sized. HF: the CUDA context.
SERVE_OVERHEAD_GIB = {"vllm": 0.4, "hf": 0.75}
TRAIN_OVERHEAD_GIB = 1.0  # CUDA context, cuBLAS workspace, allocator slack
# A quantised base's terms beyond its packed weights (_quantised_terms): the 16-bit copies
# live at once, and a trainer's fixed working memory per card (none in a plain loop around
# PEFT and bitsandbytes, the probe's and Answer.AI's fsdp_qlora: knob plain_loop). Beside
# every training job's total, not in it: the freed blocks the caching allocator keeps, a
# share of the transient tensors (activations and logits), which reserved and nvidia-smi
# peaks show and the need does not count (_cached_blocks). The fixed part per 4-bit format
# (on QLoRA peaks) and the share (on reserved and device-level training peaks): `python
# benchmarks/estimate_accuracy.py --fit-memory`, least mean |relative error| on the
# calibration set, each figure compared with what it counts; a test pins them.
DEQUANT_COPIES = 2
QLORA_WORKING_GIB = {"nf4": 3.3, "int4": 1.4}
CACHED_SHARE = 0.41  # × (activations + logits) of a training job
# Bytes per adapter parameter, for its weight and again for its gradient.
ADAPTER_BYTES = {"fp32": 4.0, "bf16": 2.0}
BASE_FORMATS = {"nf4": "NF4 (bitsandbytes/torchao)", "int4": "int4 (GPTQ/AWQ)"}
FUSED_LOSS_CHUNK = 4096  # tokens whose logits a fused loss holds at once (assumed)
NCCL_GIB = 0.5  # communication buffers when a job spans cards
# Optimizer bytes per trained parameter, and whether its states page out to CPU RAM.
OPTIMIZER_BYTES = {
    "adamw": (12.0, "mixed-precision AdamW: fp32 master copy + m + v = 12 B/param"),
    "adamw-bf16": (4.0, "pure bf16 AdamW: bf16 m + v = 4 B/param, no master copy"),
    "adamw-8bit": (2.0, "8-bit AdamW: int8 m + v = 2 B/param"),
    "paged-adamw-8bit": (2.0, "paged 8-bit AdamW: 2 B/param, pages to CPU RAM under pressure"),
    "paged-adamw": (8.0, "paged 32-bit AdamW: m + v = 8 B/param, pages to CPU RAM"),
    "sgd": (0.0, "no optimizer state"),
}


# --- serving --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServeSetup:
    """How a model is served; every field but `batched_tokens` is a knob of `plan fit --task
    serve` (`max_seqs`: `--max-num-seqs`)."""

    precision: str = "bf16"
    kv_precision: str | None = None  # default: 16-bit KV
    engine: str = "vllm"
    usable_fraction: float = 0.90
    context_tokens: int = 4096
    # Output tokens per request (the rest of context_tokens is the prompt): with it, each
    # request's speed counts the prefills of the requests that start while it decodes.
    output_tokens: int | None = None
    concurrency: int = 1
    batched_tokens: int = 8192  # vLLM max_num_batched_tokens: the profiling pass's size
    # vLLM max_num_seqs (its default 256): the requests a replica runs at once, and the rows
    # of logits its profiling pass samples
    max_seqs: int = 256
    pipeline: bool = False  # vLLM: layers split in sequence over the cards, not tensor parallel
    margin: float | str = 0.0  # safety margin: a fraction, or "band" (the kind's error band)
    offset_gib: float = 0.0  # measured − estimated on this card (a calibration), added as a term

    @property
    def kv(self) -> str:
        return self.kv_precision or ("fp16" if self.precision == "fp16" else "bf16")


def ffn_width(model: ModelCard) -> int:
    """Intermediate width a token passes through: the dense FFN, or its top-k experts."""
    if model.moe is None:
        return model.intermediate
    return model.moe.expert_intermediate * (model.moe.experts_per_token + model.moe.shared_experts)


def _ffn_text(model: ModelCard) -> str:
    """`ffn_width` as its numbers: the FFN width, or the routed (and shared) experts' own."""
    if model.moe is None:
        return f"{model.intermediate:,}"
    routed = model.moe.experts_per_token + model.moe.shared_experts
    return f"{routed} experts × {model.moe.expert_intermediate:,}"


def kv_bytes_per_sequence(model: ModelCard, setup: ServeSetup, cards: int) -> float:
    """KV cache one request holds on one card, in whole 16-token blocks."""
    tokens = math.ceil(setup.context_tokens / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS
    return tokens * kv_bytes_per_token(model, setup.kv, cards)


def serve_memory(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup
) -> tuple[MemoryEstimate, float]:
    """Memory per card of one replica over `cards` (tensor parallel for vLLM unless `pipeline`,
    layer split for HF), at `setup.concurrency` requests of `setup.context_tokens`; and the
    KV budget left (after the safety margin)."""
    notes = Assumptions()
    weights = weight_bytes(model, setup.precision, notes) / cards
    kv_seq = kv_bytes_per_sequence(model, setup, cards)
    split = layer_split(setup, cards)
    notes.add(
        "kv",
        f"KV cache {setup.kv}: {kv_bytes_per_token(model, setup.kv, cards) / 1024:.0f}"
        f" KiB/token per card, {KV_BLOCK_TOKENS}-token blocks",
    )
    # One layer's 16-bit working set per token: 2 × (3f + 3h) B, which reproduces vLLM's
    # logged activation peaks for Llama-3.1-8B (0.85 GiB at 8,192 tokens, 2.07 at 20,000).
    shard = 1 if split else cards
    per_token = 2.0 * (3 * ffn_width(model) / shard + 3 * model.hidden)
    if setup.engine == "vllm":
        tokens, rows = setup.batched_tokens, setup.max_seqs
        notes.add(
            "workspace",
            f"vLLM profiling pass: {setup.batched_tokens} batched tokens, "
            f"{setup.max_seqs} sampled rows of fp32 logits",
        )
        notes.add(
            "engine",
            f"vLLM pre-allocates {setup.usable_fraction:.0%} of the card; the "
            "KV cache gets what weights and workspace leave",
        )
    else:
        tokens, rows = setup.concurrency * setup.context_tokens, setup.concurrency
        notes.add(
            "engine",
            f"HF generate: memory grows with the batch; whole-batch prefill; usable: "
            f"{setup.usable_fraction:.0%} of the card (a scenario's usable_memory_fraction)",
        )
    activations = tokens * per_token + rows * model.vocab * 4.0
    if split:
        notes.add("split", f"layers split in sequence over {cards} cards, not tensor parallel")
    outside = SERVE_OVERHEAD_GIB.get(setup.engine, SERVE_OVERHEAD_GIB["hf"])
    overhead = (outside + (0.25 if cards > 1 else 0.0)) * GIB
    notes.add(
        "overhead",
        f"{overhead / GIB:.2f} GiB per card outside the model: CUDA context"
        + (", inter-card buffers" if cards > 1 else ""),
    )
    notes.card(card, "memory_gib")
    usable = usable_bytes(card, setup.usable_fraction)
    breakdown = {
        "weights": weights,
        "kv_cache": setup.concurrency * kv_seq,
        "activations": activations,
        "overhead": overhead,
    }
    formulas: dict[str, str] = {}
    _calibration_term(setup.offset_gib, breakdown, formulas, notes)
    how = f"÷ {cards} cards ({'layer split' if split else 'tensor parallel'})" if cards > 1 else ""
    formulas |= {
        "weights": f"{model.params / 1e9:.2f}B params × {setup.precision}"
        + (" (embeddings and LM head 16-bit)" if setup.precision in QUANTISED else "")
        + (f" {how}" if how else ""),
        "kv_cache": f"{setup.concurrency} requests × {_blocks(setup)} tokens (16-token blocks) × "
        f"{kv_bytes_per_token(model, setup.kv, cards) / 1024:.0f} KiB",
        "activations": f"{tokens} tokens × 2(3 × {_ffn_text(model)}"
        f"{'' if shard == 1 else f' ÷ {shard}'} + 3 × {model.hidden:,}) B "
        f"+ {rows} rows × {model.vocab} vocab × 4 B",
        "overhead": f"{overhead / GIB:.2f} GiB context"
        + (" and inter-card buffers" if cards > 1 else ""),
    }
    formulas = {term: f"{formulas[term]} = {gib(breakdown[term])}" for term in breakdown}
    kind = kind_of("serve_memory", "serve", setup.engine, False)
    margin = memory_margin(setup.margin, kind)
    estimate = MemoryEstimate(breakdown, usable, notes.frozen(), formulas, margin, kind)
    return estimate, estimate.room_for("kv_cache")


def _calibration_term(
    offset_gib: float, breakdown: dict[str, float], formulas: dict[str, str], notes: Assumptions
) -> None:
    """A measured correction (plan probe memory --save) as its own term, signed."""
    if offset_gib:
        breakdown["calibration"] = offset_gib * GIB
        formulas["calibration"] = "measured − estimated peak on this card (calibration file)"
        notes.add("measured", f"calibrated: {offset_gib:+.2f} GiB measured on this card")


def layer_split(setup: ServeSetup, cards: int) -> bool:
    """Whether a replica's layers run in sequence over its cards (HF device_map, or vLLM
    pipeline parallel) rather than tensor parallel."""
    return cards > 1 and (setup.engine == "hf" or setup.pipeline)


def _blocks(setup: ServeSetup) -> int:
    return math.ceil(setup.context_tokens / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS


def max_concurrency_by_memory(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup
) -> int:
    """Requests of `context_tokens` whose KV cache fits beside weights and workspace."""
    _, budget = serve_memory(model, card, cards, setup)
    return max(0, math.floor(budget / kv_bytes_per_sequence(model, setup, cards)))


# --- training -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainSetup:
    """A training job's shape; `knobs` are the recipe's knobs in force (all set)."""

    method: str  # full | lora | qlora | eval
    knobs: TrainKnobs
    precision: str = "bf16"
    seq_len: int = 2048
    micro_batch: int = 1
    usable_fraction: float = 0.90
    margin: float | str = 0.0  # safety margin: a fraction, or "band" (the kind's error band)
    offset_gib: float = 0.0  # measured − estimated on this card (a calibration), added as a term
    # Planned speed = estimate × (1 − speed margin): a fraction, or "band" (the kind's lower
    # band: how far below its estimates measured speeds have lain).
    speed_margin: float | str = 0.0

    @property
    def tokens(self) -> int:
        return self.seq_len * self.micro_batch


S = TypeVar("S", ServeSetup, TrainSetup)


def for_card(setup: S, scenario: Scenario, model: ModelCard, card: str, task: str) -> S:
    """The setup with the scenario's measured memory correction for this model, card, task."""
    offset = scenario.memory_offset_gib(model.name, card, task)
    return replace(setup, offset_gib=offset) if offset else setup


def workload_setup(
    workload: TrainWorkload,
    usable_fraction: float,
    margin: float | str = 0.0,
    speed_margin: float | str = 0.0,
) -> TrainSetup:
    """The training shape a scenario's train workload states."""
    return TrainSetup(
        workload.method,
        workload.knobs,
        workload.precision,
        workload.seq_len,
        workload.micro_batch,
        usable_fraction,
        margin,
        speed_margin=speed_margin,
    )


def block_params(model: ModelCard) -> int:
    """Parameters of one transformer block (attention + FFN or all experts)."""
    return (model.architecture_params() - model.embedding_params - model.hidden) // model.layers


def lora_params(model: ModelCard, rank: int, targets: str) -> int:
    """Adapter parameters: rank × (d_in + d_out) for each adapted matrix of every layer
    (`all` on a mixture of experts adapts every expert's three matrices)."""
    q = model.heads * model.dim_per_head
    kv = model.kv_heads * model.dim_per_head
    h = model.hidden
    shapes = [(h, q), (h, kv)] if targets == "qv" else [(h, q), (h, kv), (h, kv), (q, h)]
    if targets == "all":
        f = model.intermediate if model.moe is None else model.moe.expert_intermediate
        experts = 1 if model.moe is None else model.moe.experts + model.moe.shared_experts
        shapes += [(h, f), (h, f), (f, h)] * experts
    return model.layers * sum(rank * (d_in + d_out) for d_in, d_out in shapes)


def activation_bytes_per_token_layer(model: ModelCard, setup: TrainSetup) -> float:
    """Saved activations per token per layer (16-bit): 12h + 4h_kv + 8f with flash attention;
    torch.compile fuses the norms and SwiGLU so 8h + 4h_kv + 4f stay; eager attention adds the
    softmax scores, 5 × heads × seq_len bytes (Korthikanti et al.); a mixture of experts adds
    its router logits (fp32) and the dispatched copies of each token, 4E + 4kh."""
    h_kv = model.kv_heads * model.dim_per_head
    h, f = model.hidden, ffn_width(model)
    compiled = bool(setup.knobs.compile)
    per_token = (8 if compiled else 12) * h + 4 * h_kv + (4 if compiled else 8) * f
    if setup.knobs.attention == "eager":
        per_token += 5 * model.heads * setup.seq_len
    if model.moe is not None:
        per_token += 4 * model.moe.experts + 4 * model.moe.experts_per_token * h
    return float(per_token)


def train_memory(model: ModelCard, card: CardType, cards: int, setup: TrainSetup) -> MemoryEstimate:
    """Memory per card of a training job over `cards` cards: data parallel (sharded by ZeRO),
    or its layers split in sequence over the cards (`pipeline`)."""
    notes = Assumptions()
    setup = _consistent(setup, cards, notes)
    k = setup.knobs
    formulas: dict[str, str] = {}
    zero = k.zero or 0
    quantised: dict[str, float] = {}
    if setup.method == "eval":
        weights = weight_bytes(model, setup.precision, notes)
        grads = optimizer = 0.0
        formulas["weights"] = f"{model.params / 1e9:.2f}B params × {setup.precision}"
    elif setup.method == "full":
        weights, grads, optimizer = _full_states(model, setup, cards, notes, formulas)
    else:
        weights, grads, optimizer, quantised = _lora_states(model, setup, cards, notes, formulas)
    if zero == 3 and setup.method != "eval":
        # Frozen weights have no gradients, unless they share FSDP units with trained ones.
        units = 4.0 if setup.method == "full" or mixed_units(setup) else 2.0
        unit = max(block_params(model), model.vocab * model.hidden)
        # A quantised base is gathered packed (its shards are the 4-bit blocks themselves),
        # but the embedding is not quantised: where it is the larger unit it is 16-bit.
        packed = setup.method == "qlora" and block_params(model) >= model.vocab * model.hidden
        width = WEIGHT_BYTES[base_format(setup)] if packed else 2.0
        weights += units * unit * width
        formulas["weights"] += (
            f" + {units:g} gathered units × {unit / 1e6:.0f}M params × {width:.3g} B"
        )
        notes.add(
            "zero3",
            "ZeRO-3/FSDP: 2 gathered units (the largest: a block or the embedding) in flight, "
            + (f"{base_format(setup)} as stored" if packed else "16-bit")
            + (" with gradients" if units == 4 else ""),
        )
    split = min(cards, model.layers) if k.pipeline else 1
    if split > 1:
        weights, grads, optimizer = weights / split, grads / split, optimizer / split
        for term in ("weights", "gradients", "optimizer"):
            if term in formulas:
                formulas[term] = f"({formulas[term]}) ÷ {split} cards"
        notes.add(
            "pipeline",
            f"layers split in sequence over {split} cards (device_map): each holds 1/{split} "
            "of the model states and activations; the last also holds the logits",
        )
    activations, logits = _activation_terms(model, setup, split, notes, formulas)
    cached = _cached_blocks(activations + logits, notes)
    quantised |= _expert_loop_terms(model, setup, split, notes, formulas)
    overhead = (TRAIN_OVERHEAD_GIB + (NCCL_GIB if cards > 1 and split == 1 else 0.0)) * GIB
    formulas["overhead"] = f"{TRAIN_OVERHEAD_GIB:g} GiB context and workspace" + (
        f" + {NCCL_GIB:g} GiB NCCL" if cards > 1 and split == 1 else ""
    )
    notes.add(
        "overhead",
        f"{overhead / GIB:.1f} GiB per card: CUDA context, workspace, "
        "allocator slack" + (", NCCL buffers" if cards > 1 and split == 1 else ""),
    )
    notes.card(card, "memory_gib")
    breakdown = {
        "weights": weights,
        **quantised,
        "gradients": grads,
        "optimizer": optimizer,
        "activations": activations,
        "logits": logits,
        "overhead": overhead,
    }
    _calibration_term(setup.offset_gib, breakdown, formulas, notes)
    formulas.setdefault("gradients", "none: nothing trained")
    formulas.setdefault("optimizer", "none")
    formulas = {term: f"{formulas[term]} = {gib(breakdown[term])}" for term in breakdown}
    usable = usable_bytes(card, setup.usable_fraction)
    notes.add(
        "usable",
        f"usable: {setup.usable_fraction:.0%} of the {card.memory_gib.value:g} GiB the card "
        f"reports = {usable / GIB:.1f} GiB (the rest kept for fragmentation and spikes; "
        "a scenario's usable_memory_fraction)",
    )
    kind = train_kind(model, setup)
    margin = memory_margin(setup.margin, kind)
    return MemoryEstimate(breakdown, usable, notes.frozen(), formulas, margin, kind, cached)


def _expert_loop_terms(
    model: ModelCard, setup: TrainSetup, split: int, notes: Assumptions, formulas: dict[str, str]
) -> dict[str, float]:
    """What a loop over fused experts holds beyond the usual terms (`expert_loop`). HF
    transformers' GptOssExperts trains by looping over the experts its tokens hit, computing
    `current_state @ self.gate_up_proj[expert_idx]` and `... @ self.down_proj[expert_idx]`:
    indexing with a tensor copies each expert's matrices, and the matmul keeps the copy for
    backward, so a layer's forward holds a 16-bit copy of all its experts (every expert is hit
    by a few thousand tokens) until its backward: one layer's with checkpointing (the
    recompute), every layer's without. Trained experts add the index's backward, which
    returns a zero-filled gradient of the whole fused weight per expert (index_put) before it
    is summed into the weight's gradient: one fused gate_up gradient in flight (two thirds of
    the experts' parameters) beyond the layer's gradients the ZeRO-3 units already count."""
    moe, k = model.moe, setup.knobs
    if moe is None or not k.expert_loop:
        return {}
    width = WEIGHT_BYTES["bf16" if setup.precision == "fp8" else setup.precision]
    layer = moe.experts * 3 * model.hidden * moe.expert_intermediate
    layers = 1 if k.checkpointing else math.ceil(model.layers / split)
    copies = layers * layer * width
    formulas["experts"] = (
        f"{layers} layer(s) × {moe.experts} experts' copies ({layer / 1e6:.0f}M params × "
        f"{width:g} B)"
    )
    if setup.method == "full":
        copies += 2 * layer / 3 * width
        formulas["experts"] += (
            f" + one fused gate_up gradient ({2 * layer / 3e6:.0f}M × {width:g} B)"
        )
    notes.add(
        "expert_loop",
        "experts looped over and indexed out of fused weights (HF transformers' gpt-oss): "
        "each expert's 16-bit copy kept for backward"
        + (
            "; a full-size gradient of the fused weights per expert"
            if setup.method == "full"
            else ""
        ),
    )
    return {"experts": copies}


def _consistent(setup: TrainSetup, cards: int, notes: Assumptions) -> TrainSetup:
    """Knobs that cannot hold together, resolved as the frameworks do (and said so)."""
    k = setup.knobs
    if k.pipeline and cards > 1 and (k.zero or 0):
        notes.add("pipeline_zero", "a layer split is one data-parallel replica: no ZeRO sharding")
        k = k.model_copy(update={"zero": 0})
    if k.offload == "optimizer+params" and (k.zero or 0) < 3:
        notes.add(
            "offload_needs_zero3",
            "parameters are offloaded only with ZeRO-3/FSDP full shard: optimizer offloaded only",
        )
        k = k.model_copy(update={"offload": "optimizer"})
    return setup if k is setup.knobs else replace(setup, knobs=k)


def train_kind(model: ModelCard, setup: TrainSetup) -> str:
    """The band kind of a training memory estimate."""
    return kind_of("train_memory", setup.method, "", model.moe is not None)


def _full_states(
    model: ModelCard, setup: TrainSetup, cards: int, notes: Assumptions, formulas: dict[str, str]
) -> tuple[float, float, float]:
    """Weights, gradients and optimizer states of a full fine-tune, per card after sharding."""
    k = setup.knobs
    params = float(model.params)
    # FP8 training (torchao float8) computes matmuls in FP8 but keeps 16-bit weights/grads.
    width = WEIGHT_BYTES["bf16" if setup.precision == "fp8" else setup.precision]
    opt_bytes, opt_text = OPTIMIZER_BYTES[k.optimizer or "adamw"]
    if (k.optimizer or "adamw") == "adamw" and setup.precision == "fp32":
        opt_bytes = 8.0  # fp32 weights are their own master copy
        opt_text = "AdamW on fp32 weights: m + v = 8 B/param, no separate master copy"
    weights, grads, optimizer = params * width, params * width, params * opt_bytes
    p = f"{params / 1e9:.2f}B params"
    formulas.update(
        weights=f"{p} × {width:g} B",
        gradients=f"{p} × {width:g} B",
        optimizer=f"{p} × {opt_bytes:g} B",
    )
    notes.add(
        "states",
        f"weights and gradients {setup.precision}: {width:g} + {width:g} B/param; {opt_text}",
    )
    if k.optimizer_in_backward:
        grads = block_params(model) * width
        formulas["gradients"] = f"one block: {block_params(model) / 1e6:.0f}M params × {width:g} B"
        notes.add("opt_in_bwd", "optimizer steps in backward: one block's gradients live at once")
    zero = k.zero or 0
    shard = f" ÷ {cards} (ZeRO-{zero})" if zero and cards > 1 else ""
    if zero >= 1:
        optimizer /= cards
        formulas["optimizer"] += shard
    if zero >= 2:
        grads /= cards
        formulas["gradients"] += shard
    if zero >= 3:
        weights /= cards
        formulas["weights"] += shard
    if zero and cards > 1:
        notes.add(
            "sharding",
            f"ZeRO-{zero} over {cards} card(s): "
            + ", ".join(["optimizer", "gradients", "weights"][:zero])
            + " sharded",
        )
    optimizer = _offload_and_paging(k, optimizer, notes, formulas)
    if k.offload == "optimizer+params":
        weights = grads = 0.0  # the gathered working units are added by the caller
        formulas.update(weights="offloaded to CPU RAM", gradients="offloaded to CPU RAM")
        notes.add("offload_params", "parameters and gradients offloaded to CPU RAM between uses")
    return weights, grads, optimizer


def _lora_states(
    model: ModelCard, setup: TrainSetup, cards: int, notes: Assumptions, formulas: dict[str, str]
) -> tuple[float, float, float, dict[str, float]]:
    """Frozen base plus adapters (weight and grad in `lora_precision`, optimizer state) per
    card; for a quantised base also its two working terms (`_quantised_terms`)."""
    k = setup.knobs
    base_precision = base_format(setup)
    base = weight_bytes(model, base_precision, notes)
    formulas["weights"] = f"base {model.params / 1e9:.2f}B params × {base_precision}"
    if base_precision in QUANTISED:
        formulas["weights"] += " (embeddings and LM head 16-bit)"
    if (k.zero or 0) >= 3:
        base /= cards
        formulas["weights"] += f" ÷ {cards} (ZeRO-3)"
    rank, targets = k.lora_rank or 16, k.lora_targets or "attn"
    adapters = float(lora_params(model, rank, targets))
    width = ADAPTER_BYTES[k.lora_precision or "fp32"]
    opt_bytes, opt_text = OPTIMIZER_BYTES[k.optimizer or "adamw"]
    if (k.optimizer or "adamw") == "adamw":
        opt_bytes = 2.0 * width  # no master copy: m + v in the adapters' own format
        opt_text = f"AdamW on {k.lora_precision or 'fp32'} adapters: m + v = {opt_bytes:g} B/param"
    shown = {"qv": "q,v", "attn": "q,k,v,o", "all": "all linear"}[targets]
    notes.add(
        "lora",
        f"LoRA rank {rank} on {shown}: {adapters / 1e6:.1f}M adapter params, "
        f"{k.lora_precision or 'fp32'} weight + grad ({width:g} + {width:g} B), {opt_text}",
    )
    # ZeRO shards the adapters' states as it shards a full fine-tune's: stage 1 the
    # optimizer states, 2 the gradients too, 3 (FSDP full shard) the adapter weights too.
    zero = (k.zero or 0) if cards > 1 else 0
    over = [cards if zero >= stage else 1 for stage in (1, 2, 3)]  # optimizer, grads, weights
    by = [f" ÷ {n}" if n > 1 else "" for n in over]
    if zero:
        notes.add(
            "adapter_sharding",
            f"ZeRO-{zero} over {cards} cards shards the adapters' "
            + ", ".join(["optimizer states", "gradients", "weights"][:zero]),
        )
    a = f"{adapters / 1e6:.1f}M adapter params"
    formulas["weights"] += f" + {a} × {width:g} B{by[2]}"
    formulas["gradients"] = f"{a} × {width:g} B{by[1]}"
    formulas["optimizer"] = f"{a} × {opt_bytes:g} B{by[0]}"
    optimizer = _offload_and_paging(k, adapters * opt_bytes / over[0], notes, formulas)
    if k.offload == "optimizer+params":  # the frozen base waits in CPU RAM between uses
        base = 0.0
        formulas["weights"] = f"base offloaded to CPU RAM + {a} × {width:g} B{by[2]}"
        notes.add("offload_params", "frozen base offloaded to CPU RAM between uses")
    extra = _quantised_terms(model, base_precision, bool(k.plain_loop), notes, formulas)
    trained = width * adapters
    frozen = base if mixed_units(setup) else 0.0
    if frozen:
        formulas["gradients"] += f" + base's shard again ({base_precision}, mixed FSDP units)"
        notes.add(
            "mixed_units",
            "FSDP units hold the adapters beside frozen base weights: FSDP keeps the unit's "
            "gradient whole, so the frozen weights get (sharded) gradients as if trained",
        )
    return base + trained / over[2], frozen + trained / over[1], optimizer, extra


def mixed_units(setup: TrainSetup) -> bool:
    """Whether FSDP keeps gradients for frozen base weights: a LoRA job sharded (ZeRO-3/FSDP)
    whose units wrap whole blocks, adapters and frozen 16-bit weights in one flat parameter.
    PyTorch's FSDP docs: with use_orig_params=True "FSDP supports mixing frozen and non-frozen,
    but ... the gradient memory usage will be higher than expected (namely, equivalent to not
    freezing those parameters)"; litgpt's finetune/lora.py (Lightning-AI/litgpt @ 8641822) wraps
    whole Blocks, FSDPStrategy(auto_wrap_policy={Block}), and PyTorch warns for each: "gradient
    memory usage will be higher than expected"; torchtune's FSDP1 recipes, PEFT/accelerate and
    Answer.AI's fsdp_qlora wrap the adapters in units of their own. FSDP2 (fully_shard) keeps
    each parameter its own sharded tensor, so its frozen weights never get gradients."""
    k = setup.knobs
    return bool(k.mixed_units) and (k.zero or 0) >= 3 and base_format(setup) not in QUANTISED


def largest_matrix(model: ModelCard) -> int:
    """Parameters of the largest linear layer a block holds (an expert's, on a mixture of
    experts: each expert is its own matrix)."""
    f = model.intermediate if model.moe is None else model.moe.expert_intermediate
    q = model.heads * model.dim_per_head
    return model.hidden * max(q, f)


def _quantised_terms(
    model: ModelCard,
    base_precision: str,
    plain_loop: bool,
    notes: Assumptions,
    formulas: dict[str, str],
) -> dict[str, float]:
    """What a 4-bit (or 8-bit) base needs beyond its packed weights, per card:

    - `dequant`: the 16-bit copies the kernels dequantise, one matrix at a time (bitsandbytes'
      matmul_4bit, torchao's NF4 linear, GPTQ's dequantising kernels), in forward and again in
      backward: the copy in use and the next one's block, so DEQUANT_COPIES × the largest
      matrix × 2 B. Per layer, never the whole model.
    - `working`: what the trainers that published QLoRA peaks hold beyond every other term,
      QLORA_WORKING_GIB per card for the format here (fitted). It belongs to those trainers
      (litgpt, HF/PEFT scripts, some of torchtune's tables), not to the 4-bit kernels: a
      plain loop around PEFT and bitsandbytes (the probe's on an H200; Answer.AI's
      fsdp_qlora, whose peaks at micro-batch 1 hold nothing beyond the other terms) has
      none (`plain_loop`).
    The allocator's cached blocks, which grow with the batch, come after (_cached_blocks).
    """
    if base_precision not in QUANTISED:
        return {}
    matrix = largest_matrix(model)
    dequant = DEQUANT_COPIES * matrix * 2.0
    formulas["dequant"] = (
        f"{DEQUANT_COPIES} × largest matrix {matrix / 1e6:.0f}M params × 2 B (16-bit copies, "
        "one matrix at a time)"
    )
    fitted = base_precision in QLORA_WORKING_GIB
    working_gib = QLORA_WORKING_GIB.get(base_precision, QLORA_WORKING_GIB["nf4"])
    if plain_loop:
        working_gib = 0.0
        formulas["working"] = "none fixed: a plain loop (measured)"
    else:
        formulas["working"] = f"{working_gib:g} GiB trainer's working memory" + (
            " (fitted; none in a plain loop: --plain-loop)" if fitted else " (NF4's, assumed)"
        )
    fmt = BASE_FORMATS.get(base_precision, f"{base_precision} (8-bit)")
    source = (
        "a plain loop holds no fixed part (measured)"
        if plain_loop
        else "fitted on published QLoRA peaks"
        if fitted
        else "assumed equal to NF4's: no published 8-bit LoRA peaks calibrate it"
    )
    notes.add(
        "base",
        f"{fmt} base, dequantised to 16-bit one matrix at a time ({DEQUANT_COPIES} copies of "
        f"the largest live); {working_gib:g} GiB per card of the trainer's working memory "
        f"({source}); adapters, norms, embeddings and LM head stay 16/32-bit",
    )
    return {"dequant": dequant, "working": working_gib * GIB}


def _cached_blocks(transient: float, notes: Assumptions) -> float:
    """The freed blocks the caching allocator keeps while a training job runs on a card with
    room, CACHED_SHARE × activations and logits (they come and go each step): reserved and
    nvidia-smi peaks show them (fitted on such published peaks); the allocator returns them
    and retries when an allocation fails, so they are not part of the need."""
    cached = CACHED_SHARE * transient
    notes.add(
        "cached",
        f"{CACHED_SHARE:.0%} of activations and logits ({gib(cached)}): blocks the caching "
        "allocator keeps while the card has room (reserved and nvidia-smi peaks show them; "
        "fitted), returned under pressure, so not counted in the total",
    )
    return cached


def base_format(setup: TrainSetup) -> str:
    """The frozen base's format: 16-bit for LoRA; NF4 for QLoRA unless an int4 (GPTQ/AWQ)
    base is stated."""
    if setup.method != "qlora":
        return setup.precision
    return setup.precision if setup.precision in ("nf4", "int4") else "nf4"


def _offload_and_paging(
    k: TrainKnobs, optimizer: float, notes: Assumptions, formulas: dict[str, str]
) -> float:
    if k.offload in ("optimizer", "optimizer+params"):
        notes.add("offload", "optimizer states (and fp32 master) offloaded to CPU RAM")
        formulas["optimizer"] = "offloaded to CPU RAM"
        return 0.0
    if (k.optimizer or "").startswith("paged"):
        notes.add(
            "paged",
            "paged optimizer: its states move to CPU RAM when the card is full,"
            " so they do not set the peak",
        )
        formulas["optimizer"] = "paged to CPU RAM under pressure (not counted)"
        return 0.0
    return optimizer


def _activation_terms(
    model: ModelCard, setup: TrainSetup, split: int, notes: Assumptions, formulas: dict[str, str]
) -> tuple[float, float]:
    """Saved activations and logits per card (data parallel: each card holds its micro-batch;
    a pipeline split: each card its share of the layers)."""
    k = setup.knobs
    tokens = setup.tokens
    per_token = activation_bytes_per_token_layer(model, setup)
    per_layer = per_token * tokens
    layers = math.ceil(model.layers / split)
    attention = "flash attention" if k.attention != "eager" else "eager attention (s² scores)"
    fused = ", torch.compile" if k.compile else ""
    experts = (
        f", top-{model.moe.experts_per_token} of {model.moe.experts} experts' width "
        f"+ router logits + dispatched copies"
        if model.moe is not None
        else ""
    )
    one = f"{tokens} tokens × {per_token:,.0f} B (one layer's working set{fused}{experts})"
    if setup.method == "eval":
        activations = per_layer  # no graph is kept: one layer's working set
        logits = 4.0 * tokens * model.vocab
        formulas["activations"] = one
        formulas["logits"] = f"{tokens} tokens × {model.vocab} vocab × 4 B"
        notes.add("activations", f"forward only: one layer's working set, {attention}")
        return activations, logits
    kept = layers * tokens * 2.0 * model.hidden if k.checkpointing else layers * per_layer
    kept_text = (
        f"{layers} layers × {tokens} tokens × 2h ({2 * model.hidden} B)"
        if k.checkpointing
        else f"{layers} layers × {tokens} tokens × {per_token:,.0f} B"
    )
    if k.activation_offload:
        # What waits for backward sits in CPU RAM; two layers' worth are in flight.
        kept = kept * min(2, layers) / layers
        kept_text = f"2 layers in flight of ({kept_text}) ÷ {layers}"
        notes.add("offload_act", "activation offloading: saved activations wait in CPU RAM")
    if k.checkpointing:
        activations = kept + per_layer
        formulas["activations"] = f"{kept_text} + {one}"
        notes.add(
            "activations",
            f"activation checkpointing: each layer's 16-bit input kept, "
            f"one layer recomputed at a time; {attention}{fused}",
        )
    else:
        activations = kept + (per_layer if k.activation_offload else 0.0)
        formulas["activations"] = kept_text + (f" + {one}" if k.activation_offload else "")
        notes.add(
            "activations",
            f"no checkpointing: {per_token:,.0f} B per token per layer; {attention}{fused}",
        )
    logit_bytes, logit_text = _logit_bytes(k)
    rows = min(tokens, FUSED_LOSS_CHUNK) if k.fused_loss else tokens
    logits = logit_bytes * rows * model.vocab
    formulas["logits"] = f"{rows} tokens × {model.vocab} vocab × {logit_bytes:g} B"
    notes.add("logits", logit_text)
    notes.add("batch", f"micro-batch {setup.micro_batch} × sequence {setup.seq_len} tokens")
    if not k.packed:
        notes.add("unpacked", "unpacked batches: memory at the longest sequence (seq_len)")
    return activations, logits


def _logit_bytes(k: TrainKnobs) -> tuple[float, str]:
    """Bytes per token per vocabulary entry the loss holds at its peak."""
    if k.fused_loss:
        return 4.0, (
            f"fused linear + cross-entropy: one fp32 chunk of {FUSED_LOSS_CHUNK} tokens' "
            "logits at a time, none kept"
        )
    if k.chunked_loss:
        return 2.5, "chunked cross-entropy: 16-bit logits + one fp32 chunk of 8"
    if k.compile:
        return 4.0, "torch.compile fuses the fp32 upcast into the loss: 16-bit logits + grad"
    return 8.0, "fp32 logits and their gradient: 8 B per token per vocabulary entry"
