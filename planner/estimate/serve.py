"""What one serving replica carries: concurrency by KV memory and by decode speed."""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.domain.catalog import CardType
from planner.domain.model_card import ModelCard
from planner.estimate.core import Assumption, MemoryEstimate
from planner.estimate.memory import ServeSetup, layer_split, max_concurrency_by_memory, serve_memory
from planner.estimate.speed import (
    decode_efficiency,
    decode_step_seconds,
    max_batch_for_speed,
    peak_flops,
    tp_efficiency,
)

# Share of the dense peak a prefill (and a compute-bound decode batch) reaches: fitted on the
# calibration set's time-to-first-token rows (TensorRT-LLM at light load, 8B and 70B on H100).
PREFILL_MFU = 0.33


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
        + (
            ", layers in turn over the cards"
            if layer_split(setup, cards)
            else ", two all-reduces per layer over the cards"
            if cards > 1
            else ""
        ),
        card.bandwidth_gbs.confidence == "low",
    )
    return ReplicaCapacity(
        memory, by_memory, by_speed, per_request, (*memory.assumptions, speed_note)
    )


def with_concurrency(setup: ServeSetup, concurrency: int) -> ServeSetup:
    return replace(setup, concurrency=concurrency)


def _compute_seconds(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, flops: float
) -> float:
    """Seconds for `flops` of forward work over the replica's cards at PREFILL_MFU."""
    rate = peak_flops(card, setup.precision) * PREFILL_MFU
    if layer_split(setup, cards):
        return flops / rate  # one card computes at a time
    return flops / (rate * cards * tp_efficiency(card, cards))


def prefill_seconds(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, prompt_tokens: int
) -> float:
    """Time to first token of one prompt: forward FLOPs 2·P·s + causal attention 2·L·h·s²
    at PREFILL_MFU, or reading the weights once, whichever is longer."""
    s = float(prompt_tokens)
    flops = 2.0 * model.active_params * s + 2.0 * model.layers * model.hidden * s * s
    compute = _compute_seconds(model, card, cards, setup, flops)
    weights_once = decode_step_seconds(model, card, cards, replace(setup, context_tokens=1), 1)
    return max(compute, weights_once)


def _decode_seconds(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, batch: int
) -> float:
    """A decode step: bandwidth-bound, or compute-bound (2·P per token) for large batches."""
    memory = decode_step_seconds(model, card, cards, setup, batch)
    compute = _compute_seconds(model, card, cards, setup, 2.0 * model.active_params * batch)
    return max(memory, compute)


def generation_tokens_per_s(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: ServeSetup,
    input_tokens: int,
    output_tokens: int,
) -> float:
    """Generated tokens/s of one request, prefill included: O ÷ (prefill + O decode steps at
    the mean context I + O/2), the serving throughput of a single request in flight."""
    alone = replace(setup, concurrency=1)
    return serving_throughput(model, card, cards, alone, input_tokens, output_tokens)


def serving_throughput(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: ServeSetup,
    input_tokens: int,
    output_tokens: int,
) -> float:
    """Output tokens/s of one replica with `setup.concurrency` requests in flight
    (continuous batching, capped by the KV cache): c·O ÷ (c·prefill + O decode steps)."""
    full = replace(setup, context_tokens=input_tokens + output_tokens)
    batch = max(1, min(setup.concurrency, max_concurrency_by_memory(model, card, cards, full)))
    mean = replace(setup, context_tokens=input_tokens + output_tokens // 2)
    prefill = batch * prefill_seconds(model, card, cards, setup, input_tokens)
    decode = output_tokens * _decode_seconds(model, card, cards, mean, batch)
    return batch * output_tokens / (prefill + decode)
