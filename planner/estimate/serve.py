"""What one serving replica carries: concurrency by KV memory and by decode speed."""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.domain.catalog import CardType
from planner.domain.model_card import ModelCard
from planner.estimate.core import Assumption, MemoryEstimate
from planner.estimate.memory import ServeSetup, max_concurrency_by_memory, serve_memory
from planner.estimate.speed import (
    decode_efficiency,
    decode_step_seconds,
    max_batch_for_speed,
    tp_efficiency,
)


@dataclass(frozen=True)
class ReplicaCapacity:
    """One replica of a model on `cards` cards of one type."""

    memory: MemoryEstimate  # at the requested concurrency
    by_memory: int  # requests whose KV cache fits
    by_speed: int | None  # requests that each still decode at the minimum speed
    tokens_per_s_per_request: float  # at max_concurrency (or 1)
    assumptions: tuple[Assumption, ...]

    @property
    def max_concurrency(self) -> int:
        return self.by_memory if self.by_speed is None else min(self.by_memory, self.by_speed)

    @property
    def tokens_per_s(self) -> float:
        """Decode tokens/s of the whole replica at its max concurrency."""
        return self.tokens_per_s_per_request * max(self.max_concurrency, 1)


def replica_capacity(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: ServeSetup,
    min_tokens_per_s: float | None = None,
) -> ReplicaCapacity:
    memory, _ = serve_memory(model, card, cards, setup)
    by_memory = max_concurrency_by_memory(model, card, cards, setup)
    by_speed = (
        None
        if min_tokens_per_s is None
        else max_batch_for_speed(model, card, cards, setup, min_tokens_per_s)
    )
    batch = max(by_memory if by_speed is None else min(by_memory, by_speed), 1)
    per_request = 1.0 / decode_step_seconds(model, card, cards, setup, batch)
    speed_note = Assumption(
        "decode",
        f"decode bound by memory bandwidth: {decode_efficiency(setup):.0%} of "
        f"{card.bandwidth_gbs.value:g} GB/s, full context per request"
        + (f", tensor-parallel efficiency {tp_efficiency(card, cards):.0%}" if cards > 1 else ""),
        card.bandwidth_gbs.confidence == "low",
    )
    return ReplicaCapacity(
        memory, by_memory, by_speed, per_request, (*memory.assumptions, speed_note)
    )


def with_concurrency(setup: ServeSetup, concurrency: int) -> ServeSetup:
    return replace(setup, concurrency=concurrency)
