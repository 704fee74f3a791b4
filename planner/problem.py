"""The indexed, integer view of a scenario: each train job's feasible configs with their
runs and exact costs, windows tightened along the `after` DAG, package pools, money scale.

Knows nothing of the solver: the CP-SAT model, the baselines and the checker all read it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

import networkx as nx

from planner import prices
from planner.configs import Config, ReplicaConfig, train_configs
from planner.domain.catalog import Offer
from planner.domain.scenario import Scenario
from planner.domain.timeaxis import TimeAxis
from planner.domain.values import PACKAGE_DAYS
from planner.domain.workload import TrainWorkload
from planner.rules import (
    PACKAGE_MODES,
    package_span,
    packages_until,
    setup_hours,
)
from planner.serving import ReplicaJob, replica_jobs


class Infeasible(Exception):
    """The scenario has no feasible plan: `reasons` name the train jobs left without a config;
    `jobs` are all train jobs, windows tightened, for `planner.explain` to say why."""

    def __init__(self, reasons: list[str], jobs: Sequence[Job] = ()) -> None:
        self.reasons = reasons
        self.jobs = tuple(jobs)
        super().__init__("; ".join(reasons))


@dataclass(frozen=True)
class Job:
    """A train workload: its window (tightened), dependencies, configs."""

    index: int
    name: str
    workload: TrainWorkload
    earliest: int  # first hour it may start
    deadline: int  # hour by which it must have finished
    after: tuple[int, ...]
    configs: tuple[Config, ...]

    def start_range(self, config: Config) -> Sequence[int]:
        """Start hours allowed for `config`: any hour, or for windowed jobs the window
        hours the config's runs were shaped for, between earliest start and deadline."""
        last = self.deadline - config.span
        if config.starts is None:
            return range(self.earliest, last + 1)
        return tuple(s for s in config.starts if self.earliest <= s <= last)


@dataclass(frozen=True)
class PoolCommitment:
    start: int
    end: int
    units: int


@dataclass(frozen=True)
class Pool:
    """Cards held on one offer and mode: packages bought by the plan, or committed hourly."""

    offer: str
    mode: str
    unit_price: Fraction  # per package per unit (0 for committed hourly: paid as commitment)
    days: int  # local days one package lasts, 00:00 to 00:00 (0: not buyable, commitments only)
    stock: int | None
    committed: tuple[PoolCommitment, ...] = ()


@dataclass(frozen=True)
class FixedRental:
    """A commitment's rental: fixed start, end, units and cost."""

    name: str
    offer: str
    mode: str
    units: int
    start: int
    end: int
    cost: Fraction
    billed_hours: Decimal


@dataclass(frozen=True)
class NoGood:
    """Work that fits a pool's cards but not its machines (the checker's placement search):
    no plan may again run these train jobs on these configs from these starts while the
    pool holds no more units on any of `packages`' days and these replicas no fewer.
    Holding more, or carrying less, is what could make room, so the cut removes only plans
    that cannot be placed (planner/placement.py)."""

    pool: tuple[str, str]
    jobs: tuple[tuple[str, Config, int], ...]  # train job, config, start hour
    replicas: tuple[tuple[str, ReplicaConfig, int, int], ...]  # job, config, segment, count
    packages: tuple[tuple[int, int], ...]  # local day, units of the pool bought that day


@dataclass(frozen=True)
class Problem:
    scenario: Scenario
    hours: int
    jobs: tuple[Job, ...]
    pools: dict[tuple[str, str], Pool]
    fixed: tuple[FixedRental, ...]
    offer_rank: dict[str, int]
    money_scale: int  # multiply exact money by this to get the solver's integers
    segments: tuple[tuple[int, int], ...] = ()  # constant-demand hour ranges of replica jobs
    replica_jobs: tuple[ReplicaJob, ...] = ()
    replica_setup: dict[tuple[str, str], int] = field(default_factory=dict)  # (job, offer) → h
    nogoods: tuple[NoGood, ...] = ()  # placements learnt impossible (planner.placement)

    def rental_money(
        self, mode: str, offer: str, held: int, units: int
    ) -> tuple[Decimal, Fraction]:
        """(billed hours per unit, exact cost) of one rental (planner.prices.rental_money)."""
        return prices.rental_money(self.offers[offer], mode, held, units)

    def replica_rate(self, job: str, config: ReplicaConfig) -> prices.ReplicaRate:
        """The money of one replica of `config` for replica job `job`, per held hour and per
        start (planner.prices.ReplicaRate)."""
        rate = self._rates.get((job, config))
        if rate is None:  # asked per variable while a model is built: worked out once
            setup = self.replica_setup.get((job, config.offer), 0)
            replica_job = next(r for r in self.replica_jobs if r.name == job)
            rate = _replica_rate(self.scenario, replica_job, config, setup, self.segments)
            self._rates[(job, config)] = rate
        return rate

    @functools.cached_property
    def _rates(self) -> dict[tuple[str, ReplicaConfig], prices.ReplicaRate]:
        return {}

    @property
    def offers(self) -> dict[str, Offer]:
        return self.scenario.offers

    def held_cards(self, offer: str, cards: int) -> int:
        """Cards a job or replica of `cards` cards takes of an offer's held machines: its
        cards, or whole units where it needs more than one (rule 5: it then holds each
        fully; a 4-card replica on 3-card units takes 6 cards)."""
        unit = self.offers[offer].unit_cards
        return cards if cards <= unit else -(-cards // unit) * unit

    @property
    def axis(self) -> TimeAxis:
        return self.scenario.axis

    @functools.cached_property
    def segment_days(self) -> tuple[int, ...]:
        """Per segment, the local day it starts in."""
        return tuple(self.axis.day_of(a) for a, _ in self.segments)

    def package(self, key: tuple[str, str], day: int) -> tuple[int, int]:
        """Real hours [start, end) of a package of pool `key` bought on local day `day`."""
        return package_span(self.axis, self.pools[key].days, day)

    def among_bought(self, f: FixedRental) -> bool:
        """A committed package that starts on a horizon day is among the packages bought
        that day (the model's purchase counts include it); one starting past the horizon
        end is a commitment only, paid and never used."""
        return f.mode in PACKAGE_DAYS and self.axis.day_of(f.start) < self.axis.days

    @property
    def bought_commitments(self) -> Fraction:
        """Money of the committed packages among the packages bought: the package counts
        include them, so the package term subtracts this and the commitment term pays them
        once."""
        return sum((f.cost for f in self.fixed if self.among_bought(f)), Fraction(0))

    def committed_purchases(self, key: tuple[str, str]) -> dict[int, int]:
        """Units of a package pool that commitments buy, per horizon day (several
        commitments on one day add up)."""
        days: dict[int, int] = {}
        for c in self.pools[key].committed:
            day = self.axis.day_of(c.start)
            if self.pools[key].days and day < self.axis.days:
                days[day] = days.get(day, 0) + c.units
        return days

    def integer(self, amount: Fraction) -> int:
        scaled = amount * self.money_scale
        assert scaled.denominator == 1, amount
        return int(scaled)


def build_problem(scenario: Scenario, serving: bool = False) -> Problem:
    """The integer view of a scenario; raises Infeasible when a job has no config.

    `serving=False` (the default until serving is planned end to end) refuses serve and
    reserve workloads by name.
    """
    others = [w.name for w in scenario.spec.workloads if not isinstance(w, TrainWorkload)]
    if others and not serving:
        raise ValueError(
            "plan solve plans train workloads only until serving lands; this scenario has "
            f"serve/reserve workloads: {', '.join(others)}"
        )
    hours = scenario.axis.hours
    fixed, committed = _commitments(scenario)
    trains = [w for w in scenario.spec.workloads if isinstance(w, TrainWorkload)]
    jobs = [_job(scenario, i, w, hours, committed) for i, w in enumerate(trains)]
    jobs = _tighten(jobs)
    empty = [f"{j.name}: {why}" for j in jobs for why in [_why_empty(scenario, j)] if why]
    if empty:
        raise Infeasible(empty, jobs)
    segments, replicas = replica_jobs(scenario) if others else ([], [])
    pools = _pools(scenario, jobs, committed, replicas)
    # each part the objective turns into an integer on its own (planner.cpsat.objective)
    amounts = [x for j in jobs for c in j.configs for x in (c.rental_cost, c.storage_cost)]
    amounts += [p.unit_price for p in pools.values()] + [f.cost for f in fixed]
    setup = {
        (r.name, c.offer): _replica_setup(scenario, r, c.offer)
        for r in replicas
        for c in r.configs
        if c.rented
    }
    rates = {
        (r.name, c): _replica_rate(scenario, r, c, setup.get((r.name, c.offer), 0), segments)
        for r in replicas
        for c in r.configs
    }
    amounts += [x for rate in rates.values() for x in (rate.hour, rate.disk)]
    amounts += [rate.hour * weight for rate in rates.values() for _, weight in rate.windows]
    # a stepped rental's round-up is a whole multiple of 1/denominator of the step's hours
    amounts += [rate.hour / rate.step.denominator for rate in rates.values() if rate.stepped]
    scale = math.lcm(*(a.denominator for a in amounts)) if amounts else 1
    rank = {offer: i for i, offer in enumerate(sorted(scenario.offers))}
    replicas = [r.with_bounds(segments, _bridge(r.name, rates)) for r in replicas]
    # what no plan can use is gone before anything plans: the baselines tried packages of
    # stock 0 at every start (25 s of a 60 s limit on a 30-workload quarter)
    return within_stock(
        Problem(
            scenario,
            hours,
            tuple(jobs),
            pools,
            tuple(fixed),
            rank,
            scale,
            tuple(segments),
            tuple(replicas),
            setup,
        )
    )


def _bridge(
    name: str, rates: dict[tuple[str, ReplicaConfig], prices.ReplicaRate]
) -> Callable[[ReplicaConfig], int]:
    """Hours a replica of `name` may be kept through a dip: on its own rentals, what
    keeping it can save, a start's setup hours plus what billing adds to the rentals either
    side (each under `short` hours, or under one step where the step does not divide the
    hour); none on held cards (starts cost nothing there)."""

    def reach(c: ReplicaConfig) -> int:  # held cards' rates have no setup and no minimum
        rate = rates[(name, c)]
        most = max(rate.short, rate.step) if rate.stepped else rate.short
        return rate.setup + 2 * math.ceil(most)

    return reach


def _replica_rate(
    scenario: Scenario,
    job: ReplicaJob,
    config: ReplicaConfig,
    setup: int,
    segments: Sequence[tuple[int, int]],
) -> prices.ReplicaRate:
    offer = scenario.offers[config.offer]
    workload = scenario.workload(job.name)
    assert not isinstance(workload, TrainWorkload)
    # a min hold binds a rental until the workload's end (its last segment's)
    last = next((s for s in reversed(range(len(segments))) if job.within[s]), None)
    until = 0 if last is None else segments[last][1]
    return prices.replica_rate(
        offer, workload, config.units, config.cards, config.rented, setup, (job.hold, until)
    )


def _replica_setup(scenario: Scenario, job: ReplicaJob, offer_id: str) -> int:
    """Whole hours billed on top of each hourly replica rental for its setup: ceil(setup)."""
    workload = scenario.workload(job.name)
    model = scenario.models.get(job.name)  # none for reserved cards: the image only
    return math.ceil(setup_hours(scenario.offers[offer_id], model, workload.setup_minutes))


def quote_job(scenario: Scenario, name: str) -> Job:
    """One train workload's configs on its own (no dependencies tightened, no stock)."""
    workload = scenario.workload(name)
    if not isinstance(workload, TrainWorkload):
        raise ValueError(f"{name} is a {workload.kind} workload; quote covers train work for now")
    index = train_names(scenario).index(name)
    _, committed = _commitments(scenario)
    job = _job(scenario, index, workload, scenario.axis.hours, committed)
    return _replace(job, configs=tuple(c for c in job.configs if job.start_range(c)))


def quote_replicas(scenario: Scenario, name: str) -> list[dict[str, Any]]:
    """Every config of a serve or reserve workload carrying its whole curve alone: hourly
    replicas follow the demand (held hours + ceil(setup) per start); packages hold the peak
    count from the first active day to the last. Exact money, unsorted. `within_stock`: the
    peak's units at once are within the mode's stock and the offer's `max_units` (a row
    beyond them is priced all the same: a plan can carry the rest of the peak elsewhere)."""
    segments, jobs = replica_jobs(scenario, only=name)
    (job,) = jobs
    active = [s for s in range(len(segments)) if job.active(s)]
    rows: list[dict[str, Any]] = []
    for c in job.configs:
        if c.held and c.mode not in PACKAGE_MODES:
            continue  # committed hourly cards are paid already; alone they price nothing
        offer = scenario.offers[c.offer]
        need = [max(job.minimum[s], -(-job.demand[s] // c.capacity)) for s in range(len(segments))]
        need = job.kept(tuple(segments), need)  # under a min hold, replicas stay held
        # held machines' cards are shared by replicas (rule 5): whole machines for the peak
        peak_units = (
            max(need) * c.units if c.rented else -(-max(need) * c.cards // offer.unit_cards)
        )
        rate = _replica_rate(scenario, job, c, _replica_setup(scenario, job, c.offer), segments)
        # rented: the replicas' rentals and disks; held: their disks (packages below)
        cost = rate.series(need, segments)
        if c.rented:
            # replica-hours held and rounded up, each replica `units` units of its offer
            replica_hours = rate.held_hours(need, segments) + rate.round_up(need, segments)
            unit_hours = replica_hours * c.units
            whole = unit_hours.denominator == 1  # a fractional minimum bills part of an hour
            billed: dict[str, Any] = {
                "billed_unit_hours": int(unit_hours) if whole else float(unit_hours),
                "packages": None,
            }
        else:
            first = scenario.axis.day_of(segments[active[0]][0])
            count = packages_until(
                scenario.axis, first, PACKAGE_DAYS[c.mode], segments[active[-1]][1]
            )
            cost += prices.unit_price(offer, c.mode) * peak_units * count
            billed = {"billed_unit_hours": None, "packages": count, "package_units": peak_units}
        rows.append(
            {
                "card": c.card,
                "cards": c.cards,
                "offer": c.offer,
                "mode": c.mode,
                "precision": c.precision,
                "capacity": c.capacity,
                "peak": max(need),
                **billed,
                "within_stock": offer.sells(c.mode, peak_units),
                "exact_cost": cost,
            }
        )
    return rows


def commitment_rentals(scenario: Scenario) -> list[FixedRental]:
    """The committed rentals the scenario's commitments fix, each package one (a plan holds
    each as a rental marked committed)."""
    return _commitments(scenario)[0]


def _commitments(
    scenario: Scenario,
) -> tuple[list[FixedRental], dict[tuple[str, str], list[PoolCommitment]]]:
    """Committed rentals; a package commitment is `count` packages back to back from its
    start date (00:00 local), by default enough to reach the horizon end."""
    axis = scenario.axis
    fixed: list[FixedRental] = []
    committed: dict[tuple[str, str], list[PoolCommitment]] = {}
    for i, c in enumerate(scenario.spec.commitments):
        offer = scenario.offers[c.offer]
        start = axis.hour_of_local(c.start)
        name = c.name or f"commitment-{i + 1}"
        if c.mode in PACKAGE_MODES:
            days = PACKAGE_DAYS[c.mode]
            first = axis.day_of(start)
            count = c.count or math.ceil((axis.days - first) / days)
            for k in range(count):
                begin, end = package_span(axis, days, first + k * days)
                billed, cost = prices.rental_money(offer, c.mode, end - begin, c.units)
                fixed.append(FixedRental(name, c.offer, c.mode, c.units, begin, end, cost, billed))
                committed.setdefault((c.offer, c.mode), []).append(
                    PoolCommitment(begin, end, c.units)
                )
        else:
            end = axis.hour_of_local(c.end) if c.end is not None else axis.hours
            billed, cost = prices.rental_money(offer, c.mode, end - start, c.units)
            fixed.append(FixedRental(name, c.offer, c.mode, c.units, start, end, cost, billed))
            committed.setdefault((c.offer, c.mode), []).append(PoolCommitment(start, end, c.units))
    return fixed, committed


def _job(
    scenario: Scenario,
    index: int,
    workload: TrainWorkload,
    hours: int,
    committed: dict[tuple[str, str], list[PoolCommitment]],
) -> Job:
    axis = scenario.axis
    earliest = axis.hour_of_local(workload.earliest_start) if workload.earliest_start else 0
    deadline = axis.hour_of_local(workload.deadline) if workload.deadline else hours
    configs = tuple(train_configs(scenario, index, workload, committed))
    names = train_names(scenario)
    return Job(
        index,
        workload.name,
        workload,
        earliest,
        deadline,
        tuple(names.index(a) for a in workload.after),
        configs,
    )


def train_names(scenario: Scenario) -> list[str]:
    """Train workloads in file order: a job's index is its place in this list."""
    return [w.name for w in scenario.spec.workloads if isinstance(w, TrainWorkload)]


def _tighten(jobs: list[Job]) -> list[Job]:
    """Earliest starts pushed forward and deadlines pulled back along the `after` DAG,
    then configs that cannot fit their job's window dropped, until nothing changes."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(jobs)))
    graph.add_edges_from((before, job.index) for job in jobs for before in job.after)
    order = list(nx.topological_sort(graph))
    while True:
        changed = False
        for i in order:
            job = jobs[i]
            earliest = max(
                [job.earliest] + [jobs[p].earliest + _shortest(jobs[p]) for p in job.after]
            )
            if earliest != job.earliest:
                jobs[i] = job = _replace(job, earliest=earliest)
                changed = True
        for i in reversed(order):
            job = jobs[i]
            successors = [jobs[s].deadline - _shortest(jobs[s]) for s in graph.successors(i)]
            deadline = min([job.deadline, *successors])
            if deadline != job.deadline:
                jobs[i] = job = _replace(job, deadline=deadline)
                changed = True
        for i, job in enumerate(jobs):
            kept = tuple(c for c in job.configs if job.start_range(c))
            if len(kept) != len(job.configs):
                jobs[i] = _replace(job, configs=kept)
                changed = True
        if not changed:
            return jobs


def within_stock(problem: Problem) -> Problem:
    """`problem` without the configs that need more units at once than their offer sells on
    their mode (its stock, or the offer's `max_units` over all modes: rule 7), which no plan
    can use; `build_problem` applies it, so the baselines, the bound and the search see only
    what can run. A workload all of whose
    configs need more keeps them, for the explanation of why it cannot run to name."""

    def usable(config: Config | ReplicaConfig) -> bool:
        return problem.offers[config.offer].sells(config.mode, config.units)

    def kept(configs: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(c for c in configs if usable(c)) or configs

    jobs = tuple(_replace(j, configs=kept(j.configs)) for j in problem.jobs)
    replicas = tuple(replace(r, configs=kept(r.configs)) for r in problem.replica_jobs)
    return replace(problem, jobs=jobs, replica_jobs=replicas)


def _shortest(job: Job) -> int:
    return min((c.span for c in job.configs), default=0)


def _replace(job: Job, **changes: object) -> Job:
    return replace(job, **changes)  # type: ignore[arg-type]


def _why_empty(scenario: Scenario, job: Job) -> str | None:
    """That a job has no config, and nothing more: `planner.explain` says which rule."""
    if job.configs:
        return None
    return (
        f"no config runs it between {scenario.axis.text(job.earliest)} and "
        f"{scenario.axis.text(job.deadline)} (its window, tightened along `after`)"
    )


def _pools(
    scenario: Scenario,
    jobs: list[Job],
    committed: dict[tuple[str, str], list[PoolCommitment]],
    replicas: list[ReplicaJob] = (),  # type: ignore[assignment]
) -> dict[tuple[str, str], Pool]:
    keys = {c.pool for j in jobs for c in j.configs if c.held} | set(committed)
    keys |= {(c.offer, c.mode) for r in replicas for c in r.configs if c.held}
    pools = {}
    for offer_id, mode in sorted(keys):
        offer = scenario.offers[offer_id]
        billing = offer.billing(mode)
        buyable = mode in PACKAGE_MODES
        pools[(offer_id, mode)] = Pool(
            offer_id,
            mode,
            prices.unit_price(offer, mode) if buyable else Fraction(0),
            PACKAGE_DAYS[mode] if buyable else 0,
            billing.stock,
            tuple(committed.get((offer_id, mode), ())),
        )
    return pools
