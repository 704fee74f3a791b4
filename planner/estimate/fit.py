"""`plan fit`: for every card type and count, whether a model fits, how fast, at what price."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from planner.domain.catalog import CardType, Network, Offer
from planner.domain.limits import SERVE_COUNTS, TRAIN_COUNTS
from planner.domain.model_card import ModelCard
from planner.domain.recipes import TrainKnobs
from planner.estimate.bands import BANDS, band_for, kind_of, lower_band_for
from planner.estimate.core import GB, GIB, MemoryEstimate
from planner.estimate.memory import ServeSetup, TrainSetup, train_memory
from planner.estimate.precision import supports
from planner.estimate.seed_rules import disagreement
from planner.estimate.serve import replica_capacity, token_seconds
from planner.estimate.speed import train_speed


@dataclass(frozen=True)
class FitQuery:
    """What `plan fit` asks: a model, a task and every knob that moves the answer."""

    model: ModelCard
    task: str  # serve | full | lora | qlora | eval
    precision: str = "bf16"
    knobs: TrainKnobs = field(default_factory=TrainKnobs)  # resolved (recipe + overrides)
    seq_len: int = 2048
    micro_batch: int = 1
    serve: ServeSetup = field(default_factory=ServeSetup)
    min_tokens_per_s: float | None = None
    counts: tuple[int, ...] | None = None
    card: str | None = None
    offsets_gib: dict[str, float] = field(default_factory=dict)  # card → measured − estimated
    # the network between nodes (Gb/s per node) and cards per node the speed of a count
    # beyond one node assumes; None: the cheapest hosting offer's, else 25 Gb/s and 8 cards
    network_gbps: float | None = None
    cards_per_node: int | None = None


def _gb(value: float) -> float:
    return round(value / GB, 2)


def verdict(estimate: MemoryEstimate) -> str:
    """fits; marginal (it fits, but not once the estimate grows by its error band; or, with
    no safety margin asked for, it overfills the card but the low end of its lower band fits:
    the estimated terms shrunk by it, the exact ones whole, as `--memory-margin -band` plans);
    or no."""
    if estimate.fits:
        found = band_for(estimate.kind)
        if found is not None and estimate.need_at(found[0]) > estimate.usable:
            return "marginal"
        return "fits"
    low = lower_band_for(estimate.kind)
    if estimate.margin <= 0 and low is not None and estimate.need_at(-low[0]) <= estimate.usable:
        return "marginal"
    return "no"


def band_fields(
    kind: str, value: float, name: str, low_end: Callable[[float], float] | None = None
) -> dict[str, Any]:
    """`name`'s error band (from the evaluation set) and the range it spans, where known: up
    by the band, down by the lower band (how far below its estimates the truth has lain):
    value × (1 − lower band), or `low_end(lower band)` where only part of the value is an
    estimate (memory: the exact terms do not shrink)."""
    found = band_for(kind)
    if found is None:
        return {f"{name}_band": None}
    band, used = found
    low = lower_band_for(kind)
    down = band if low is None else low[0]
    bottom = value * (1 - down) if low_end is None else low_end(down)
    return {
        f"{name}_band": {
            "fraction": band,
            "lower_fraction": down,
            "kind": used,
            "figures": BANDS[used][1],
        },
        f"{name}_range": [round(max(bottom, 0.0), 2), round(value * (1 + band), 2)],
    }


def _memory_fields(estimate: MemoryEstimate) -> dict[str, Any]:
    return {
        "fits": estimate.fits,
        "verdict": verdict(estimate),
        "memory_margin": estimate.margin,
        **band_fields(
            estimate.kind,
            estimate.total / GIB,
            "memory_per_card_gib",
            lambda down: estimate.need_at(-down) / GIB,
        ),
        "memory_per_card_gb": _gb(estimate.total),
        "memory_per_card_gib": round(estimate.total / GIB, 2),
        "allocated_per_card_gib": round(estimate.allocated / GIB, 2),
        "cached_per_card_gib": round(estimate.cached / GIB, 2),
        "usable_gb": _gb(estimate.usable),
        "usable_gib": round(estimate.usable / GIB, 2),
        "headroom_gib": round(estimate.headroom / GIB, 2),
        "breakdown_gb": {k: _gb(v) for k, v in estimate.breakdown.items()},
        "breakdown_gib": {k: round(v / GIB, 2) for k, v in estimate.breakdown.items()},
        "formulas": estimate.formulas,
    }


def _hosts(offer: Offer, cards: int) -> bool:
    """Whether an offer can hold one job of `cards` cards (within a node unless networked)."""
    return cards <= offer.node_cards or offer.network is not None


def _hourly_offers(offers: list[Offer], card: CardType, cards: int) -> list[tuple[Offer, Decimal]]:
    """Offers with an hourly price for `cards` cards of `card` (whole units), cheapest first."""
    priced = []
    for offer in offers:
        if offer.card == card.id and offer.hourly is not None and _hosts(offer, cards):
            units = math.ceil(cards / offer.unit_cards)
            priced.append((units * offer.hourly.price, offer.id, offer))
    return [(offer, price) for price, _, offer in sorted(priced, key=lambda p: (p[0], p[1]))]


def _cheapest_hourly(
    offers: list[Offer], card: CardType, cards: int
) -> tuple[Offer, Decimal] | None:
    """The offer with the lowest hourly price for `cards` cards of `card` (whole units)."""
    priced = _hourly_offers(offers, card, cards)
    return priced[0] if priced else None


def counts_for(query: FitQuery, model: ModelCard) -> tuple[int, ...]:
    if query.counts:
        return query.counts
    # every count, those that cannot run at all too (`fit_rows` gives them a reason)
    return TRAIN_COUNTS if query.task != "serve" else SERVE_COUNTS


def unsupported(query: FitQuery, card: CardType | None, count: int) -> str | None:
    """Why a card and count cannot run the query at all, or None."""
    if card is not None and not supports(card, query.precision):
        return f"{card.id} has no {query.precision.upper()} support"
    m = query.model
    node = query.cards_per_node or 8
    if query.task == "serve" and count > node:
        return (
            f"a replica over {count} cards spans nodes of {node}: serving across nodes is not "
            "estimated (its all-reduces would cross the network, which the serving estimate "
            "does not time), and plans keep each replica within one node"
        )
    if query.task == "serve" and (m.heads % count or (m.kv_heads % count and count % m.kv_heads)):
        return (
            f"tensor parallel over {count} cards needs the {m.heads} attention heads and "
            f"{m.kv_heads} KV heads to split evenly"
        )
    return None


def fit_rows(
    query: FitQuery, cards: dict[str, CardType], offers: list[Offer]
) -> list[dict[str, Any]]:
    """One row per card type × card count, in card order then count."""
    rows = []
    for card in cards.values():
        if query.card is not None and card.id != query.card:
            continue
        for count in counts_for(query, query.model):
            reason = unsupported(query, card, count)
            if reason is not None:
                rows.append(
                    {
                        "card": card.id,
                        "cards": count,
                        "fits": False,
                        "verdict": "no",
                        "reason": reason,
                    }
                )
            elif query.task == "serve":
                rows.append(_serve_row(query, card, count, offers))
            else:
                rows.append(_train_row(query, card, count, offers))
    return rows


def _base_row(
    query: FitQuery, card: CardType, count: int, estimate: MemoryEstimate
) -> dict[str, Any]:
    row: dict[str, Any] = {"card": card.id, "cards": count, **_memory_fields(estimate)}
    row["assumptions"] = [str(a) for a in estimate.assumptions]
    row["low_confidence"] = [a.text for a in estimate.assumptions if a.low_confidence]
    marginal = verdict(estimate) == "marginal"
    seed = disagreement(query.model, card, count, query.task, query.precision, estimate, marginal)
    if seed is not None:
        row["seed_rule"] = seed
    return row


def _serve_row(query: FitQuery, card: CardType, count: int, offers: list[Offer]) -> dict[str, Any]:
    offset = query.offsets_gib.get(card.id, 0.0)
    setup = replace(query.serve, precision=query.precision, offset_gib=offset)
    capacity = replica_capacity(query.model, card, count, setup, query.min_tokens_per_s)
    row = _base_row(query, card, count, capacity.memory)
    row["assumptions"] = [str(a) for a in capacity.assumptions]
    row["low_confidence"] = [a.text for a in capacity.assumptions if a.low_confidence]
    row["fits"] = capacity.memory.fits and capacity.max_concurrency >= setup.concurrency
    if not row["fits"]:
        # short of the requests asked: no, unless the replica overfills the card at the
        # estimate and fits at its low end (`marginal`, as `--memory-margin -band` plans it)
        overfills = not capacity.memory.fits and verdict(capacity.memory) == "marginal"
        row["verdict"] = "marginal" if overfills else "no"
    row["max_concurrency_per_replica"] = capacity.max_concurrency
    row["replicas_for_concurrency"] = (
        math.ceil(setup.concurrency / capacity.max_concurrency)
        if capacity.max_concurrency
        else None
    )
    row["concurrency_by_memory"] = capacity.by_memory
    row["concurrency_by_speed"] = capacity.by_speed
    if not capacity.max_concurrency:  # it carries no request: no speed, no price
        for name in ("tokens_per_s_per_request", "tokens_per_s_per_replica"):
            none = {name: None, f"{name}_at_max": None, f"{name}_band": None}
            row.update(none | {f"{name}_range": None})
        return row
    asked = min(setup.concurrency, capacity.max_concurrency)
    step = token_seconds(query.model, card, count, setup, asked)
    row["tokens_per_s_per_request"] = round(1.0 / step, 1)  # at the concurrency asked for
    row["tokens_per_s_per_replica"] = round(asked / step, 1)  # likewise
    row["tokens_per_s_per_request_at_max"] = round(capacity.tokens_per_s_per_request, 1)
    row["tokens_per_s_per_replica_at_max"] = round(capacity.tokens_per_s, 1)
    decode = kind_of("decode_tok_s", "serve", setup.engine, query.model.moe is not None)
    row.update(band_fields(decode, row["tokens_per_s_per_request"], "tokens_per_s_per_request"))
    throughput = kind_of("serve_throughput", "serve", setup.engine, query.model.moe is not None)
    row.update(band_fields(throughput, row["tokens_per_s_per_replica"], "tokens_per_s_per_replica"))
    priced = _cheapest_hourly(offers, card, count)
    if priced is not None:
        offer, price = priced
        row.update(offer=offer.id, hourly_price=price)
    return row


def _train_row(query: FitQuery, card: CardType, count: int, offers: list[Offer]) -> dict[str, Any]:
    setup = TrainSetup(
        query.task,
        query.knobs,
        query.precision,
        query.seq_len,
        query.micro_batch,
        query.serve.usable_fraction,
        query.serve.margin,
        query.offsets_gib.get(card.id, 0.0),
    )
    estimate = train_memory(query.model, card, count, setup)
    priced = _cheapest_hourly(offers, card, count)
    node = query.cards_per_node or (priced[0].node_cards if priced else 8)
    network = priced[0].network if priced else None
    if query.network_gbps is not None:
        network = Network(kind="stated", gbps=query.network_gbps)
    speed = train_speed(query.model, card, count, setup, node, network)
    row = _base_row(query, card, count, estimate)
    row["assumptions"] += list(speed.assumptions)
    row["tokens_per_s"] = round(speed.tokens_per_s, 1)
    row.update(
        band_fields(
            kind_of("train_tok_s", query.task, "", False), row["tokens_per_s"], "tokens_per_s"
        )
    )
    row["mfu"] = round(speed.mfu, 4)
    row["scaling_efficiency"] = round(speed.efficiency, 3)
    hours = 1e9 / speed.tokens_per_s / 3600
    row["hours_per_billion_tokens"] = round(hours, 2)
    per_offer = [
        {
            "offer": offer.id,
            "hourly_price": price,
            "cost": (price * Decimal(str(hours))).quantize(Decimal("0.01")),
        }
        for offer, price in _hourly_offers(offers, card, count)
    ]
    if per_offer and row["verdict"] != "no":  # the cheapest first, and every hourly
        # offer's price per billion tokens; none where the job does not fit the card
        row.update(per_offer[0], hours=round(hours, 2), offers=per_offer)
    return row
