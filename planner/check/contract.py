"""The rules of docs/rules.md as the checker reads them, written for the checker alone.

The model prices configs by closed forms; the checker walks hours. Nothing here is shared
with the model: only the schemas (`planner.domain`) and the estimates (`planner.estimate`:
memory, speed, replica capacity), which are the inputs both sides plan on.
"""

from __future__ import annotations

import math
from fractions import Fraction

from planner.domain.catalog import CardType, HourlyBilling, Offer
from planner.domain.scenario import Scenario
from planner.domain.values import PACKAGE_DAYS, instant_datetime
from planner.domain.workload import ReserveWorkload, ServeWorkload, TrainWorkload
from planner.estimate.core import IMAGE_GB
from planner.estimate.memory import ServeSetup, workload_setup
from planner.estimate.serve import replica_capacity
from planner.estimate.speed import scale_measured, scaling_efficiency, spot_factor, train_speed

# The estimates are floats; a run whose work ends within this many hours (3.6 ms) of an
# hour boundary is done at that boundary, so float noise never adds a billed hour.
SLACK = Fraction(1, 10**6)
DEMAND_SLACK = 1e-9  # 48.000000001 requests in flight are 48


def billed(held: Fraction, billing: HourlyBilling) -> Fraction:
    """Rule 4: ceil(max(held, minimum) ÷ increment) × increment hours, per unit."""
    hours = max(held, Fraction(billing.min_hours))
    increment = Fraction(billing.increment_hours)
    return math.ceil(hours / increment) * increment


def package_days(mode: str) -> int | None:
    return PACKAGE_DAYS.get(mode)


def setup_hours(scenario: Scenario, offer: Offer, workload_name: str) -> Fraction:
    """Rule 2: (image GB + 16-bit weights GB) × 8 ÷ the link's Gbit/s ÷ 3600, unless the
    workload's or the offer's setup_minutes says otherwise (reserved cards: the image only)."""
    workload = scenario.workload(workload_name)
    minutes = workload.setup_minutes if workload.setup_minutes is not None else offer.setup_minutes
    if minutes is not None:
        return Fraction(minutes, 60)
    model = scenario.models.get(workload_name)
    gigabytes = Fraction(IMAGE_GB) + (Fraction(model.params * 2, 10**9) if model else 0)
    return gigabytes * 8 / Fraction(offer.link_gbps) / 3600


def held_cards_rule(scenario: Scenario, offer: str, mode: str, held: bool) -> str | None:
    """Rule 5: a workload runs on held cards only on a package or a committed rental of
    that offer and mode, and on a package only as held cards. Why not, or None."""
    committed = any((c.offer, c.mode) == (offer, mode) for c in scenario.spec.commitments)
    if held and not (mode in PACKAGE_DAYS or committed):
        return f"held cards of {offer} {mode}: neither a package nor a commitment"
    if not held and mode in PACKAGE_DAYS:
        return f"a {mode} package is held cards: held must be true"
    return None


def units_for(offer: Offer, cards: int) -> int:
    return -(-cards // offer.unit_cards)


def train_rate(
    scenario: Scenario, w: TrainWorkload, offer: Offer, card: CardType, cards: int, mode: str
) -> tuple[Fraction, float, float]:
    """(compute hours on these cards, scaling efficiency, spot factor) for the whole job.

    Rule 2: work ÷ (throughput × efficiency); a measured throughput is carried to other
    cards by the dense-peak ratio and to other counts by the ratio of efficiencies; spot
    divides by the expected share of useful time."""
    model = scenario.models[w.name]
    setup = workload_setup(
        w,
        scenario.spec.usable_memory_fraction,
        scenario.spec.memory_margin,
        scenario.spec.speed_margin,
    )
    speed = train_speed(model, card, cards, setup, offer.node_cards, offer.network)
    tokens_per_s = speed.tokens_per_s
    trial = scenario.measured_speed(w)
    if trial is not None:
        measured = scenario.cards[trial.card]
        measured_eff, _ = scaling_efficiency(
            model, measured, trial.cards, setup, offer.node_cards, offer.network
        )
        one = setup.knobs.pipeline  # a layer split runs one card at a time
        tokens_per_s = scale_measured(
            trial.tokens_per_s,
            measured,
            1 if one else trial.cards,
            measured_eff,
            card,
            1 if one else cards,
            speed.efficiency,
            w.precision,
        )
    hours = Fraction(w.tokens) / Fraction(tokens_per_s) / 3600
    factor = 1.0
    if mode == "spot":
        assert offer.spot is not None and w.checkpoint_every is not None
        factor = spot_factor(
            offer.spot.preemptions_per_hour, w.checkpoint_every, offer.spot.restart_minutes
        )
        hours /= Fraction(factor)
    return hours, speed.efficiency, factor


def serve_capacity(
    scenario: Scenario, w: ServeWorkload, card: CardType, cards: int, precision: str
) -> int:
    """Requests in flight one replica carries (KV memory and minimum decode speed)."""
    setup = ServeSetup(
        precision=precision,
        kv_precision=w.kv_precision,
        engine=w.engine,
        usable_fraction=scenario.spec.usable_memory_fraction,
        margin=scenario.spec.memory_margin,
        offset_gib=scenario.memory_offset_gib(scenario.models[w.name].name, card.id, "serve"),
        context_tokens=w.context_tokens,
        output_tokens=w.output_tokens,
        max_seqs=w.max_num_seqs or ServeSetup.max_seqs,
    )
    model = scenario.models[w.name]
    capacity = replica_capacity(model, card, cards, setup, w.min_tokens_per_s, w.ttft_s)
    return capacity.max_concurrency


def serve_demand(scenario: Scenario, w: ServeWorkload) -> tuple[list[int], list[int]]:
    """Per hour of the horizon: requests in flight, and the replicas that must run."""
    axis = scenario.axis
    first, last = axis.hour_of_local(w.start), axis.hour_of_local(w.end)
    start_month = w.start.year * 12 + w.start.month
    demand, minimum = [0] * axis.hours, [0] * axis.hours
    for h in range(max(first, 0), min(last, axis.hours)):
        when = axis.local(h)
        if w.concurrency is not None:
            level = w.concurrency.at(when.weekday(), when.hour)
        else:
            assert w.requests_per_s is not None and w.output_tokens is not None
            # Little's law: arrivals × the time a request holds its slot while decoding
            level = w.requests_per_s.at(when.weekday(), when.hour)
            level *= w.output_tokens / w.min_tokens_per_s
        level *= w.demand_share  # a request class carries its share of the curve
        level *= (1 + w.growth_per_month) ** (when.year * 12 + when.month - start_month)
        level *= w.month_scale.get(f"{when.year:04d}-{when.month:02d}", 1.0)
        demand[h] = math.ceil(level - DEMAND_SLACK)
        minimum[h] = w.min_replicas
    return demand, minimum


def reserve_demand(scenario: Scenario, w: ReserveWorkload) -> list[int]:
    """Per hour: the cards a reserve needs (its window on its days, from start to end; a
    window that crosses midnight belongs to the day it opens, so one opened before the
    start's date is not needed at all)."""
    axis = scenario.axis
    first, last = axis.hour_of_local(w.start), axis.hour_of_local(w.end)
    start_date = instant_datetime(w.start).date()
    need = [0] * axis.hours
    for h in range(max(first, 0), min(last, axis.hours)):
        day = axis.in_window(h, w.hours)
        if day is None or axis.date(day) < start_date:
            continue
        if axis.date(day).weekday() in w.days:
            need[h] = w.cards
    return need


def reserve_card_fits(scenario: Scenario, w: ReserveWorkload, card: CardType) -> bool:
    if w.card is not None:
        return card.id == w.card
    return card.memory_gib.value >= (w.min_memory_gib or 0)
