"""A train job's configs: card type × count × offer × billing mode, with runs and exact money.

Memory and speed come from the estimates; occupied and billed hours from planner.rules.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from planner.domain.catalog import CardType, Offer
from planner.domain.limits import SERVE_COUNTS, TRAIN_COUNTS
from planner.domain.scenario import Scenario
from planner.domain.workload import ServeWorkload, TrainWorkload
from planner.estimate.memory import ServeSetup, TrainSetup, for_card, train_memory, workload_setup
from planner.estimate.precision import supports
from planner.estimate.serve import replica_capacity
from planner.estimate.speed import scale_measured, scaling_efficiency, spot_factor, train_speed
from planner.prices import runs_money, storage_money
from planner.rules import (
    PACKAGE_MODES,
    DailyRuns,
    daily_runs,
    occupied_hours,
    setup_hours,
)

COUNTS = TRAIN_COUNTS  # card counts a train job may take


@dataclass(frozen=True)
class Config:
    """One way to run a job: card type × count × offer × billing mode, with its runs."""

    job: int
    card: str
    cards: int
    offer: str
    mode: str
    units: int
    held: bool  # runs on held cards (packages, commitments): no money per run
    runs: tuple[tuple[int, int], ...]  # (offset from the job's start, occupied hours)
    compute_hours: Fraction  # on all its cards, spot rework included
    setup_hours: Fraction  # per start (hourly/spot: per run; packages: once)
    efficiency: float
    spot_factor: float
    billed_hours: Decimal  # per unit, all runs (0 when held)
    rental_cost: Fraction  # units × price × billed hours
    storage_cost: Fraction  # disk for the job's span (rule 9)
    # windowed jobs: the window hours it may start at, all with these runs (a start inside a
    # window runs the rest of it first); None: any hour
    starts: tuple[int, ...] | None = None

    @property
    def span(self) -> int:
        return DailyRuns(self.runs).span

    @property
    def cost(self) -> Fraction:
        return self.rental_cost + self.storage_cost

    @property
    def pool(self) -> tuple[str, str]:
        return (self.offer, self.mode)

    def label(self) -> str:
        return f"{self.cards}× {self.card} on {self.offer} {self.mode}"


def train_configs(
    scenario: Scenario,
    job: int,
    w: TrainWorkload,
    committed: Collection[tuple[str, str]],
) -> list[Config]:
    """Every config of a train workload whose memory fits, with its runs and exact costs;
    `committed` names the (offer, mode) pools held by commitments."""
    model = scenario.models[w.name]
    setup = workload_setup(
        w,
        scenario.spec.usable_memory_fraction,
        scenario.spec.memory_margin,
        scenario.spec.speed_margin,
    )
    fits: dict[tuple[str, int], bool] = {}
    configs = []
    for offer in scenario.offers.values():
        card = scenario.cards[offer.card]
        if not supports(card, w.precision):
            continue
        for count in COUNTS:
            if (w.max_cards and count > w.max_cards) or (
                count > offer.node_cards and offer.network is None
            ):
                continue
            key = (card.id, count)
            if key not in fits:
                sized = for_card(setup, scenario, model, card.id, w.method)
                fits[key] = train_memory(model, card, count, sized).fits
            if not fits[key]:
                continue
            tps, efficiency = _tokens_per_s(scenario, w, card, count, offer, setup)
            modes = [m for m in offer.modes if m != "spot" or w.checkpoint_every is not None]
            held_modes = [m for m in modes if m in PACKAGE_MODES]
            held_modes += [
                m for m in modes if m not in PACKAGE_MODES and (offer.id, m) in committed
            ]
            for mode in modes:
                if mode not in PACKAGE_MODES:
                    configs += _configs(
                        scenario, job, w, offer, card, count, mode, False, tps, efficiency
                    )
            for mode in held_modes:
                configs += _configs(
                    scenario, job, w, offer, card, count, mode, True, tps, efficiency
                )
    return [c for c in configs if c.runs]


def _tokens_per_s(
    scenario: Scenario,
    w: TrainWorkload,
    card: CardType,
    count: int,
    offer: Offer,
    setup: TrainSetup,
) -> tuple[float, float]:
    model = scenario.models[w.name]
    speed = train_speed(model, card, count, setup, offer.node_cards, offer.network)
    measured = scenario.measured_speed(w)
    if measured is None:
        return speed.tokens_per_s, speed.efficiency
    measured_card = scenario.cards[measured.card]
    # the trial is costed on this offer's nodes and network (it states neither), so a
    # trial on the same card and count is carried unchanged; a layer split runs one card
    # at a time, so it scales with neither count
    measured_eff, _ = scaling_efficiency(
        model, measured_card, measured.cards, setup, offer.node_cards, offer.network
    )
    one = setup.knobs.pipeline
    tps = scale_measured(
        measured.tokens_per_s,
        measured_card,
        1 if one else measured.cards,
        measured_eff,
        card,
        1 if one else count,
        speed.efficiency,
        w.precision,
    )
    return tps, speed.efficiency


def _configs(
    scenario: Scenario,
    job: int,
    w: TrainWorkload,
    offer: Offer,
    card: CardType,
    count: int,
    mode: str,
    held: bool,
    tps: float,
    efficiency: float,
) -> list[Config]:
    """One config, or for a windowed job one per distinct shape of its runs (the shapes
    differ only between start days on either side of a daylight-saving change)."""
    model = scenario.models[w.name]
    # exact to a micro-hour, and never 0: a token is work (a job of 1 token still runs)
    compute = max(Fraction(w.tokens / tps / 3600).limit_denominator(10**6), Fraction(1, 10**6))
    factor = 1.0
    if mode == "spot":
        assert offer.spot is not None and w.checkpoint_every is not None
        factor = spot_factor(
            offer.spot.preemptions_per_hour, w.checkpoint_every, offer.spot.restart_minutes
        )
        compute = (compute / Fraction(factor)).limit_denominator(10**6)
    setup = setup_hours(offer, model, w.setup_minutes)
    shapes: Mapping[tuple[tuple[int, int], ...], tuple[int, ...] | None]
    if w.daily_hours is not None:
        shapes = _windowed_runs(scenario, w, compute, setup, setup_every_day=not held)
    else:
        shapes = {((0, occupied_hours(compute, setup)),): None}
    units = math.ceil(count / offer.unit_cards)
    return [
        Config(
            job,
            card.id,
            count,
            offer.id,
            mode,
            units,
            held,
            runs,
            compute,
            setup,
            efficiency,
            factor,
            *_money(w, offer, mode, units, held, runs),
            starts,
        )
        for runs, starts in shapes.items()
    ]


def _windowed_runs(
    scenario: Scenario, w: TrainWorkload, compute: Fraction, setup: Fraction, setup_every_day: bool
) -> dict[tuple[tuple[int, int], ...], tuple[int, ...]]:
    """The runs of a windowed job started at each window hour between its own earliest
    start and deadline, grouped by shape: shape → the start hours it fits (rule 3: it runs
    in every window hour from its start until done, so a start inside a window runs the
    rest of that window first; shapes repeat from day to day except across a
    daylight-saving change)."""
    axis = scenario.axis
    window = w.daily_hours
    assert window is not None
    earliest = axis.hour_of_local(w.earliest_start) if w.earliest_start else 0
    deadline = axis.hour_of_local(w.deadline) if w.deadline else axis.hours
    shapes: dict[tuple[tuple[int, int], ...], list[int]] = {}
    # from the window opened the day before: one that crosses midnight is still open in
    # the first hours of the earliest start's day (the horizon's first day included); up
    # to the deadline: work not done by then is no run
    following = (axis.window(d, window) for d in range(axis.day_of(earliest) - 1, axis.days))
    windows = list(itertools.takewhile(lambda w: w[0] < deadline, following))
    for i, (opens, closes) in enumerate(windows):
        for start in range(max(opens, earliest), min(closes, deadline)):
            later = itertools.islice(windows, i + 1, None)
            runs = daily_runs(
                compute, setup, itertools.chain(((start, closes),), later), setup_every_day
            )
            if runs is not None and runs.runs:
                shapes.setdefault(runs.runs, []).append(start)
    return {shape: tuple(starts) for shape, starts in shapes.items()}


def _money(
    w: TrainWorkload,
    offer: Offer,
    mode: str,
    units: int,
    held: bool,
    runs: tuple[tuple[int, int], ...],
) -> tuple[Decimal, Fraction, Fraction]:
    """(billed hours per unit, rental cost, storage cost) of one run shape: rented runs
    are rentals of their own; the disk bills over the whole span (disks of stopped
    instances bill)."""
    billed, rental = (Decimal(0), Fraction(0)) if held else runs_money(offer, mode, units, runs)
    return billed, rental, storage_money(offer, w, DailyRuns(runs).span)


@dataclass(frozen=True)
class ReplicaConfig:
    """One way to run a replica of a served model: card type × count × offer × mode, at the
    listed precision that carries the most requests on that card."""

    card: str
    cards: int
    offer: str
    mode: str
    units: int
    precision: str
    capacity: int  # requests in flight one replica carries (KV memory and decode speed)
    tokens_per_s: float  # decode tokens/s of the replica at that capacity
    held: bool = False  # on held cards: a package, or a committed hourly rental (rule 8)

    @property
    def rented(self) -> bool:
        """Runs on hourly rentals of its own, billed per replica rental (rule 6)."""
        return not self.held

    @property
    def pool(self) -> tuple[str, str]:
        """(offer, billing mode): the pool whose cards it holds when `held`."""
        return (self.offer, self.mode)


def replica_modes(scenario: Scenario, offer: Offer) -> list[tuple[str, bool]]:
    """(mode, held) a replica may use on an offer: never spot; packages as held cards;
    hourly on its own rentals and, where a commitment holds hourly units, on those too."""
    committed = {(c.offer, c.mode) for c in scenario.spec.commitments}
    options: list[tuple[str, bool]] = []
    for mode in offer.modes:
        if mode == "spot":
            continue
        if mode in PACKAGE_MODES:
            options.append((mode, True))
            continue
        options.append((mode, False))
        if (offer.id, mode) in committed:
            options.append((mode, True))
    return options


def replica_counts(scenario: Scenario, workload: ServeWorkload, offer: Offer) -> list[int]:
    """Card counts one replica may take on an offer: within one node (a network or not:
    the serving estimate times its all-reduces on the node's links, so a replica across
    nodes is no option rather than an optimistic one), at most `max_cards_per_replica`,
    and splitting the heads evenly (tensor parallel)."""
    model = scenario.models[workload.name]
    return [
        count
        for count in SERVE_COUNTS
        if count <= offer.node_cards
        and not (workload.max_cards_per_replica and count > workload.max_cards_per_replica)
        and not (model.heads % count or (model.kv_heads % count and count % model.kv_heads))
    ]


def replica_configs(scenario: Scenario, workload: ServeWorkload) -> list[ReplicaConfig]:
    """Every config that can carry at least one request of `workload` (never on spot)."""
    capacities: dict[tuple[str, int], tuple[int, str, float]] = {}
    configs = []
    for offer in scenario.offers.values():
        card = scenario.cards[offer.card]
        for count in replica_counts(scenario, workload, offer):
            key = (card.id, count)
            if key not in capacities:
                capacities[key] = _best_precision(scenario, workload, card, count)
            capacity, precision, speed = capacities[key]
            if capacity < 1:
                continue
            units = math.ceil(count / offer.unit_cards)
            for mode, held in replica_modes(scenario, offer):
                configs.append(
                    ReplicaConfig(
                        card.id, count, offer.id, mode, units, precision, capacity, speed, held
                    )
                )
    return configs


def _best_precision(
    scenario: Scenario, workload: ServeWorkload, card: CardType, count: int
) -> tuple[int, str, float]:
    """(capacity, precision, tokens/s) of the listed precision carrying most requests."""
    best = (0, "", 0.0)
    for precision in workload.precision:
        if not supports(card, precision):
            continue
        setup = ServeSetup(
            precision=precision,
            kv_precision=workload.kv_precision,
            engine=workload.engine,
            usable_fraction=scenario.spec.usable_memory_fraction,
            margin=scenario.spec.memory_margin,
            offset_gib=scenario.memory_offset_gib(
                scenario.models[workload.name].name, card.id, "serve"
            ),
            context_tokens=workload.context_tokens,
            output_tokens=workload.output_tokens,
            max_seqs=workload.max_num_seqs or ServeSetup.max_seqs,
        )
        replica = replica_capacity(
            scenario.models[workload.name],
            card,
            count,
            setup,
            workload.min_tokens_per_s,
            workload.ttft_s,
        )
        if replica.max_concurrency > best[0]:
            best = (replica.max_concurrency, precision, replica.tokens_per_s)
    return best
