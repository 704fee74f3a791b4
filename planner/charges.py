"""The bound with a charge per package pool and segment (planner.bound's argument, by time).

planner.bound prices a card-hour of a package pool at one charge λ_P for the whole quarter,
at most price_P ÷ (the card-hours one package holds). That treats every package as fully
used: a service that wants package cards only in its busy hours pays λ_P for those hours
alone, although a package bought for them is paid for its idle nights as well.

Here λ_P(s) ≥ 0 may differ by segment s (segments break at every local 00:00, so a
package's span is a run of whole segments). Relaxing "cards used ≤ cards held" hour by hour
with these charges, a unit-package of P bought on day d pays

    price_P − unit cards × Σ over the segments s of its span of λ_P(s) × hours(s)

(its reduced price), and each workload pays for the card-hours of P it uses at λ_P of the
segment they lie in. Where every reduced price is ≥ 0, a plan buying no package of P is the
cheapest choice of the relaxation, so

    cost ≥ commitments + the package terms of the pools charged flat (planner.bound)
           + each workload at its cheapest under the charges
           − each timed pool's committed card-hours at their segments' charges.

Only pools no plan must buy are charged by segment (`timed_pools`): a pool some job forces
keeps planner.bound's counted packages, charged flat or by time (planner.bound's window).
A pool with committed packages (none forced beyond them) may be charged by segment too:
its committed cards, held on known days, are paid back each segment's charge there
(`Spans.held`; `priced` takes it off), while the packages a plan may add keep reduced
prices ≥ 0.
The two combine: with a forced pool priced by time, the other pools' charges come from the
relaxation with the forced pool at its full rate (what it charges outside its window).

Each workload is priced alone as in planner.bound: a serve or reserve workload per
segment at its least whole-replica cover under that segment's charges; a train job on its
cheapest config, a held config paying its cards × the cheapest hours of its window (the
hours it runs are distinct hours inside it).

Every choice of charges with reduced prices ≥ 0 gives a valid bound (`repair` makes any
choice so by scaling down the segments of each over-charged span). Good charges come from
the linear relaxation's duals: a linear program of the same quarter (fractional replicas
and packages; train card-hours anywhere in their windows; rented replicas' setups in the
first segment of each run of demand, as planner.bound prices them) solved with GLOP, whose
dual on "card-hours used ≤ card-hours held" per pool and segment is the charge. The bound
here, at those charges, is then at least that program's optimum less what the repair took
off, because each workload's whole-replica cover costs at least its fractional one. The program
is not timed (GLOP has no deterministic limit): planner.bound prices it only where it is
small enough (`SEGMENT_COLUMNS`), so a scenario's bound never depends on the machine.
A larger program may be solved approximately instead (`approximate`): PDLP, a first-order
method, to a relative tolerance of 1e-3 within an iteration limit. Its duals are as good
a start as GLOP's (every choice of charges gives a bound, once repaired) and it is
deterministic: it stops on its tolerance or its iterations, never on the clock, with a
fixed number of threads.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from planner.configs import Config, ReplicaConfig
from planner.cover import least_cover
from planner.problem import Job, Problem

Key = tuple[str, str]
# charges are rounded down to this many parts of the money unit per card-hour before the
# exact bound is priced (GLOP's duals are floats; rounding down keeps reduced prices ≥ 0)
PARTS = 10**6
# PDLP's settings for an approximate program: a relative gap of 1e-3 (generate.py's
# 100-workload quarter: 3,072 iterations, 14 s on 2 cores, against GLOP's exact 55 s; its
# 300-workload one 4,416, 54 s), at most ITERATIONS (a program not solved by then gives
# no charges), two threads (the same shards on every machine: the same duals)
ITERATIONS = 8_000
PDLP = (
    "termination_criteria { simple_optimality_criteria { eps_optimal_absolute: 1e-2 "
    f"eps_optimal_relative: 1e-3 }} iteration_limit: {ITERATIONS} }} num_threads: 2"
)


@dataclass(frozen=True)
class Charges:
    """A charge per card-hour for each timed pool and segment."""

    by_pool: dict[Key, tuple[Fraction, ...]]
    memo: dict[tuple[Key, int, int], list[tuple[Fraction, int]]] = field(
        default_factory=dict, compare=False
    )

    def at(self, key: Key, segment: int) -> Fraction:
        row = self.by_pool.get(key)
        return Fraction(0) if row is None else row[segment]


def timed_pools(problem: Problem, bought: Collection[Key]) -> list[Key]:
    """Package pools the charges vary by segment: buyable, without commitments (a committed
    package sits on known days), and none that every plan buys (`bought`): those keep
    planner.bound's flat charge and counted packages."""
    return sorted(
        key
        for key, pool in problem.pools.items()
        if pool.days and not problem.committed_purchases(key) and key not in bought
    )


class Spans:
    """Each timed pool's package spans as ranges of segments, with their real hours, and
    the card-hours its commitments hold in each segment (where it has any)."""

    def __init__(self, problem: Problem, pools: Sequence[Key]) -> None:
        starts = [a for a, _ in problem.segments]
        self.hours = [b - a for a, b in problem.segments]
        self.spans: dict[Key, list[tuple[int, int]]] = {}
        self.held: dict[Key, list[int]] = {}
        for key in pools:
            row = []
            for d in range(problem.axis.days):
                a, b = problem.package(key, d)
                row.append((bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)))
            self.spans[key] = row
            pool, cards = problem.pools[key], problem.offers[key[0]].unit_cards
            if pool.committed:
                self.held[key] = [
                    sum(
                        c.units * cards * max(0, min(b, c.end) - max(a, c.start))
                        for c in pool.committed
                    )
                    for a, b in problem.segments
                ]


def repair(problem: Problem, spans: Spans, charges: Charges) -> Charges:
    """The charges with every package's reduced price ≥ 0: each span charged more than its
    price ÷ unit cards has its segments scaled down to that (lowering one span's charges
    only lowers the others', so one pass in day order suffices). In whole 1/PARTS."""
    out = {}
    for key, row in charges.by_pool.items():
        cap = problem.pools[key].unit_price * PARTS / problem.offers[key[0]].unit_cards
        parts = [math.floor(max(Fraction(0), x) * PARTS) for x in row]
        for lo, hi in spans.spans[key]:
            charged = sum(parts[s] * spans.hours[s] for s in range(lo, hi))
            if charged > cap:
                for s in range(lo, hi):  # rounded down: the span stays within its price
                    parts[s] = math.floor(parts[s] * cap / charged)
        out[key] = tuple(Fraction(x, PARTS) for x in parts)
    return Charges(out)


def priced(
    problem: Problem,
    charges: Charges,
    flat: dict[Key, Fraction],
    fixed: Fraction,
    spans: Spans | None = None,
) -> Fraction:
    """The bound at `charges` (reduced prices ≥ 0: see `repair`) for the timed pools and
    `flat` charges for the others; `fixed`: the commitments and the flat pools' package
    terms (planner.bound). A timed pool's packages add nothing: buying none is cheapest.
    `spans`: where a timed pool has commitments, the card-hours they hold, each paid back
    its segment's charge (their price is in `fixed`)."""
    total = fixed
    for key, held in (spans.held if spans is not None else {}).items():
        total -= sum((x * charges.at(key, s) for s, x in enumerate(held)), Fraction(0))
    for job in problem.jobs:
        total += min(train_floor(problem, job, c, charges, flat) for c in job.configs)
    for j in range(len(problem.replica_jobs)):
        scale, parts = replica_segments(problem, j, charges, flat)
        total += Fraction(sum(parts), scale)
    return total


def train_floor(
    problem: Problem, job: Job, c: Config, charges: Charges, flat: dict[Key, Fraction]
) -> Fraction:
    if not c.held:
        return c.cost
    hours = sum(length for _, length in c.runs)
    if c.pool not in charges.by_pool:
        return c.storage_cost + hours * c.cards * flat.get(c.pool, Fraction(0))
    return c.storage_cost + c.cards * _cheapest_hours(problem, job, c.pool, hours, charges)


def _cheapest_hours(problem: Problem, job: Job, key: Key, hours: int, charges: Charges) -> Fraction:
    """The least charge `hours` distinct hours of `job`'s window can carry on pool `key`."""
    total, left = Fraction(0), hours
    for charge, length in _window_charges(problem, charges, key, job.earliest, job.deadline):
        take = min(left, length)
        total += charge * take
        left -= take
        if not left:
            break
    return total


def _window_charges(
    problem: Problem, charges: Charges, key: Key, start: int, end: int
) -> list[tuple[Fraction, int]]:
    """(charge, hours) of pool `key` within [start, end), cheapest first."""
    memo = charges.memo
    if (key, start, end) not in memo:
        row = charges.by_pool[key]
        inside = []
        for s, (a, b) in enumerate(problem.segments):
            shared = min(b, end) - max(a, start)
            if shared > 0:
                inside.append((row[s], shared))
        memo[key, start, end] = sorted(inside)
    return memo[key, start, end]


def replica_prices(
    problem: Problem, j: int, charges: Charges, flat: dict[Key, Fraction]
) -> tuple[int, list[tuple[int, ...] | None]]:
    """Replica job `j`'s price per replica-hour of each config in each segment (None where
    inactive): rented, its rental and disk; held, its disk and its cards at the segment's
    charge where its pool is timed (every charge a whole number of 1/PARTS: `repair`),
    else at `flat`. A denominator and each price's whole parts of it."""
    job = problem.replica_jobs[j]
    rates = [problem.replica_rate(job.name, c) for c in job.configs]
    timed = [
        None if c.rented or (c.offer, c.mode) not in charges.by_pool else (c.offer, c.mode)
        for c in job.configs
    ]
    fixed = [  # per replica-hour, less the charge by segment of a timed pool
        r.per_hour
        if c.rented
        else r.disk
        + (Fraction(0) if t is not None else c.cards * flat.get((c.offer, c.mode), Fraction(0)))
        for c, r, t in zip(job.configs, rates, timed, strict=True)
    ]
    scale = math.lcm(PARTS, *(f.denominator for f in fixed))
    base = [int(f * scale) for f in fixed]
    per_part = scale // PARTS
    parts = {  # each timed pool's charges in whole parts of `scale` per card-hour
        key: [_whole(x, per_part) for x in charges.by_pool[key]]
        for key in {t for t in timed if t is not None}
    }
    cards = [c.cards for c in job.configs]
    rows: list[tuple[int, ...] | None] = [
        tuple(
            x if t is None else x + n * parts[t][s]
            for x, t, n in zip(base, timed, cards, strict=True)
        )
        if job.active(s)
        else None
        for s in range(len(problem.segments))
    ]
    return scale, rows


def _whole(charge: Fraction, per_part: int) -> int:
    """A charge in whole 1/PARTS, in parts of PARTS × `per_part`."""
    assert PARTS % charge.denominator == 0, charge
    return per_part * charge.numerator * (PARTS // charge.denominator)


def replica_segments(
    problem: Problem, j: int, charges: Charges, flat: dict[Key, Fraction]
) -> tuple[int, tuple[int, ...]]:
    """Replica job `j`'s least whole-replica cover in each segment (0 where inactive) at
    that segment's charges (`replica_prices`) and `flat` ones for the other pools: a
    denominator and each segment's whole parts of it."""
    job = problem.replica_jobs[j]
    rates = [problem.replica_rate(job.name, c) for c in job.configs]
    scale, rows = replica_prices(problem, j, charges, flat)
    usable = [job.bounds[c] for c in job.configs]
    covers: dict[tuple[tuple[tuple[int, int], ...], int, int], int] = {}
    out = [0] * len(problem.segments)
    openings = job.openings(problem.segments)
    for s, ((a, b), row) in enumerate(zip(problem.segments, rows, strict=True)):
        if row is None:
            continue
        items = set()
        for i, c in enumerate(job.configs):
            if not usable[i][s]:
                continue
            # the first segment of a run of demand: a rented replica's setup or gap as well
            hours = b - a + (rates[i].opening(openings[s]) if s in openings else 0)
            items.add((c.capacity, row[i] * hours))
        if not items:
            continue
        found = (tuple(sorted(items)), job.demand[s], job.minimum[s])
        if found not in covers:
            covers[found] = least_cover(*found)
        out[s] = covers[found]
    return scale, tuple(out)


def columns(problem: Problem) -> int:
    """The linear program's size before pruning: a replica column per usable config and
    segment, a train column per held pool and segment of each job's window."""
    replicas = sum(
        sum(1 for c in job.configs if job.bounds[c][s])
        for job in problem.replica_jobs
        for s in range(len(problem.segments))
        if job.active(s)
    )
    trains = sum(
        len({c.pool for c in job.configs if c.held})
        * sum(1 for a, b in problem.segments if min(b, job.deadline) > max(a, job.earliest))
        for job in problem.jobs
    )
    return replicas + trains


class Relaxation:
    """The quarter's linear relaxation: fractional replicas (with the cuts whole replicas
    obey), configs and packages; a train job's card-hours on a pool anywhere in its window,
    as the bound prices them. Solve it once (`charges`): on q3 GLOP re-solved from the last
    basis with other flat charges took 9× as long as building and solving afresh."""

    def __init__(self, problem: Problem, spans: Spans, approximate: bool = False) -> None:
        from ortools.linear_solver import pywraplp  # type: ignore[import-untyped]

        self.problem, self.spans = problem, spans
        self.lp = lp = pywraplp.Solver.CreateSolver("PDLP" if approximate else "GLOP")
        if approximate:
            lp.SetSolverSpecificParametersAsString(PDLP)
        self.optimal = pywraplp.Solver.OPTIMAL
        inf = lp.infinity()
        hours = spans.hours
        # columns on flat-charged pools: (column, pool, constant cost, card-hours)
        self.flat: list[tuple[object, Key, float, float]] = []
        # card-hours used on a timed pool, per segment: terms added below, rows at the end
        used: dict[tuple[Key, int], dict[object, float]] = {}

        def use(key: Key, s: int, var: object, coefficient: float) -> None:
            terms = used.setdefault((key, s), {})
            terms[var] = terms.get(var, 0.0) + coefficient

        objective = lp.Objective()
        for key, row in spans.spans.items():
            price = float(problem.pools[key].unit_price)
            cards = problem.offers[key[0]].unit_cards
            for lo, hi in row:
                n = lp.NumVar(0, inf, "")
                objective.SetCoefficient(n, price)
                for s in range(lo, hi):
                    use(key, s, n, -cards * hours[s])
        for job in problem.replica_jobs:
            fronts: dict[tuple[tuple[int, ...], int, tuple[int, ...]], list[int]] = {}
            paid = [problem.replica_rate(job.name, c) for c in job.configs]
            rates = [float(r.per_hour) for r in paid]
            disks = [float(r.disk) for r in paid]
            bounds = [job.bounds[c] for c in job.configs]
            openings = job.openings(problem.segments)
            for s in range(len(problem.segments)):
                if not job.active(s):
                    continue
                # fractional replicas, with the cuts whole replicas obey: a replica carries
                # at most the demand, at least ⌈demand ÷ the largest capacity⌉ replicas run,
                # and at least one wherever there is demand
                usable = tuple(i for i, b in enumerate(bounds) if b[s])
                if not usable:
                    continue
                demand = job.demand[s]
                largest = max(job.configs[i].capacity for i in usable)
                least_count = max(job.minimum[s], -(-demand // largest) if largest else 0)
                cover = lp.Constraint(demand, inf)
                count = lp.Constraint(least_count, inf)
                # a run's first segment: rented replicas pay their setup or the gap too
                lead = tuple(paid[i].opening(openings[s]) if s in openings else 0 for i in usable)
                if (usable, demand, lead) not in fronts:
                    paying = [
                        rates[i] * (1 + o / hours[s]) for i, o in zip(usable, lead, strict=True)
                    ]
                    fronts[usable, demand, lead] = _front(
                        [job.configs[i] for i in usable], demand, paying, [disks[i] for i in usable]
                    )
                for at in fronts[usable, demand, lead]:
                    i = usable[at]
                    c = job.configs[i]
                    x = lp.NumVar(0, inf, "")
                    cover.SetCoefficient(x, min(c.capacity, demand))
                    count.SetCoefficient(x, 1)
                    key = (c.offer, c.mode)
                    if c.rented:
                        objective.SetCoefficient(x, (hours[s] + lead[at]) * rates[i])
                    elif key in spans.spans:
                        objective.SetCoefficient(x, hours[s] * disks[i])
                        use(key, s, x, c.cards * hours[s])
                    else:
                        self.flat.append((x, key, hours[s] * disks[i], hours[s] * c.cards))
        for train in problem.jobs:
            one = lp.Constraint(1, 1)
            spread: dict[Key, Any] = {}
            for config in train.configs:
                y = lp.NumVar(0, 1, "")
                one.SetCoefficient(y, 1)
                if not config.held:
                    objective.SetCoefficient(y, float(config.cost))
                    continue
                card_hours = config.cards * sum(length for _, length in config.runs)
                if config.pool not in spans.spans:
                    storage = float(config.storage_cost)
                    self.flat.append((y, config.pool, storage, float(card_hours)))
                    continue
                objective.SetCoefficient(y, float(config.storage_cost))
                if config.pool not in spread:
                    spread[config.pool] = row = lp.Constraint(0, 0)
                    for seg, (a, b) in enumerate(problem.segments):
                        if min(b, train.deadline) - max(a, train.earliest) <= 0:
                            continue
                        z = lp.NumVar(0, inf, "")
                        row.SetCoefficient(z, 1)
                        use(config.pool, seg, z, 1.0)
                spread[config.pool].SetCoefficient(y, -card_hours)
        self.rows = {}
        for (key, s), terms in used.items():
            row = lp.Constraint(-inf, spans.held[key][s] if key in spans.held else 0)
            for var, coefficient in terms.items():
                row.SetCoefficient(var, coefficient)
            self.rows[key, s] = row
        objective.SetMinimization()
        self.objective = objective

    def charges(self, flat: dict[Key, Fraction]) -> Charges | None:
        """Charges from the duals of "card-hours used ≤ held" per timed pool and segment,
        with the other pools at `flat` charges. None where GLOP finds no optimum."""
        for var, key, constant, card_hours in self.flat:
            rate = float(flat.get(key, Fraction(0)))
            self.objective.SetCoefficient(var, constant + card_hours * rate)
        if self.lp.Solve() != self.optimal:
            return None
        out = {}
        for key in self.spans.spans:
            out[key] = tuple(
                Fraction(math.floor(-self.rows[key, s].dual_value() * PARTS), PARTS)
                if (key, s) in self.rows
                else Fraction(0)
                for s in range(len(self.problem.segments))
            )
        return Charges(out)


def _front(
    configs: Sequence[ReplicaConfig],
    demand: int,
    rates: Sequence[float],
    disks: Sequence[float],
) -> list[int]:
    """The positions of the configs no other one dominates in the linear program: rented
    ones by (the demand a replica carries, capped at `demand`; what it pays), held ones on
    the same pool by (that; cards; disk). A dominated column never lowers the program's
    optimum."""
    usable = range(len(configs))

    def signature(i: int) -> tuple[object, int, tuple[float, ...]]:
        c = configs[i]
        group: object = "rented" if c.rented else (c.offer, c.mode)
        cost = (rates[i],) if c.rented else (float(c.cards), disks[i])
        return group, min(c.capacity, demand), cost

    marks = {i: signature(i) for i in usable}
    kept: list[int] = []
    for i in usable:
        group, carried, cost = marks[i]
        beaten = False
        for k in usable:
            if k == i:
                continue
            other, more, less = marks[k]
            if other != group or more < carried:
                continue
            if all(x <= y for x, y in zip(less, cost, strict=True)) and (
                more > carried or less != cost or k < i
            ):
                beaten = True
                break
        if not beaten:
            kept.append(i)
    return kept
