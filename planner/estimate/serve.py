"""What one serving replica carries: concurrency by KV memory and by decode speed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from planner.domain.catalog import CardType
from planner.domain.model_card import ModelCard
from planner.estimate.core import Assumption, MemoryEstimate
from planner.estimate.memory import ServeSetup, layer_split, max_concurrency_by_memory, serve_memory
from planner.estimate.speed import (
    ALLREDUCE_SECONDS,
    compute_efficiency,
    compute_seconds,
    decode_efficiency,
    decode_step_seconds,
    engine_step_seconds,
    link_kind,
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
    by_ttft: int | None = None  # requests in flight whose next one still starts in time
    by_engine: int | None = None  # sequences the engine runs at once (vLLM max_num_seqs)

    @property
    def max_concurrency(self) -> int:
        limits = [x for x in (self.by_speed, self.by_ttft, self.by_engine) if x is not None]
        return min([self.by_memory, *limits])

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
    ttft_s: float | None = None,
) -> ReplicaCapacity:
    memory, _ = serve_memory(model, card, cards, setup)
    by_memory = max_concurrency_by_memory(model, card, cards, setup)
    by_speed = (
        None
        if min_tokens_per_s is None
        else max_batch_for_speed(model, card, cards, setup, min_tokens_per_s)
    )
    by_ttft = None if ttft_s is None else max_batch_for_ttft(model, card, cards, setup, ttft_s)
    # vLLM schedules at most max_num_seqs sequences a step, the rows its profiling pass
    # samples; more requests than that wait in its queue
    by_engine = setup.max_seqs if setup.engine == "vllm" else None
    carried = min([by_memory, *(x for x in (by_speed, by_ttft) if x is not None)])
    batch = max(min(carried, by_engine or carried), 1)
    per_request = 1.0 / token_seconds(model, card, cards, setup, batch)
    prompt = prompt_tokens(setup)
    prefills = ""
    if setup.output_tokens:
        prefills = (
            f"; each request also waits for the prefills of the {prompt}-token prompts that "
            f"start while it writes its {setup.output_tokens} tokens "
            f"({_prefill_text(model, card, cards, setup, prompt)})"
        )
    speed_note = Assumption(
        "decode",
        f"decode bound by memory bandwidth ({decode_efficiency(setup):.0%} of "
        f"{card.bandwidth_gbs.value:g} GB/s) or, for large batches, by compute; full context "
        "per request"
        + prefills
        + (
            ", layers in turn over the cards"
            if layer_split(setup, cards)
            else f", two all-reduces per layer over the cards ({_allreduce_text(card)})"
            if cards > 1
            else ""
        ),
        card.bandwidth_gbs.confidence == "low"
        or (cards > 1 and not layer_split(setup, cards) and link_kind(card) != "nvlink"),
    )
    notes = (*memory.assumptions, speed_note)
    if ttft_s is not None:
        notes += (
            Assumption(
                "ttft",
                "time to first token: the decode step in flight, then the prompt's prefill "
                "(no queueing beyond that: a steady state, not a percentile)",
            ),
        )
    if by_engine is not None and by_engine < carried:
        notes += (
            Assumption(
                "engine_seqs",
                f"at most {by_engine} requests at once: vLLM's max_num_seqs"
                + (" (its default)" if by_engine == ServeSetup.max_seqs else "")
                + f", below the {carried} the memory and speed would carry",
            ),
        )
    return ReplicaCapacity(memory, by_memory, by_speed, per_request, notes, by_ttft, by_engine)


def _prefill_text(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, prompt: int
) -> str:
    """One prompt's prefill time and what bounds it: its FLOPs at the prefill share of the
    peak it runs on (over tensor-parallel cards, less their overhead), or reading the
    weights once where that takes longer (a short prompt)."""
    compute, once = prefill_parts(model, card, cards, setup, prompt)
    alone = max(compute, once)
    if compute <= once:
        return f"{alone * 1e3:.0f} ms each: reading the weights once, longer than its FLOPs"
    peak = "fp8" if setup.precision == "fp8" and card.fp8.value else "16-bit"
    share = compute_efficiency(card, setup.precision)
    text = (
        f"{alone * 1e3:.0f} ms each: a whole prompt's FLOPs at {share:.0%} of the dense "
        f"{peak} peak, as time-to-first-token rows measure it"
    )
    if cards > 1 and not layer_split(setup, cards):
        text += (
            f", over {cards} cards at {tp_efficiency(card, cards):.0%} tensor-parallel efficiency"
        )
    return text


def _allreduce_text(card: CardType) -> str:
    """An all-reduce's latency on the card's link, and whether it was measured."""
    kind = link_kind(card)
    seconds = ALLREDUCE_SECONDS[kind]
    source = "measured" if kind == "nvlink" else "assumed: no measurement"
    return f"{seconds * 1e6:g} µs each over {kind}, {source}, plus the activations moved"


def prompt_tokens(setup: ServeSetup) -> int:
    """A request's prompt: its context less its output (at least one token)."""
    return max(setup.context_tokens - (setup.output_tokens or 0), 1)


def time_to_first_token(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, batch: int
) -> float:
    """Seconds from a request's arrival to its first token with `batch` others decoding:
    it waits for the decode step in flight, then its prompt is prefilled."""
    step = decode_step_seconds(model, card, cards, setup, batch)
    return step + prefill_seconds(model, card, cards, setup, prompt_tokens(setup))


def max_batch_for_ttft(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, ttft_s: float
) -> int:
    """Largest batch in flight beside which a new request still sees its first token within
    `ttft_s` (0: not even alone)."""
    return _largest_batch(lambda b: time_to_first_token(model, card, cards, setup, b) > ttft_s)


def token_seconds(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, batch: int
) -> float:
    """Seconds per output token each of `batch` requests in flight sees: a decode step, plus,
    where the output length is known, its share of the prefills of the requests that start
    while it writes (continuous batching: about `batch` of them over its output tokens)."""
    step = decode_step_seconds(model, card, cards, setup, batch)
    if not setup.output_tokens:
        return step
    prefill = prefill_seconds(model, card, cards, setup, prompt_tokens(setup))
    return step + batch * prefill / setup.output_tokens


def max_batch_for_speed(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, min_tokens_per_s: float
) -> int:
    """Largest batch whose every request still decodes at `min_tokens_per_s` (0: not even one)."""

    return _largest_batch(
        lambda b: token_seconds(model, card, cards, setup, b) * min_tokens_per_s > 1
    )


def _largest_batch(too_slow: Callable[[int], bool]) -> int:
    """The largest batch that is not `too_slow` (slowness grows with the batch); 0 if
    even 1 is."""
    if too_slow(1):
        return 0
    low, high = 1, 2
    while not too_slow(high):
        low, high = high, high * 2
        if high > 1 << 20:
            return low
    while high - low > 1:  # time per token grows with the batch: bisect
        mid = (low + high) // 2
        if too_slow(mid):
            high = mid
        else:
            low = mid
    return low


def with_concurrency(setup: ServeSetup, concurrency: int) -> ServeSetup:
    return replace(setup, concurrency=concurrency)


def prefill_seconds(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, prompt_tokens: int
) -> float:
    """Time to first token of one prompt: forward FLOPs 2·P·s + causal attention 2·L·h·s²
    at the family's compute efficiency, or reading the weights once, whichever is longer."""
    return max(prefill_parts(model, card, cards, setup, prompt_tokens))


def prefill_parts(
    model: ModelCard, card: CardType, cards: int, setup: ServeSetup, prompt_tokens: int
) -> tuple[float, float]:
    """A prompt's prefill as its two bounds: its FLOPs' time, and reading the weights once."""
    s = float(prompt_tokens)
    flops = 2.0 * model.active_params * s + 2.0 * model.layers * model.hidden * s * s
    compute = compute_seconds(model, card, cards, setup, flops)
    weights_once = decode_step_seconds(model, card, cards, replace(setup, context_tokens=1), 1)
    return compute, weights_once


def generation_tokens_per_s(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: ServeSetup,
    input_tokens: int,
    output_tokens: int,
) -> float:
    """Generated tokens/s of one request alone, prefill included: O ÷ (prefill + O decode
    steps at the mean context I + O/2)."""
    mean = replace(setup, context_tokens=input_tokens + output_tokens // 2, concurrency=1)
    prefill = prefill_seconds(model, card, cards, setup, input_tokens)
    return output_tokens / (
        prefill + output_tokens * decode_step_seconds(model, card, cards, mean, 1)
    )


def serving_throughput(
    model: ModelCard,
    card: CardType,
    cards: int,
    setup: ServeSetup,
    input_tokens: int,
    output_tokens: int,
) -> float:
    """Output tokens/s of one replica with `setup.concurrency` requests in flight, a roofline
    over engine steps. Continuous batching keeps `batch` requests decoding: at most the
    concurrency, the requests whose KV cache at full context fits (an engine admits a request
    only if it can finish it), and as many as the step's token budget sustains: while each
    writes its O tokens, its successor's I prompt tokens must pass through the same steps,
    so a step carries batch × (1 + I/O) tokens. The prompts are prefilled in chunks that fill
    the budget beside the decoding batch (chunked prefill: prompt tokens share a step's GEMMs
    with decode tokens, so a short prompt rides on weights read anyway); the other steps
    decode alone. Each step at the mean context I + O/2."""
    full = replace(setup, context_tokens=input_tokens + output_tokens)
    by_memory = max_concurrency_by_memory(model, card, cards, full)
    budget = setup.batched_tokens
    by_budget = budget * output_tokens // (input_tokens + output_tokens)
    # the concurrency is the batch the benchmark's engine was set to run: no engine default
    # caps it here (a planned replica's max_num_seqs is replica_capacity's)
    batch = max(1, min(setup.concurrency, by_memory, by_budget))
    if batch == 1:
        return generation_tokens_per_s(model, card, cards, setup, input_tokens, output_tokens)
    mean = replace(setup, context_tokens=input_tokens + output_tokens // 2)
    room = max(budget - batch, 1)  # prompt tokens a step carries beside the batch
    chunk_steps = batch * input_tokens / room
    chunked = engine_step_seconds(model, card, cards, mean, batch, room, input_tokens)
    plain = engine_step_seconds(model, card, cards, mean, batch)
    decode_only = max(0.0, output_tokens - chunk_steps)
    return batch * output_tokens / (chunk_steps * chunked + decode_only * plain)
