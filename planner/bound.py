"""A lower bound on the cost of every plan, computed without the solver
(a real bound). It sees every workload, so a plan's gap means something even where CP-SAT reports
no bound (large quarters) or one that sees only a package some job cannot avoid.

The argument (a Lagrangian relaxation of "cards used ≤ cards held"). A plan pays its
commitments (a constant), its hourly and spot rentals and storage, and for each package
pool P: price_P × (N_P − K_P), with N_P unit-packages bought and K_P of them committed
(paid among the commitments). One unit-package holds at most h_P card-hours (unit cards ×
its longest real length; a day has 25 h across a daylight-saving change), and workloads use
U_P ≤ h_P × N_P card-hours of P. For any λ_P in [0, price_P ÷ h_P]:

    price_P (N_P − K_P) ≥ price_P (N_P − K_P) − λ_P (h_P N_P − U_P)
                        = N_P (price_P − λ_P h_P) − price_P K_P + λ_P U_P
                        ≥ M_P (price_P − λ_P h_P) − price_P K_P + λ_P U_P

where M_P ≤ N_P is a number of unit-packages every plan buys: its committed ones, or what a
job that can run nowhere else needs. λ_P U_P is then charged to the workloads that use P: a
card-hour of P costs them λ_P. Each workload is priced alone at its cheapest under those
charges (ignoring stock and billing round-ups, which only add cost; a config that needs
more units at once than its offer sells is no option: `within_stock` drops it when the
problem is built): a train job on its cheapest config; a serve or reserve workload per
segment at the least cost of whole replicas that carry the demand and the minimum
(`least_cover`). In the first segment of each run of its demand (`ReplicaJob.openings`) a
rented replica also pays its setup hours, or the hours of the gap before the run if it was
held through them (the gap's segments price nothing); the setups of rises inside a run are
left out. Committed hourly cards are free to use. Every choice of λ gives a valid bound;
`lower_bound` takes the best of a few.

Two more kinds of charge are tried: a pool some job forces charged by time, low only
while its counted package is held (planner.window), and the pools no job forces charged by
segment (planner.charges; committed pools too), on their own and together with the first;
by segment, each service also pays the setups of the replicas it starts inside a run
(`_Floors.rising`). And a few pools are not charged at all: their purchases are decided
day by day (planner.purchases).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from planner import charges, prices, purchases, rises, window
from planner.configs import Config, ReplicaConfig
from planner.cover import least_cover
from planner.problem import Job, Problem
from planner.serving import ReplicaJob

Key = tuple[str, str]
STEPS = 8  # λ of a pool every plan must buy is tried at 0, 1/8, … 8/8 of its full rate
FINE = 64  # then refined to 1/64 of a step around the best (`_refine`)


@dataclass(frozen=True)
class Bound:
    """The bound, with the charge per card-hour of each package pool it was priced at, and
    the unit-packages it counts as bought in each pool (M_P above)."""

    total: Fraction
    rates: dict[Key, Fraction]
    least: dict[Key, int] = field(default_factory=dict)
    # priced by time (planner.window): the pool, and the real hours of the package whose span
    # is charged `rates[pool]` (the rest of the horizon: that pool's full rate)
    window: tuple[Key, tuple[int, int]] | None = None
    # priced by segment (planner.charges): each unused or committed pool's charge per segment
    segments: charges.Charges | None = None
    # the pools whose purchases were decided day by day (planner.purchases), and whether
    # train jobs there were priced with those cards at their charge on any day
    bought: tuple[Key, ...] = ()
    anywhere: bool = False
    # and whether serving there paid the setups of replicas started inside each day
    daily_setups: bool = False
    # priced by segment: whether serving paid the setups of replicas started inside runs
    rises: bool = False


# the charge by segment (planner.charges) is priced where its linear program has at most
# this many columns before pruning (GLOP takes about 4 s for 170k on 2 cores; none is
# timed, so the bound of a scenario never depends on the machine's load)
SEGMENT_COLUMNS = 200_000


def lower_bound(
    problem: Problem,
    forced: dict[Key, int] | None = None,
    time: bool = True,
    by_segment: bool = False,
    by_day: bool = True,
    approximate: int = 0,
    exact_columns: int = SEGMENT_COLUMNS,
) -> Bound:
    """The best bound over a few charges: full rates everywhere, and for each pool that some
    plan must buy, every step from free to full (pool by pool, keeping the best). `forced`:
    unit-packages per pool that every plan is proven to buy (planner.forced), where that is
    more than the one-job arithmetic here sees. `time`: also try charging a forced pool by
    time (planner.window). `by_segment`: also try a charge per unused or committed pool and
    segment (planner.charges) where its linear program is small enough, on its own and
    with each forced pool priced by time. `by_day`: also try the purchases of the package
    pools that gain most (unused or forced) decided day by day (planner.purchases).
    `approximate`: the most columns of a program too large for an exact solve that may be
    solved approximately instead (planner.charges; 0: none), without the forced pools'
    windows. `exact_columns`: the most columns solved exactly (at most SEGMENT_COLUMNS); a program
    between it and SEGMENT_COLUMNS is not priced at all (an approximate solve of one that
    small gained nothing where measured, in twice the flat bound's time)."""
    packages = _packages(problem)
    full = {key: p.unit_price / p.card_hours for key, p in packages.items()}
    least = _least_bought(problem, packages)
    for key, count in (forced or {}).items():
        if key in packages:
            least[key] = max(least.get(key, 0), count)
    floors = _Floors(problem)
    paid = _committed(problem)

    def terms(rates: dict[Key, Fraction], *skip: Key) -> Fraction:
        """The commitments, and each counted package at its price less its charges (but
        those of `skip`)."""
        return paid + sum(
            (n * (packages[key].unit_price - rates[key] * packages[key].card_hours))
            for key, n in least.items()
            if key not in skip
        )

    def bound(rates: dict[Key, Fraction]) -> Fraction:
        total = terms(rates)
        total += sum((floors.job(j.index, rates) for j in problem.jobs), Fraction(0))
        for j in range(len(problem.replica_jobs)):
            total += floors.replicas(j, rates)
        return total

    best = Bound(bound(full), dict(full), least)
    for key in sorted(least):
        for step in range(STEPS):
            rates = {**best.rates, key: full[key] * step / STEPS}
            total = bound(rates)
            if total > best.total:
                best = Bound(total, rates, least)
    for key in sorted(least):
        best = _refine(bound, best, key, full[key])
    flat = best
    for key in sorted(least) if time else ():
        if packages[key].committed:
            continue  # committed packages sit on known days: not priced by time here
        rates = {**flat.rates, key: full[key]}
        timed = window.priced(problem, key, least[key], rates, floors, terms(rates, key))
        if timed is not None and timed.total > best.total:
            best = Bound(timed.total, {**rates, key: timed.inside}, least, (key, timed.span))
    unused = charges.timed_pools(problem, least)
    # the pools whose purchases the program decides: unused ones and those a job forces
    # (not committed ones, whose packages sit on known days), the ones that gain most alone
    candidates = [*unused, *(k for k in least if not packages[k].committed)] if by_day else []
    # deciding a pool gains at most what its workloads would pay more without its cards
    # (buying none is one of the program's choices): the ones that could gain most first
    most = {key: _without(problem, floors, flat.rates, key) for key in candidates}
    ranked = sorted((k for k in candidates if k in least or most[k] > 0), key=lambda k: -most[k])
    # train jobs' savings tied to the packages that meet their windows, or their cards at
    # the held charge on any day (planner.purchases): each a bound, neither always the
    # higher; the pools each way would decide by their gains alone, and the way whose
    # chosen pools gain more in all (on a tie, the first) is the one searched together
    ways: dict[bool, tuple[Fraction, list[Key]]] = {}  # the chosen pools' gains, the pools
    for anywhere in (False, True):
        gains = {}
        for key in ranked[: purchases.TRIED]:
            others = terms(flat.rates, key)
            alone, _ = purchases.search(
                problem,
                [key],
                flat.rates,
                floors,
                others,
                [full[key]],
                [least.get(key, 0)],
                anywhere=anywhere,
            )
            gains[key] = alone - flat.total
        chosen = purchases.pick(problem, candidates, gains, least)
        ways[anywhere] = (sum((gains[k] for k in chosen), Fraction(0)), chosen)
    anywhere = ways[True][0] > ways[False][0]
    chosen = ways[anywhere][1]
    if chosen:
        others = terms(flat.rates, *chosen)
        top = [full[key] for key in chosen]
        counts = [least.get(key, 0) for key in chosen]
        shapes = [purchases.profile(problem, key, flat.rates, floors) for key in chosen]
        total, held = purchases.search(
            problem,
            chosen,
            flat.rates,
            floors,
            others,
            top,
            counts,
            free=not anywhere,  # from 0 too, where train jobs' savings fall with the charge
            shapes=shapes,
            anywhere=anywhere,
        )
        # at the charges found, serving also pays the setups of replicas started inside
        # each day (climbing with them found little more, in ten times as long)
        daily = purchases.priced(
            problem,
            chosen,
            flat.rates,
            floors,
            others,
            list(held),
            counts,
            anywhere=anywhere,
            setups=True,
        )
        if max(total, daily) > best.total:
            best = Bound(
                max(total, daily),
                dict(flat.rates),
                least,
                bought=tuple(chosen),
                anywhere=anywhere,
                daily_setups=daily > total,
            )
    # committed pools too, where no job forces more than their commitments: their cards
    # held on known days are paid back each segment's charge
    committed = [k for k, p in packages.items() if p.committed and least[k] == p.committed]
    segmented = sorted([*unused, *committed])
    columns = charges.columns(problem) if by_segment and problem.segments and segmented else None
    exact = columns is not None and columns <= min(exact_columns, SEGMENT_COLUMNS)  # by GLOP
    rough = columns is not None and SEGMENT_COLUMNS < columns <= approximate  # by PDLP
    if exact or rough:
        spans = charges.Spans(problem, segmented)
        found = charges.Relaxation(problem, spans, rough).charges(flat.rates)
        if found is not None:
            fixed = charges.repair(problem, spans, found)
            # the committed pools' packages at their price: paid back by segment instead
            at_price = {**flat.rates, **{k: Fraction(0) for k in committed}}
            total = charges.priced(problem, fixed, flat.rates, terms(at_price), spans)
            # serving also pays the setups of the replicas it starts inside runs of demand
            rising = _rises(problem, _Floors(problem, fixed), flat.rates)
            if total + rising > best.total:
                best = Bound(
                    total + rising, dict(flat.rates), least, segments=fixed, rises=rising > 0
                )
        spans = charges.Spans(problem, unused)
        # the unused pools by segment and a forced pool by time, together: their charges from
        # the relaxation with the forced pool at its full rate, its charge outside its window
        for key in sorted(least) if time and not rough and unused else ():
            if packages[key].committed:
                continue
            rates = {**flat.rates, key: full[key]}
            found = charges.Relaxation(problem, spans).charges(rates)
            if found is None:
                continue
            fixed = charges.repair(problem, spans, found)
            others = terms(rates, key)
            priced = _Floors(problem, fixed)
            by_time = window.priced(problem, key, least[key], rates, priced, others)
            if by_time is not None and by_time.total > best.total:
                inside = {**rates, key: by_time.inside}
                best = Bound(by_time.total, inside, least, (key, by_time.span), fixed)
    return best


def optional_pools(problem: Problem, forced: dict[Key, int] | None = None) -> set[Key]:
    """The package pools a plan may leave unbought: all but those commitments buy on and
    those some job forces (`forced`, unit-packages per pool)."""
    forced = forced or {}
    return {
        key
        for key, pool in problem.pools.items()
        if pool.days and not pool.committed and not forced.get(key)
    }


def credited(problem: Problem, forced: dict[Key, int] | None = None) -> list[Key]:
    """The optional package pools (`optional_pools`) whose cards, charged at their full
    rate (a package's price spread over every card-hour it holds), would save the
    workloads that can use them something: those a package well filled could pay for,
    the most saved first (then by pool)."""
    packages = _packages(problem)
    full = {key: p.unit_price / p.card_hours for key, p in packages.items()}
    floors = _Floors(problem)
    saved = {
        key: _without(problem, floors, full, key)
        for key in optional_pools(problem, forced)
        if key in packages
    }
    return sorted((key for key, x in saved.items() if x > 0), key=lambda k: (-saved[k], k))


def sharers(problem: Problem, key: Key) -> list[int]:
    """The replica jobs whose least covers at the full rates cost more without pool
    `key`'s cards, those that lose most first (then by index): the services a package of
    it would serve best."""
    packages = _packages(problem)
    full = {k: p.unit_price / p.card_hours for k, p in packages.items()}
    floors = _Floors(problem)
    absent = {**full, key: window.TAKEN}
    lost = {
        r: floors.replicas(r, absent) - floors.replicas(r, full)
        for r in range(len(problem.replica_jobs))
        if key in floors.replica_pools[r]
    }
    return sorted((r for r, x in lost.items() if x > 0), key=lambda r: (-lost[r], r))


# per replica job (by name), per segment, replicas per config
Served = dict[str, dict[int, dict[ReplicaConfig, int]]]


def without_packages(problem: Problem, forced: dict[Key, int] | None = None) -> Fraction | None:
    """A lower bound on every plan that buys no optional package: no daily, weekly or
    monthly purchase but on the pools every plan buys from anyway (those commitments buy
    on, and those some job forces, `forced`: unit-packages per pool as `lower_bound`
    takes them). Each workload is priced as `lower_bound` prices it without the optional
    pools' configs, so no optional package is spread over card-hours that whole jobs and
    replicas could not fill. Where no package pool is left, each replica started inside a
    run of demand also pays its setup, and a switch between configs the setup of the
    replicas started (planner.rises; held cards have none, so the relaxation with packages
    cannot count it).

    The split it makes: every plan either buys no optional package, and costs at least
    this, or buys some, and costs at least the relaxation's bound. Where the plan found
    buys none, the gap among its own kind is this figure's, and the rest of the gap is
    only the question whether optional packages could pay.

    None where the question does not arise or has no answer here: no workload has a
    config on an optional pool, or some workload runs only on them."""
    forced = forced or {}
    optional = optional_pools(problem, forced)

    def rented(configs: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(c for c in configs if not (c.held and (c.offer, c.mode) in optional))

    jobs = tuple(replace(j, configs=rented(j.configs)) for j in problem.jobs)
    replicas = tuple(replace(r, configs=rented(r.configs)) for r in problem.replica_jobs)
    before = [j.configs for j in problem.jobs] + [r.configs for r in problem.replica_jobs]
    after = [j.configs for j in jobs] + [r.configs for r in replicas]
    if before == after or not all(after):
        return None
    pools = {key: pool for key, pool in problem.pools.items() if key not in optional}
    alone = replace(problem, jobs=jobs, replica_jobs=replicas, pools=pools)
    if any(pool.days for pool in pools.values()):
        return lower_bound(alone, forced).total
    floors = _Floors(alone)
    total = _committed(alone) + sum((floors.job(j.index, {}) for j in alone.jobs), Fraction(0))
    covers: rises.Covers = {}
    for r in range(len(alone.replica_jobs)):
        rising = _rising(alone, r, covers)
        total += floors.replicas(r, {}) if rising is None else rising
    return total


def _committed(problem: Problem) -> Fraction:
    """What every plan pays alike: the commitments, less the committed packages that the
    purchase counts include (they are priced with the purchases)."""
    return sum((f.cost for f in problem.fixed), Fraction(0)) - problem.bought_commitments


def schedules_alone(
    problem: Problem, j: int, covers: rises.Covers
) -> list[dict[int, dict[ReplicaConfig, int]]]:
    """Replica job `j`'s least schedules alone (per segment, replicas per config) on the
    configs its bounds allow there, best first; none where the program is too large.

    The least path of `_rising`'s program counts the configs it follows one by one exactly
    and decodes the others as each segment's cheapest mix, which may switch among them and
    pay setups the program did not count (and may pass a config's bound). So the program
    runs again on the configs that schedule uses, each at most at its most replicas there
    and all followed one by one: where the first keeps within its bounds it is one of that
    program's paths, so the least path found is no dearer, and every switch on it is
    priced. That schedule comes first, then the first where it differs."""
    served: Served = {}
    _rising(problem, j, covers, served)
    first = served.get(problem.replica_jobs[j].name)
    if not first:
        return []
    narrowed = _on_used(problem, j, first, covers)
    return [first] if narrowed is None or narrowed == first else [narrowed, first]


def _on_used(
    problem: Problem,
    j: int,
    schedule: dict[int, dict[ReplicaConfig, int]],
    covers: rises.Covers,
) -> dict[int, dict[ReplicaConfig, int]] | None:
    """Replica job `j`'s least schedule on the configs `schedule` uses, each bounded by
    the most replicas it holds there, all counted one by one (`schedules_alone`); None
    where the program is too large."""
    most: dict[ReplicaConfig, int] = {}
    for row in schedule.values():
        for config, n in row.items():
            most[config] = max(most.get(config, 0), n)
    job = problem.replica_jobs[j]
    none = (0,) * len(problem.segments)
    bounds = {
        c: tuple(np.minimum(job.bounds[c], most[c]).tolist()) if c in most else none
        for c in job.configs
    }
    narrowed = replace(job, bounds=bounds)
    within = _with_replica_job(problem, j, narrowed)
    _, items, paying = _replica_items(within, j, {})
    kinds = _Kinds.of(within, j)
    singled = tuple(i for i, c in enumerate(job.configs) if c in most)
    path: list[Any] = []
    states = rises.DECODE_STATES
    found = rises.least(
        narrowed,
        problem.segments,
        kinds,
        items,
        paying,
        covers,
        singled,
        path,
        states,
        days=problem.segment_days,
    )
    if found is None:
        return None
    counts = rises.schedule(narrowed, kinds, items, singled, path)
    if counts is None:
        return None
    return {s: {job.configs[i]: n for i, n in row.items()} for s, row in counts.items()}


def _with_replica_job(problem: Problem, j: int, job: ReplicaJob) -> Problem:
    """`problem` with replica job `j` replaced by `job`."""
    jobs = list(problem.replica_jobs)
    jobs[j] = job
    return replace(problem, replica_jobs=tuple(jobs))


def _rising(
    problem: Problem, j: int, covers: rises.Covers, served: Served | None = None
) -> Fraction | None:
    """Replica job `j`'s least cost alone on rented and committed hourly cards, with the
    setups of the replicas it starts inside a run of demand (planner.rises), its most used
    configs counted one by one: None where the program is too large even with none.
    `served`, where given, gets the job's schedule along the program's least path."""
    job = problem.replica_jobs[j]
    scale, items, paying = _replica_items(problem, j, {})
    kinds = _Kinds.of(problem, j)
    ranked = rises.ranked(job, problem.segments, kinds, items)
    days = problem.segment_days
    for singled in (ranked, ()):
        path: list[Any] | None = [] if served is not None else None
        found = rises.least(
            job, problem.segments, kinds, items, paying, covers, singled, path, days=days
        )
        if found is None:
            continue
        if served is not None and path is not None:
            counts = rises.schedule(job, kinds, items, singled, path)
            if counts is not None:
                served[job.name] = {
                    s: {job.configs[i]: n for i, n in row.items()} for s, row in counts.items()
                }
        return Fraction(found, scale)
    return None


def _without(problem: Problem, floors: _Floors, rates: dict[Key, Fraction], key: Key) -> Fraction:
    """What the workloads that may use pool `key` pay more at `rates` without its cards."""
    absent = {**rates, key: window.TAKEN}
    more = sum(
        (
            floors.job(j.index, absent) - floors.job(j.index, rates)
            for j in problem.jobs
            if key in floors.pools[j.index]
        ),
        Fraction(0),
    )
    return more + sum(
        (
            floors.replicas(r, absent) - floors.replicas(r, rates)
            for r in range(len(problem.replica_jobs))
            if key in floors.replica_pools[r]
        ),
        Fraction(0),
    )


def _rises(problem: Problem, floors: _Floors, rates: dict[Key, Fraction]) -> Fraction:
    """What serving pays more at these charges where the replicas it starts inside runs of
    demand pay their setups (`_Floors.rising`) than its segments' least covers."""
    more = Fraction(0)
    for j in range(len(problem.replica_jobs)):
        found = floors.rising(j, rates)
        if found is not None:
            more += max(Fraction(0), found - floors.replicas(j, rates))
    return more


def _refine(
    bound: Callable[[dict[Key, Fraction]], Fraction], best: Bound, key: Key, full: Fraction
) -> Bound:
    """`best` with pool `key`'s charge refined within a step of the grid either side. For
    fixed other charges the bound is concave in this one (a least of functions affine in
    it), so a golden-section search over a fine grid of charges closes on its peak."""
    grid = STEPS * FINE
    at = round(best.rates[key] * grid / full)
    lo, hi = max(0, at - FINE), min(grid, at + FINE)
    values: dict[int, Fraction] = {}

    def value(k: int) -> Fraction:
        nonlocal best
        if k not in values:
            rates = {**best.rates, key: full * k / grid}
            values[k] = bound(rates)
            if values[k] > best.total:
                best = replace(best, total=values[k], rates=rates)
        return values[k]

    while hi - lo > 2:
        third = (hi - lo) * 382 // 1000 or 1
        m1, m2 = lo + third, hi - third
        if m1 >= m2:
            m2 = m1 + 1
        if value(m1) < value(m2):
            lo = m1
        else:
            hi = m2
    return best


class _Floors:
    """Each workload's cheapest cost under given charges, remembered by the charges of the
    pools it can use (a step changes one pool's charge; most workloads never see it)."""

    def __init__(self, problem: Problem, segments: charges.Charges | None = None) -> None:
        self.problem = problem
        # unused or committed pools charged by segment (planner.charges), the others at `rates`
        self.charges = segments
        self.memo: dict[tuple[str, int, tuple[Fraction, ...]], Fraction] = {}
        self.by_segment: dict[tuple[int, tuple[Fraction, ...]], tuple[int, tuple[int, ...]]] = {}
        self.fractions: dict[tuple[int, tuple[Fraction, ...]], tuple[Fraction, ...]] = {}
        self.covers: dict[tuple[tuple[tuple[int, int], ...], int, int], int] = {}
        self.kinds: dict[int, _Kinds] = {}
        self.days: dict[tuple[int, tuple[Fraction, ...]], tuple[int, list[int]] | None] = {}
        self.rise_covers: rises.Covers = {}
        self.whole: dict[tuple[int, tuple[Fraction, ...]], Fraction | None] = {}  # `rising`
        self.pools = [sorted({c.pool for c in j.configs if c.held}) for j in problem.jobs]
        self.replica_pools = [
            sorted({(c.offer, c.mode) for c in r.configs if c.held}) for r in problem.replica_jobs
        ]

    def job(self, index: int, rates: dict[Key, Fraction]) -> Fraction:
        key = ("train", index, tuple(rates.get(p, Fraction(0)) for p in self.pools[index]))
        if key not in self.memo:
            job = self.problem.jobs[index]
            self.memo[key] = min(self.config(job, c, rates) for c in job.configs)
        return self.memo[key]

    def config(self, job: Job, config: Config, rates: dict[Key, Fraction]) -> Fraction:
        """The cheapest `job` can run on `config` under the charges."""
        if self.charges is None:
            return _config_floor(config, rates)
        return charges.train_floor(self.problem, job, config, self.charges, rates)

    def replicas(self, index: int, rates: dict[Key, Fraction]) -> Fraction:
        scale, parts = self.parts(index, rates)
        return Fraction(sum(parts), scale)

    def segments(self, index: int, rates: dict[Key, Fraction]) -> tuple[Fraction, ...]:
        """Replica job `index`'s cheapest cost in each segment (0 where inactive)."""
        key = self._key(index, rates)
        if key not in self.fractions:
            scale, parts = self.parts(index, rates)
            self.fractions[key] = tuple(Fraction(x, scale) for x in parts)
        return self.fractions[key]

    def parts(self, index: int, rates: dict[Key, Fraction]) -> tuple[int, tuple[int, ...]]:
        """`segments` as a denominator and each segment's whole parts of it."""
        key = self._key(index, rates)
        if key not in self.by_segment and self.charges is not None:
            self.by_segment[key] = charges.replica_segments(
                self.problem, index, self.charges, rates
            )
        if key not in self.by_segment:
            if index not in self.kinds:
                self.kinds[index] = _Kinds.of(self.problem, index)
            kinds = self.kinds[index]
            self.by_segment[key] = _segment_floors(self.problem, index, rates, kinds, self.covers)
        return self.by_segment[key]

    def rising(self, index: int, rates: dict[Key, Fraction]) -> Fraction | None:
        """Replica job `index`'s least cost alone under the charges (those by segment, where
        given, and `rates`), counting the setups of the replicas it starts inside a run of
        demand: planner.rises' program over the horizon, held cards at each segment's
        charge (they pay no setup). A plan's replicas are one of its paths, so it bounds
        what the plan pays them at these charges, as `replicas` does without the rises.
        None where the program is too large."""
        key = self._key(index, rates)
        if key not in self.whole:
            self.whole[key] = self._rising(index, rates)
        return self.whole[key]

    def _rising(self, index: int, rates: dict[Key, Fraction]) -> Fraction | None:
        problem = self.problem
        job = problem.replica_jobs[index]
        paying = [problem.replica_rate(job.name, c) for c in job.configs]
        by_segment = self.charges if self.charges is not None else charges.Charges({})
        scale, rows = charges.replica_prices(problem, index, by_segment, rates)
        variants: dict[tuple[int, ...], int] = {}
        of_segment = [0 if row is None else variants.setdefault(row, len(variants)) for row in rows]
        if not variants:
            return Fraction(0)
        items = tuple(
            tuple((c.capacity, x) for c, x in zip(job.configs, row, strict=True))
            for row in variants
        )
        priced = rises.Priced(items, tuple(of_segment))
        if index not in self.kinds:
            self.kinds[index] = _Kinds.of(problem, index)
        kinds = self.kinds[index]
        segments = problem.segments
        ranked = rises.ranked(job, segments, kinds, items[0])
        for singled in (ranked, ()):
            found = rises.least(
                job,
                segments,
                kinds,
                items[0],
                paying,
                self.rise_covers,
                singled,
                priced=priced,
                days=problem.segment_days,
            )
            if found is not None:
                return Fraction(found, scale)
        return None

    def rising_days(self, index: int, rates: dict[Key, Fraction]) -> tuple[int, list[int]] | None:
        """Replica job `index`'s least cost in each local day at `rates` (a denominator and
        each day's whole parts of it), counting the setups of replicas started inside the
        day: planner.rises' program over the day's own segments, its first one free to
        start from any count (as if the day before had left it) unless it opens a run of
        demand. A plan's replicas in a day are one of that day's paths, so the days' sum
        bounds what the plan pays for them; each day costs at least its segments' least
        covers (`parts`). Configs on cards charged `window.TAKEN` (not held that day) are
        left out. None where a day's program is too large, or where pools are charged by
        segment (this prices flat charges only)."""
        if self.charges is not None:
            return None
        key = self._key(index, rates)
        if key in self.days:
            return self.days[key]
        problem = self.problem
        job = problem.replica_jobs[index]
        kept = tuple(c for c in job.configs if c.rented or rates.get(c.pool, 0) < window.TAKEN)
        narrowed = replace(job, configs=kept, bounds={c: job.bounds[c] for c in kept})
        within = _with_replica_job(problem, index, narrowed)
        scale, items, paying = _replica_items(within, index, rates)
        kinds = _Kinds.of(within, index)
        segments = problem.segments
        openings = narrowed.openings(segments)
        day_of = problem.segment_days
        singled = rises.ranked(narrowed, segments, kinds, items)
        per_day = [0] * problem.axis.days
        by_day: dict[int, list[int]] = {}
        for s, kind in enumerate(kinds.of_segment):
            if kind >= 0:
                by_day.setdefault(day_of[s], []).append(s)
        priced: dict[tuple[object, ...], int | None] = {}  # the days repeat: by what they hold
        for day, held in by_day.items():
            seen = tuple(
                (
                    kinds.of_segment[s],
                    segments[s][1] - segments[s][0],
                    (openings[s],) if s in openings else (),
                    tuple(narrowed.bounds[c][s] for c in kept),
                )
                for s in held
            )
            if seen not in priced:
                alone = _Kinds(
                    kinds.kinds,
                    tuple(k if day_of[s] == day else -1 for s, k in enumerate(kinds.of_segment)),
                )
                found = None
                for pick in (singled, ()):
                    found = rises.least(
                        narrowed, segments, alone, items, paying, self.rise_covers, pick
                    )
                    if found is not None:
                        break
                priced[seen] = found
            value = priced[seen]
            if value is None:
                self.days[key] = None
                return None
            per_day[day] = value
        self.days[key] = (scale, per_day)
        return self.days[key]

    def _key(self, index: int, rates: dict[Key, Fraction]) -> tuple[int, tuple[Fraction, ...]]:
        return (index, tuple(rates.get(p, Fraction(0)) for p in self.replica_pools[index]))


@dataclass(frozen=True)
class _Package:
    """A buyable pool as the bound sees it."""

    unit_price: Fraction  # one unit-package (the pool's, from planner.prices)
    longest: int  # its longest real length in hours (a local day may last 25 h)
    unit_cards: int
    committed: int  # unit-packages commitments buy inside the horizon

    @property
    def card_hours(self) -> int:
        """The most card-hours one unit-package holds."""
        return self.longest * self.unit_cards


def _packages(problem: Problem) -> dict[Key, _Package]:
    out = {}
    for key, pool in problem.pools.items():
        if pool.days:
            days = range(problem.axis.days)
            longest = max(b - a for a, b in (problem.package(key, d) for d in days))
            committed = sum(problem.committed_purchases(key).values())
            cards = problem.offers[key[0]].unit_cards
            out[key] = _Package(pool.unit_price, longest, cards, committed)
    return out


def _least_bought(problem: Problem, packages: dict[Key, _Package]) -> dict[Key, int]:
    """Unit-packages every plan buys, per pool where that is more than 0: the committed ones,
    or for a job whose every config is on that pool, its units in packages laid end to end
    over its shortest span."""
    least = {key: p.committed for key, p in packages.items() if p.committed}
    for job in problem.jobs:
        pools = {c.pool for c in job.configs}
        if len(pools) != 1 or not all(c.held for c in job.configs):
            continue
        key = next(iter(pools))
        if key not in packages:
            continue  # committed hourly cards: nothing to buy
        longest = packages[key].longest
        need = min(c.units * -(-c.span // longest) for c in job.configs)
        least[key] = max(least.get(key, 0), need)
    return least


def _config_floor(config: Config, rates: dict[Key, Fraction]) -> Fraction:
    if not config.held:
        return config.cost
    card_hours = sum(length for _, length in config.runs) * config.cards
    return config.storage_cost + card_hours * rates.get(config.pool, Fraction(0))


@dataclass(frozen=True)
class _Kinds:
    """A replica job's segments grouped by what its least cover depends on besides the
    charges: the configs it may use there, its demand and its minimum."""

    kinds: tuple[tuple[tuple[int, ...], int, int], ...]
    of_segment: tuple[int, ...]  # per segment: its kind, or -1 where inactive

    @classmethod
    def of(cls, problem: Problem, j: int) -> _Kinds:
        job = problem.replica_jobs[j]
        index: dict[tuple[tuple[int, ...], int, int], int] = {}
        of_segment = []
        bounds = [job.bounds[c] for c in job.configs]  # by index: configs hash slowly
        for s in range(len(problem.segments)):
            if not job.active(s):
                of_segment.append(-1)
                continue
            # the configs this segment may use (bounds lose no plan; ReplicaJob.with_bounds)
            usable = tuple(i for i, b in enumerate(bounds) if b[s])
            of_segment.append(index.setdefault((usable, job.demand[s], job.minimum[s]), len(index)))
        return cls(tuple(index), tuple(of_segment))


def _segment_floors(
    problem: Problem,
    j: int,
    rates: dict[Key, Fraction],
    kinds: _Kinds,
    covers: dict[tuple[tuple[tuple[int, int], ...], int, int], int],
) -> tuple[int, tuple[int, ...]]:
    """Per segment, the least cost of whole replicas that carry replica job `j`'s demand and
    minimum there, over the segment's hours: a denominator and each segment's whole parts
    of it. `covers`: least covers already computed."""
    job = problem.replica_jobs[j]
    scale, items, paying = _replica_items(problem, j, rates)
    least = []
    for usable, demand, minimum in kinds.kinds:
        key = (tuple(sorted({items[i] for i in usable})), demand, minimum)
        if key not in covers:
            covers[key] = least_cover(key[0], demand, minimum)
        least.append(covers[key])
    segments = problem.segments
    paid = [
        0 if k < 0 else (b - a) * least[k]
        for k, (a, b) in zip(kinds.of_segment, segments, strict=True)
    ]
    openings = job.openings(segments)
    for s, gap in openings.items():
        a, b = segments[s]
        usable = kinds.kinds[kinds.of_segment[s]][0]
        key = (_opened(items, paying, usable, gap, b - a), job.demand[s], job.minimum[s])
        if key not in covers:
            covers[key] = least_cover(*key)
        paid[s] = covers[key]
    return scale, tuple(paid)


def _replica_items(
    problem: Problem, j: int, rates: dict[Key, Fraction]
) -> tuple[int, list[tuple[int, int]], list[prices.ReplicaRate]]:
    """Replica job `j`'s configs as cover items (capacity, whole parts of 1/scale per
    replica-hour at `rates`) with that scale, and each config's replica rate."""
    job = problem.replica_jobs[j]
    hour = [_replica_hour(problem, job.name, c, rates) for c in job.configs]
    scale = math.lcm(*(h.denominator for h in hour))
    items = [(c.capacity, int(h * scale)) for c, h in zip(job.configs, hour, strict=True)]
    return scale, items, [problem.replica_rate(job.name, c) for c in job.configs]


def _opened(
    items: list[tuple[int, int]],
    paying: list[prices.ReplicaRate],
    usable: tuple[int, ...],
    gap: int | None,
    hours: int,
) -> tuple[tuple[int, int], ...]:
    """The cover items of a segment of `hours` that opens a run after `gap`: each usable
    config's replica pays its opening (setup, or the rest of a billing minimum) besides."""
    lead = {i: paying[i].opening(gap) for i in usable}
    return tuple(sorted({(items[i][0], items[i][1] * (hours + lead[i])) for i in usable}))


def _replica_hour(
    problem: Problem, name: str, c: ReplicaConfig, rates: dict[Key, Fraction]
) -> Fraction:
    """What one replica-hour of `c` is charged: rented, its units' hourly price; on held
    cards, its cards at the pool's charge (committed hourly cards: free); plus its disk."""
    rate = problem.replica_rate(name, c)
    if c.rented:
        return rate.per_hour
    return c.cards * rates.get((c.offer, c.mode), Fraction(0)) + rate.disk
