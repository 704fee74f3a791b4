"""Memory per card: serving (weights, KV cache, workspace) and training (by recipe).

Formulas and defaults: ESTIMATION.md. Every term is returned by name, in bytes, with the
assumptions that produced it, so a user can see why a card fits or not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.domain.catalog import CardType
from planner.domain.model_card import ModelCard
from planner.domain.recipes import TrainKnobs
from planner.domain.workload import TrainWorkload
from planner.estimate.core import GIB, Assumptions, MemoryEstimate, usable_bytes
from planner.estimate.precision import WEIGHT_BYTES, kv_bytes_per_token, weight_bytes

KV_BLOCK_TOKENS = 16  # vLLM pages the KV cache in blocks of 16 tokens
# Outside the weights, KV and workspace: vLLM's logged non-torch memory (0.06-0.35 GiB) with
# slack; CUDA graphs are captured after the KV cache is sized. HF: the CUDA context.
SERVE_OVERHEAD_GIB = {"vllm": 0.4, "hf": 0.75}
TRAIN_OVERHEAD_GIB = 1.0  # CUDA context, cuBLAS workspace, allocator slack
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
    """How a model is served; every field is a knob of `plan fit --task serve`."""

    precision: str = "bf16"
    kv_precision: str | None = None  # default: 16-bit KV
    engine: str = "vllm"
    usable_fraction: float = 0.90
    context_tokens: int = 4096
    concurrency: int = 1
    batched_tokens: int = 8192  # vLLM max_num_batched_tokens: the profiling pass's size
    max_seqs: int = 256  # vLLM max_num_seqs: rows of logits in the sampler

    @property
    def kv(self) -> str:
        return self.kv_precision or ("fp16" if self.precision == "fp16" else "bf16")


def ffn_width(model: ModelCard) -> int:
    """Intermediate width a token passes through: the dense FFN, or its top-k experts."""
    if model.moe is None:
        return model.intermediate
    return model.moe.expert_intermediate * (model.moe.experts_per_token + model.moe.shared_experts)


def kv_bytes_per_sequence(model: ModelCard, setup: ServeSetup, cards: int) -> float:
    """KV cache one request holds on one card, in whole 16-token blocks."""
    tokens = math.ceil(setup.context_tokens / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS
    return tokens * kv_bytes_per_token(model, setup.kv, cards)


def serve_memory(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup
) -> tuple[MemoryEstimate, float]:
    """Memory per card of one replica over `cards` (tensor parallel for vLLM, layer split for
    HF), at `setup.concurrency` requests of `setup.context_tokens`; and the KV budget left."""
    notes = Assumptions()
    weights = weight_bytes(model, setup.precision, notes) / cards
    kv_seq = kv_bytes_per_sequence(model, setup, cards)
    notes.add(
        "kv",
        f"KV cache {setup.kv}: {kv_bytes_per_token(model, setup.kv, cards) / 1024:.0f}"
        f" KiB/token per card, {KV_BLOCK_TOKENS}-token blocks",
    )
    # One layer's 16-bit working set per token: 2 × (3f + 3h) B, which reproduces vLLM's
    # logged activation peaks for Llama-3.1-8B (0.85 GiB at 8,192 tokens, 2.07 at 20,000).
    per_token = 2.0 * (3 * ffn_width(model) / cards + 3 * model.hidden)
    if setup.engine == "vllm":
        activations = setup.batched_tokens * per_token + setup.max_seqs * model.vocab * 4.0
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
        prompt_tokens = setup.concurrency * setup.context_tokens
        activations = prompt_tokens * per_token + setup.concurrency * model.vocab * 4.0
        notes.add("engine", "HF generate: memory grows with the batch; whole-batch prefill")
        if cards > 1:
            notes.add("split", "layers split across cards (device_map='auto'), no tensor parallel")
    overhead = (SERVE_OVERHEAD_GIB[setup.engine] + (0.25 if cards > 1 else 0.0)) * GIB
    notes.add(
        "overhead",
        f"{overhead / GIB:.2f} GiB per card outside the model: CUDA context"
        + (", NCCL" if cards > 1 else ""),
    )
    notes.card(card, "memory_gib")
    usable = usable_bytes(card, setup.usable_fraction)
    breakdown = {
        "weights": weights,
        "kv_cache": setup.concurrency * kv_seq,
        "activations": activations,
        "overhead": overhead,
    }
    kv_budget = usable - weights - activations - overhead
    return MemoryEstimate(breakdown, usable, notes.frozen()), kv_budget


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

    @property
    def tokens(self) -> int:
        return self.seq_len * self.micro_batch


def workload_setup(workload: TrainWorkload, usable_fraction: float) -> TrainSetup:
    """The training shape a scenario's train workload states."""
    return TrainSetup(
        workload.method,
        workload.knobs,
        workload.precision,
        workload.seq_len,
        workload.micro_batch,
        usable_fraction,
    )


def block_params(model: ModelCard) -> int:
    """Parameters of one transformer block (attention + FFN or all experts)."""
    return (model.architecture_params() - model.embedding_params - model.hidden) // model.layers


def lora_params(model: ModelCard, rank: int, targets: str) -> int:
    """Adapter parameters: rank × (d_in + d_out) for each adapted matrix of every layer."""
    q = model.heads * model.dim_per_head
    kv = model.kv_heads * model.dim_per_head
    h = model.hidden
    shapes = [(h, q), (h, kv), (h, kv), (q, h)]
    if targets == "all":
        f = model.intermediate if model.moe is None else model.moe.expert_intermediate
        experts = 1 if model.moe is None else model.moe.experts
        shapes += [(h, f), (h, f), (f, h)] * experts
    return model.layers * sum(rank * (d_in + d_out) for d_in, d_out in shapes)


def activation_bytes_per_token_layer(model: ModelCard, setup: TrainSetup) -> float:
    """Saved activations per token per layer (16-bit): 12h + 4h_kv + 8f with flash attention;
    eager attention adds the softmax scores, 5 × heads × seq_len bytes (Korthikanti et al.)."""
    h_kv = model.kv_heads * model.dim_per_head
    per_token = 12 * model.hidden + 4 * h_kv + 8 * ffn_width(model)
    if setup.knobs.attention == "eager":
        per_token += 5 * model.heads * setup.seq_len
    return float(per_token)


def train_memory(model: ModelCard, card: CardType, cards: int, setup: TrainSetup) -> MemoryEstimate:
    """Memory per card of a data-parallel training job over `cards` cards."""
    k = setup.knobs
    notes = Assumptions()
    zero = k.zero or 0
    if setup.method == "eval":
        weights = weight_bytes(model, setup.precision, notes)
        grads = optimizer = 0.0
    elif setup.method == "full":
        weights, grads, optimizer = _full_states(model, setup, cards, notes)
    else:
        weights, grads, optimizer = _lora_states(model, setup, cards, notes)
    if zero == 3 and setup.method != "eval":
        units = 4.0 if setup.method == "full" else 2.0  # frozen weights have no gradients
        weights += units * max(block_params(model), model.vocab * model.hidden) * 2
        notes.add(
            "zero3",
            "ZeRO-3/FSDP: 2 gathered units (the largest: a block or the "
            "embedding) in flight, 16-bit" + (" with gradients" if units == 4 else ""),
        )
    activations, logits = _activation_terms(model, setup, notes)
    overhead = (TRAIN_OVERHEAD_GIB + (NCCL_GIB if cards > 1 else 0.0)) * GIB
    notes.add(
        "overhead",
        f"{overhead / GIB:.1f} GiB per card: CUDA context, workspace, "
        "allocator slack" + (", NCCL buffers" if cards > 1 else ""),
    )
    notes.card(card, "memory_gib")
    breakdown = {
        "weights": weights,
        "gradients": grads,
        "optimizer": optimizer,
        "activations": activations,
        "logits": logits,
        "overhead": overhead,
    }
    return MemoryEstimate(breakdown, usable_bytes(card, setup.usable_fraction), notes.frozen())


def _full_states(
    model: ModelCard, setup: TrainSetup, cards: int, notes: Assumptions
) -> tuple[float, float, float]:
    """Weights, gradients and optimizer states of a full fine-tune, per card after sharding."""
    k = setup.knobs
    params = float(model.params)
    width = WEIGHT_BYTES[setup.precision]
    opt_bytes, opt_text = OPTIMIZER_BYTES[k.optimizer or "adamw"]
    weights, grads, optimizer = params * width, params * width, params * opt_bytes
    notes.add(
        "states",
        f"weights and gradients {setup.precision}: {width:g} + {width:g} B/param; {opt_text}",
    )
    if k.optimizer_in_backward:
        grads = block_params(model) * width
        notes.add("opt_in_bwd", "optimizer steps in backward: one block's gradients live at once")
    zero = k.zero or 0
    if zero >= 1:
        optimizer /= cards
    if zero >= 2:
        grads /= cards
    if zero >= 3:
        weights /= cards
    if zero and cards > 1:
        notes.add(
            "sharding",
            f"ZeRO-{zero} over {cards} card(s): "
            + ", ".join(["optimizer", "gradients", "weights"][:zero])
            + " sharded",
        )
    optimizer = _offload_and_paging(k, optimizer, notes)
    if k.offload == "optimizer+params":
        weights = grads = 0.0  # the gathered working units are added by the caller
        notes.add("offload_params", "parameters and gradients offloaded to CPU RAM between uses")
    return weights, grads, optimizer


def _lora_states(
    model: ModelCard, setup: TrainSetup, cards: int, notes: Assumptions
) -> tuple[float, float, float]:
    """Frozen base plus adapters (fp32 weight and grad, optimizer state) per card."""
    k = setup.knobs
    base_precision = "nf4" if setup.method == "qlora" else setup.precision
    base = weight_bytes(model, base_precision, notes)
    if (k.zero or 0) >= 3:
        base /= cards
    rank, targets = k.lora_rank or 16, k.lora_targets or "attn"
    adapters = float(lora_params(model, rank, targets))
    opt_bytes, opt_text = OPTIMIZER_BYTES[k.optimizer or "adamw"]
    if (k.optimizer or "adamw") == "adamw":
        opt_bytes = 8.0  # adapters are fp32 already: m + v only
    notes.add(
        "lora",
        f"LoRA rank {rank} on {'q,k,v,o' if targets == 'attn' else 'all linear'}: "
        f"{adapters / 1e6:.1f}M adapter params, fp32 weight + grad, {opt_text}",
    )
    optimizer = _offload_and_paging(k, adapters * opt_bytes, notes)
    return base + 4 * adapters, 4 * adapters, optimizer


def _offload_and_paging(k: TrainKnobs, optimizer: float, notes: Assumptions) -> float:
    if k.offload in ("optimizer", "optimizer+params"):
        notes.add("offload", "optimizer states (and fp32 master) offloaded to CPU RAM")
        return 0.0
    if (k.optimizer or "").startswith("paged"):
        notes.add(
            "paged",
            "paged optimizer: its states move to CPU RAM when the card is full,"
            " so they do not set the peak",
        )
        return 0.0
    return optimizer


def _activation_terms(
    model: ModelCard, setup: TrainSetup, notes: Assumptions
) -> tuple[float, float]:
    """Saved activations and logits per card (data parallel: each card holds its micro-batch)."""
    k = setup.knobs
    tokens = setup.tokens
    per_layer = activation_bytes_per_token_layer(model, setup) * tokens
    attention = "flash attention" if k.attention != "eager" else "eager attention (s² scores)"
    if setup.method == "eval":
        activations = per_layer  # no graph is kept: one layer's working set
        logits = 4.0 * tokens * model.vocab
        notes.add("activations", f"forward only: one layer's working set, {attention}")
        return activations, logits
    if k.checkpointing:
        activations = model.layers * tokens * 2.0 * model.hidden + per_layer
        notes.add(
            "activations",
            f"activation checkpointing: each layer's 16-bit input kept, "
            f"one layer recomputed at a time; {attention}",
        )
    else:
        activations = model.layers * per_layer
        notes.add(
            "activations",
            f"no checkpointing: 12h + 4h_kv + 8f bytes per token per layer; {attention}",
        )
    if k.chunked_loss:
        logits = 2.5 * tokens * model.vocab
        notes.add("logits", "chunked cross-entropy: 16-bit logits + one fp32 chunk of 8")
    else:
        logits = 8.0 * tokens * model.vocab
        notes.add("logits", "fp32 logits and their gradient: 8 B per token per vocabulary entry")
    notes.add("batch", f"micro-batch {setup.micro_batch} × sequence {setup.seq_len} tokens")
    return activations, logits
