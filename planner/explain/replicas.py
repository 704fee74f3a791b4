"""Conflicts of one serve or reserve workload on its own, decided from the estimates and
the rules: no card × count holds one request (memory) or decodes it at the speed asked
(demand); no offer sells the reserved card; or at some hour all stock together cannot carry
the demand even with no other workload (stock). Configs are the model's own
(`replica_configs`, `reserve_configs`), before any are left out for a modelling reason, so
each verdict is a proof."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from planner.configs import ReplicaConfig, replica_configs, replica_counts
from planner.domain.limits import SERVE_COUNTS
from planner.domain.scenario import Scenario
from planner.domain.workload import ReserveWorkload, ServeWorkload
from planner.estimate.memory import ServeSetup, kv_bytes_per_sequence, serve_memory
from planner.estimate.precision import supports
from planner.estimate.serve import time_to_first_token, token_seconds
from planner.explain.conflict import (
    NO_OFFERS,
    Conflict,
    Relaxation,
    by_value,
    gib,
    plural,
    stock_patch,
    when,
    workload_patch,
)
from planner.prices import card_hour_price
from planner.serving import ReplicaJob, replica_jobs

KNAPSACK_UNITS = 100_000  # stock above this is as good as unlimited for the bound


def replica_conflicts(scenario: Scenario) -> list[Conflict]:
    """A conflict for every serve or reserve workload that cannot be carried even alone."""
    if not any(w.kind != "train" for w in scenario.spec.workloads):
        return []
    segments, jobs = replica_jobs(scenario)
    conflicts = []
    for job in jobs:
        w = scenario.workload(job.name)
        found: Conflict | None
        if job.configs:
            found = peak_stock(scenario, segments, job)
        elif isinstance(w, ServeWorkload):
            found = serve_fit(scenario, w)
        else:
            assert isinstance(w, ReserveWorkload)
            found = reserve_fit(scenario, w)
        if found is not None:
            conflicts.append(found)
    return conflicts


# --- a serve workload that no card/count carries ----------------------------------------------


@dataclass(frozen=True)
class _Option:
    """One card × count × precision a replica could use, at the workload's context."""

    card: str
    cards: int
    precision: str
    usable: float  # bytes per card
    budget: float  # bytes per card left for KV after weights and workspace
    kv: float  # bytes per card of one request's KV cache
    speed: float  # tokens/s one request decodes alone
    ttft: float  # seconds to its first token, alone

    def label(self) -> str:
        return f"{self.cards}× {self.card}, {self.precision}"


def _options(scenario: Scenario, w: ServeWorkload) -> list[_Option]:
    """Every card × count × precision `replica_configs` tries (same filters), deduplicated."""
    model = scenario.models[w.name]
    fraction = scenario.spec.usable_memory_fraction
    seen: dict[tuple[str, int, str], _Option] = {}
    for offer in scenario.offers.values():
        card = scenario.cards[offer.card]
        for count in replica_counts(scenario, w, offer):
            for precision in w.precision:
                if not supports(card, precision) or (card.id, count, precision) in seen:
                    continue
                setup = ServeSetup(
                    precision=precision,
                    kv_precision=w.kv_precision,
                    engine=w.engine,
                    usable_fraction=fraction,
                    context_tokens=w.context_tokens,
                    output_tokens=w.output_tokens,
                    max_seqs=w.max_num_seqs or ServeSetup.max_seqs,
                    margin=scenario.spec.memory_margin,
                    offset_gib=scenario.memory_offset_gib(model.name, card.id, "serve"),
                )
                estimate, budget = serve_memory(model, card, count, setup)
                seen[(card.id, count, precision)] = _Option(
                    card.id,
                    count,
                    precision,
                    estimate.usable / (1.0 + max(estimate.margin, 0.0)),  # what it leaves
                    budget,
                    kv_bytes_per_sequence(model, setup, count),
                    1.0 / token_seconds(model, card, count, setup, 1),
                    time_to_first_token(model, card, count, setup, 1),
                )
    return list(seen.values())


def serve_fit(scenario: Scenario, w: ServeWorkload) -> Conflict:
    """Why no replica config carries one request: its KV cache fits no card beside the
    weights (memory), or no replica that holds it decodes at min_tokens_per_s (demand)."""
    options = _options(scenario, w)
    if not options:
        needed = f"a card × count that runs {', '.join(w.precision)} with the heads split evenly"
        limit = w.max_cards_per_replica
        available = (
            NO_OFFERS
            if not scenario.offers
            else "none among the cards offered"
            if limit is None
            else f"none within max_cards_per_replica {limit}"
        )
        return Conflict("memory", (w.name,), needed, available)
    holding = [o for o in options if o.budget >= o.kv]
    if not holding:
        best = max(options, key=lambda o: o.budget - o.kv)
        needed = (
            f"{gib(best.kv)} of KV cache per card for one request of {w.context_tokens:,} "
            f"tokens ({best.label()}, {_kv(w, best)} KV), beside "
            f"{gib(best.usable - best.budget)} of weights and workspace"
        )
        available = f"{gib(best.usable)} usable per card ({best.card})"
        relaxations = _shorter_context(scenario, w) + _more_cards(scenario, w)
        if not relaxations:
            more = best.usable + best.kv - best.budget
            relaxations = [Relaxation(f"a card with at least {gib(more)} usable")]
        return Conflict("memory", (w.name,), needed, available, tuple(relaxations))
    if w.ttft_s is not None:
        quick = [o for o in holding if o.ttft <= w.ttft_s]
        if not quick:
            first = min(holding, key=lambda o: o.ttft)
            later = math.ceil(first.ttft * 10) / 10  # rounded up: it must still be met
            needed = f"the first token within {w.ttft_s:g} s of a request's arrival (ttft_s)"
            available = (
                f"{later:g} s for a prompt of {w.context_tokens - (w.output_tokens or 0):,} "
                f"tokens alone on the quickest replica that holds it ({first.label()})"
            )
            quicker = _relax(w, "ttft_s", later, w.ttft_s)
            return Conflict("demand", (w.name,), needed, available, (quicker,))
        holding = quick
    fastest = max(holding, key=lambda o: o.speed)
    slower = math.floor(fastest.speed * 10) / 10  # rounded down: it must still be met
    needed = f"{w.min_tokens_per_s:g} tokens/s for each request (min_tokens_per_s)"
    available = (
        f"{slower:,} tokens/s for one request alone on the fastest replica that holds it "
        f"({fastest.label()}, context {w.context_tokens:,} tokens)"
    )
    relaxation = (
        (_relax(w, "min_tokens_per_s", slower, w.min_tokens_per_s),)
        if slower > 0 and _carries(scenario, w, min_tokens_per_s=slower)
        else ()
    )
    return Conflict("demand", (w.name,), needed, available, relaxation)


def _relax(w: ServeWorkload, field: str, value: float, asked: float) -> Relaxation:
    """`field` set to `value`, as a what-if on the workload; a request class is named as
    its workload's class, with no patch (the file's workload holds it in `classes`)."""
    if w.class_of is None:
        return Relaxation(
            f"{field} {value:g} (it asks {asked:g})", workload_patch(w.name, **{field: value})
        )
    target = f"{w.class_of}, class {w.name.removeprefix(w.class_of + '.')}"
    return Relaxation(f"{field} {value:g} for {target} (it asks {asked:g})")


def _kv(w: ServeWorkload, option: _Option) -> str:
    return w.kv_precision or ("fp16" if option.precision == "fp16" else "bf16")


def _carries(scenario: Scenario, w: ServeWorkload, **changes: object) -> bool:
    """Whether some replica config carries one request once the workload is changed."""
    return bool(replica_configs(scenario, w.model_copy(update=changes)))


def _largest(fits: Callable[[int], bool], low: int, high: int) -> int | None:
    """The largest n in [low, high] with fits(n), for a fits that holds up to some n."""
    if not fits(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


def _shorter_context(scenario: Scenario, w: ServeWorkload) -> list[Relaxation]:
    """The longest context, in whole 16-token KV blocks, at which a replica carries one
    request (found by bisection on the model's own configs)."""
    blocks = _largest(
        lambda n: _carries(scenario, w, context_tokens=16 * n), 1, -(-w.context_tokens // 16) - 1
    )
    if blocks is None:
        return []
    tokens = 16 * blocks
    text = f"a context of at most {tokens:,} tokens (context_tokens {w.context_tokens:,})"
    return [Relaxation(text, workload_patch(w.name, context_tokens=tokens))]


def _more_cards(scenario: Scenario, w: ServeWorkload) -> list[Relaxation]:
    """The fewest cards per replica above max_cards_per_replica that carry one request."""
    limit = w.max_cards_per_replica
    for n in (n for n in SERVE_COUNTS if limit and n > limit):
        if _carries(scenario, w, max_cards_per_replica=n):
            text = f"allow {n} cards per replica (max_cards_per_replica {limit})"
            return [Relaxation(text, workload_patch(w.name, max_cards_per_replica=n))]
    return []


# --- a reserve no offer sells -----------------------------------------------------------------


def reserve_fit(scenario: Scenario, w: ReserveWorkload) -> Conflict:
    """No offer sells the card asked (outside spot, which people's cards never use)."""
    sold = {
        o.card: scenario.cards[o.card].memory_gib.value
        for o in scenario.offers.values()
        if any(m != "spot" for m in o.modes)
    }
    listing = ", ".join(f"{c} ({m:g} GiB)" for c, m in sorted(sold.items())) or "no card"
    if w.card is not None:
        needed = f"{w.cards} × {w.card}"
        available = f"no offer sells {w.card} outside spot; sold: {listing}"
        mine = scenario.cards.get(w.card)
        bigger = [m for m in sold.values() if mine is not None and m >= mine.memory_gib.value]
        if not bigger or mine is None:
            return Conflict("memory", (w.name,), needed, available)
        gib_ = mine.memory_gib.value
        patch = workload_patch(w.name, card=None, min_memory_gib=gib_)
        text = f"any card of at least {gib_:g} GiB (min_memory_gib {gib_:g} instead of card)"
        return Conflict("memory", (w.name,), needed, available, (Relaxation(text, patch),))
    asked = w.min_memory_gib or 0
    needed = f"{w.cards} cards of at least {asked:g} GiB"
    available = f"the largest card sold has {max(sold.values(), default=0):g} GiB; sold: {listing}"
    if not sold:
        return Conflict("memory", (w.name,), needed, available)
    most = max(sold.values())
    patch = workload_patch(w.name, min_memory_gib=most)
    relaxation = Relaxation(f"min_memory_gib {most:g} (it asks {asked:g})", patch)
    return Conflict("memory", (w.name,), needed, available, (relaxation,))


# --- the peak against all stock ---------------------------------------------------------------


Pool = tuple[str, str]


def _most(configs: list[ReplicaConfig], units: float) -> tuple[float, float]:
    """(capacity, replicas) at most on `units` units: an unbounded knapsack, exact."""
    if units == math.inf or units > KNAPSACK_UNITS:
        return math.inf, math.inf
    best = [0] * (int(units) + 1)
    for u in range(1, int(units) + 1):
        fills = [best[u - c.units] + c.capacity for c in configs if c.units <= u]
        best[u] = max([best[u - 1], *fills])
    return best[-1], units // min(c.units for c in configs)


def _bound(scenario: Scenario, job: ReplicaJob, extra: dict[Pool, int]) -> tuple[float, float]:
    """What all stock together carries at once, the workload alone: per offer, the lesser of
    its modes' stocks each filled best and its cap over all modes filled best."""
    capacity = replicas = 0.0
    for offer_id in sorted({c.offer for c in job.configs}):
        offer = scenario.offers[offer_id]
        mine = [c for c in job.configs if c.offer == offer_id]
        by_mode, by_cap = (0.0, 0.0), (math.inf, math.inf)
        for mode in sorted({c.mode for c in mine}):
            stock = offer.billing(mode).stock
            units = math.inf if stock is None else stock + extra.get((offer_id, mode), 0)
            most = _most([c for c in mine if c.mode == mode], units)
            by_mode = (by_mode[0] + most[0], by_mode[1] + most[1])
        if offer.max_units is not None:
            raised = offer.max_units + sum(k for (o, _), k in extra.items() if o == offer_id)
            by_cap = _most(mine, raised)
        capacity += min(by_mode[0], by_cap[0])
        replicas += min(by_mode[1], by_cap[1])
    return capacity, replicas


def _short(job: ReplicaJob, bound: tuple[float, float]) -> int | None:
    """The segment where the demand or minimum most exceeds the bound, or None."""
    capacity, replicas = bound
    worst = max(
        range(len(job.demand)),
        key=lambda s: max(job.demand[s] - capacity, job.minimum[s] - replicas),
    )
    if job.demand[worst] > capacity or job.minimum[worst] > replicas:
        return worst
    return None


def peak_stock(
    scenario: Scenario, segments: list[tuple[int, int]], job: ReplicaJob
) -> Conflict | None:
    """At some hour the demand (or minimum replicas) exceeds what every offer's stock
    together can carry with nothing else running; None if it never does."""
    bound = _bound(scenario, job, {})
    worst = _short(job, bound)
    if worst is None:
        return None
    at = when(scenario.axis, segments[worst][0])
    pools = sorted({(c.offer, c.mode) for c in job.configs})
    stocks = by_value([(f"{o} {m}", _stock(scenario, o, m)) for o, m in pools])
    if job.minimum[worst] > bound[1]:
        needed = f"{plural(job.minimum[worst], 'replica')} at {at} (min_replicas)"
        most = plural(bound[1], "replica")
    else:
        what = "request in flight" if job.kind == "serve" else "card"
        needed = f"{plural(job.demand[worst], what)} at {at}"
        most = plural(bound[0], what)
    available = f"{most} at most on all stock together ({stocks})"
    return Conflict("stock", (job.name,), needed, available, _more_stock(scenario, job))


def _stock(scenario: Scenario, offer: str, mode: str) -> str:
    stock = scenario.offers[offer].billing(mode).stock
    return "unlimited" if stock is None else plural(stock, "unit")


def _more_stock(scenario: Scenario, job: ReplicaJob) -> tuple[Relaxation, ...]:
    """The fewest units to add to the stock of the cheapest pool (card-hour price per unit
    of capacity) that has one, with its offer's cap raised alike."""
    limited = [c for c in job.configs if scenario.offers[c.offer].billing(c.mode).stock is not None]
    if not limited:
        return ()
    cheapest = min(
        limited,
        key=lambda c: (
            card_hour_price(scenario.offers[c.offer], c.mode) * c.cards / c.capacity,
            c.offer,
            c.mode,
        ),
    )
    key = (cheapest.offer, cheapest.mode)
    offer = scenario.offers[cheapest.offer]
    stock = offer.billing(cheapest.mode).stock
    assert stock is not None
    most = max(max(job.demand), max(job.minimum)) * max(c.units for c in job.configs)

    def enough(k: int) -> bool:
        return _short(job, _bound(scenario, job, {key: k})) is None

    if most < 1 or not enough(most):
        return ()
    low, high = 0, most  # more stock never makes the peak harder: the least k by bisection
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    k = high
    # the cap over its modes rises alike only where it would hold the new stock back
    cap = None
    if offer.max_units is not None and offer.max_units < stock + k:
        cap = offer.max_units + k
    text = (
        f"add {plural(k, 'unit')} of {offer.id} {cheapest.mode} stock "
        f"(peak needs {stock + k}, stock {stock})"
    )
    if cap is not None:
        text += f" and raise its max_units from {offer.max_units} to {cap}"
    return (Relaxation(text, stock_patch(offer.id, cheapest.mode, stock + k, cap)),)
