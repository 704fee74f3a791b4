"""Bytes per parameter and per KV element by number format, and which cards run which."""

from __future__ import annotations

from planner.domain.catalog import CardType
from planner.domain.model_card import ModelCard
from planner.estimate.core import Assumptions

# Bytes per weight, scales included (docs/estimates.md, "Weights").
WEIGHT_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,  # per-tensor or per-channel scales: negligible
    "int8": 1.0,  # weight-only, per-channel scales: negligible
    "int4": 4.156 / 8,  # GPTQ/AWQ group 128: fp16 scale + 4-bit zero per group
    "nf4": 4.127 / 8,  # QLoRA NF4 with double quantisation
}
QUANTISED = {"fp8", "int8", "int4", "nf4"}


def supports(card: CardType, precision: str) -> bool:
    """Whether the card runs this format (weight-only int8/int4/nf4 run on any card)."""
    if precision == "fp8":
        return card.fp8.value
    if precision == "bf16":
        return card.bf16.value
    return True


def weight_bytes(model: ModelCard, precision: str, notes: Assumptions) -> float:
    """All weights in memory. Quantised models keep embeddings and LM head in 16 bit."""
    per_param = WEIGHT_BYTES[precision]
    if precision not in QUANTISED:
        notes.add("weights", f"weights {precision}: {per_param:g} B/param")
        return model.params * per_param
    embeddings = model.embedding_params
    notes.add(
        "weights",
        f"weights {precision}: {per_param:.3f} B/param; embeddings and LM head "
        f"({embeddings / 1e9:.2f}B params) stay 16-bit",
    )
    return (model.params - embeddings) * per_param + embeddings * 2.0


def kv_bytes_per_token(model: ModelCard, kv_precision: str, tensor_parallel: int = 1) -> float:
    """KV cache per token on one card: 2 × layers × KV heads (split over TP, at least one) × dim."""
    heads_per_card = max(model.kv_heads / tensor_parallel, 1.0)
    return 2 * model.layers * heads_per_card * model.dim_per_head * WEIGHT_BYTES[kv_precision]
