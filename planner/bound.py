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
charges (ignoring stock, setup and billing round-ups, which only add cost): a train job on
its cheapest config; a serve or reserve workload per segment at the least cost of whole
replicas that carry the demand and the minimum (`least_cover`). Committed hourly cards are
free to use. Every choice of λ gives a valid bound; `lower_bound` takes the best of a few.

**A charge by time** (`_windowed`). λ may differ by hour: λ_P(t) in [0, price_P ÷ h_P].
Every plan that must buy in P holds some package D whose days meet the window of a job that
can run only on P. Charging λ inside D's span and the full rate outside it, every other
package of P pays at least 0 after its charges, and D pays price_P − λ × its card-hours; so

    cost ≥ commitments + price_P − λ h_D + (M_P − 1) min over packages of (price − charges)
           + each workload at its cheapest under the charges by time.

The plan's D is unknown, so the bound is the least of this over every day D could start.
A job's held config pays λ for at most the hours its window shares with D's span, the full
rate for the rest; a replica job pays per segment (segments break at every local 00:00, as
package spans do). On q3 a single 30-day B300 machine month is forced: with one charge
for the whole quarter every other workload could use its cards for nothing on all 92 days;
by time, only on the 30 days it is held.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction

from planner import charges
from planner.configs import Config, ReplicaConfig
from planner.cover import least_cover
from planner.problem import Job, Problem

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
    # priced by time (`_windowed`): the pool, and the real hours of the package whose span
    # is charged `rates[pool]` (the rest of the horizon: that pool's full rate)
    window: tuple[Key, tuple[int, int]] | None = None
    # priced by segment (planner.charges): each unused package pool's charge per segment
    segments: charges.Charges | None = None


# the charge by segment (planner.charges) is priced where its linear program has at most
# this many columns before pruning (GLOP takes about 4 s for 170k on 2 cores; none is
# timed, so the bound of a scenario never depends on the machine's load)
SEGMENT_COLUMNS = 200_000


def lower_bound(
    problem: Problem,
    forced: dict[Key, int] | None = None,
    time: bool = True,
    by_segment: bool = False,
) -> Bound:
    """The best bound over a few charges: full rates everywhere, and for each pool that some
    plan must buy, every step from free to full (pool by pool, keeping the best). `forced`:
    unit-packages per pool that every plan is proven to buy (planner.forced), where that is
    more than the one-job arithmetic here sees. `time`: also try charging a forced pool by
    time (`_windowed`). `by_segment`: also try a charge per unused package pool and
    segment (planner.charges) where its linear program is small enough, on its own and
    with each forced pool priced by time."""
    packages = _packages(problem)
    full = {key: p.unit_price / p.card_hours for key, p in packages.items()}
    least = _least_bought(problem, packages)
    for key, count in (forced or {}).items():
        if key in packages:
            least[key] = max(least.get(key, 0), count)
    floors = _Floors(problem)
    # what every charge pays alike: the commitments, less the committed packages that the
    # purchase counts include
    paid = sum((f.cost for f in problem.fixed), Fraction(0)) - problem.bought_commitments

    def terms(rates: dict[Key, Fraction], skip: Key | None = None) -> Fraction:
        """The commitments, and each counted package at its price less its charges."""
        return paid + sum(
            (n * (packages[key].unit_price - rates[key] * packages[key].card_hours))
            for key, n in least.items()
            if key != skip
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
        windowed = _windowed(problem, key, least[key], rates, floors, terms(rates, skip=key))
        if windowed is not None and windowed.total > best.total:
            best = replace(windowed, least=least)
    if by_segment and problem.segments and charges.columns(problem) <= SEGMENT_COLUMNS:
        timed = charges.timed_pools(problem, least)
        spans = charges.Spans(problem, timed)
        found = charges.Relaxation(problem, spans).charges(flat.rates) if timed else None
        if found is not None:
            fixed = charges.repair(problem, spans, found)
            total = charges.priced(problem, fixed, flat.rates, terms(flat.rates))
            if total > best.total:
                best = Bound(total, dict(flat.rates), least, segments=fixed)
        # the unused pools by segment and a forced pool by time, together: their charges from
        # the relaxation with the forced pool at its full rate, its charge outside its window
        for key in sorted(least) if time and timed else ():
            if packages[key].committed:
                continue
            rates = {**flat.rates, key: full[key]}
            found = charges.Relaxation(problem, spans).charges(rates)
            if found is None:
                continue
            fixed = charges.repair(problem, spans, found)
            others = terms(rates, skip=key)
            windowed = _windowed(problem, key, least[key], rates, _Floors(problem, fixed), others)
            if windowed is not None and windowed.total > best.total:
                best = replace(windowed, least=least, segments=fixed)
    return best


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
        # unused package pools charged by segment (planner.charges), the others at `rates`
        self.charges = segments
        self.memo: dict[tuple[str, int, tuple[Fraction, ...]], Fraction] = {}
        self.by_segment: dict[tuple[int, tuple[Fraction, ...]], tuple[Fraction, ...]] = {}
        self.covers: dict[tuple[tuple[tuple[int, int], ...], int, int], int] = {}
        self.kinds: dict[int, _Kinds] = {}
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
        pools = self.replica_pools[index]
        key = ("replica", index, tuple(rates.get(p, Fraction(0)) for p in pools))
        if key not in self.memo:
            self.memo[key] = sum(self.segments(index, rates), Fraction(0))
        return self.memo[key]

    def segments(self, index: int, rates: dict[Key, Fraction]) -> tuple[Fraction, ...]:
        """Replica job `index`'s cheapest cost in each segment (0 where inactive)."""
        pools = self.replica_pools[index]
        key = (index, tuple(rates.get(p, Fraction(0)) for p in pools))
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
        for s in range(len(problem.segments)):
            if not job.active(s):
                of_segment.append(-1)
                continue
            # the configs this segment may use (bounds lose no plan; ReplicaJob.with_bounds)
            usable = tuple(i for i, c in enumerate(job.configs) if job.bounds[c][s])
            of_segment.append(index.setdefault((usable, job.demand[s], job.minimum[s]), len(index)))
        return cls(tuple(index), tuple(of_segment))


def _segment_floors(
    problem: Problem,
    j: int,
    rates: dict[Key, Fraction],
    kinds: _Kinds,
    covers: dict[tuple[tuple[tuple[int, int], ...], int, int], int],
) -> tuple[Fraction, ...]:
    """Per segment, the least cost of whole replicas that carry replica job `j`'s demand and
    minimum there, over the segment's hours. `covers`: least covers already computed."""
    job = problem.replica_jobs[j]
    hour = [_replica_hour(problem, job.name, c, rates) for c in job.configs]
    scale = math.lcm(*(h.denominator for h in hour))
    items = [(c.capacity, int(h * scale)) for c, h in zip(job.configs, hour, strict=True)]
    least = []
    for usable, demand, minimum in kinds.kinds:
        key = (tuple(sorted({items[i] for i in usable})), demand, minimum)
        if key not in covers:
            covers[key] = least_cover(key[0], demand, minimum)
        least.append(covers[key])
    return tuple(
        Fraction(0) if k < 0 else Fraction((b - a) * least[k], scale)
        for k, (a, b) in zip(kinds.of_segment, problem.segments, strict=True)
    )


def _windowed(
    problem: Problem,
    key: Key,
    count: int,
    rates: dict[Key, Fraction],
    floors: _Floors,
    others: Fraction,
) -> Bound | None:
    """The bound with pool `key` charged by time (the module's doc): the best over a few
    pairs of charges (inside the counted package's span, outside it), each the least over
    the days that package could start. `rates`: every pool's charge, `key`'s at its full
    rate; `others`: the commitments and the other pools' package terms. None where no job
    runs only on `key` (then nothing ties a package to a time)."""
    only = [
        j for j in problem.jobs if j.configs and all(c.held and c.pool == key for c in j.configs)
    ]
    if not only:
        return None
    anchor = min(only, key=lambda j: (j.deadline - j.earliest, j.index))
    price = problem.pools[key].unit_price
    cards = problem.offers[key[0]].unit_cards
    full = rates[key]
    spans = [problem.package(key, d) for d in range(problem.axis.days)]
    days = [d for d, (a, b) in enumerate(spans) if a < anchor.deadline and b > anchor.earliest]
    replicas = range(len(problem.replica_jobs))
    users = [r for r in replicas if key in floors.replica_pools[r]]
    on_pool = [j for j in problem.jobs if any(c.held and c.pool == key for c in j.configs)]
    trains = [_TimedJob.of(j, key, rates, floors) for j in on_pool]
    steady = others + sum(
        (floors.replicas(r, rates) for r in replicas if r not in users), Fraction(0)
    )
    steady += sum(
        (floors.job(j.index, rates) for j in problem.jobs if j not in on_pool), Fraction(0)
    )
    # one package counted: its span at a low charge, the rest of the horizon at the full
    # rate. More counted: the others may lie anywhere, each paying its price less the charges
    # its span carries, so a lower charge outside keeps more of their price.
    if count == 1:
        pairs = [(Fraction(step, STEPS), Fraction(1)) for step in range(STEPS)]
    else:
        pairs = [(Fraction(i, 4), Fraction(o, 4)) for i in (0, 1) for o in (1, 2, 3, 4)]
    windows = _WindowSums(problem, floors, users, rates, key, spans)
    best: Bound | None = None
    for low, high in pairs:
        inside, outside = full * low, full * high
        lowest: tuple[Fraction, int] | None = None
        for d in days:
            a, b = spans[d]
            total = steady + windows.replicas(inside, outside, d)
            total += price - inside * cards * (b - a)
            if count > 1:  # the other packages: each pays at least its price less its charges
                total += (count - 1) * min(
                    price
                    - cards
                    * (
                        inside * _shared(span, (a, b))
                        + outside * (span[1] - span[0] - _shared(span, (a, b)))
                    )
                    for span in spans
                )
            total += sum((t.floor(inside, outside, (a, b)) for t in trains), Fraction(0))
            if lowest is None or total < lowest[0]:
                lowest = (total, d)
        if lowest is not None and (best is None or lowest[0] > best.total):
            best = Bound(lowest[0], {**rates, key: inside}, window=(key, spans[lowest[1]]))
    return best


class _WindowSums:
    """The replica jobs that can use pool `key`, summed: at a charge of that pool, their
    cheapest cost over the whole horizon and within each package span."""

    def __init__(
        self,
        problem: Problem,
        floors: _Floors,
        users: list[int],
        rates: dict[Key, Fraction],
        key: Key,
        spans: list[tuple[int, int]],
    ) -> None:
        self.args = (problem, floors, users, rates, key, spans)
        self.memo: dict[Fraction, tuple[Fraction, list[Fraction]]] = {}

    def at(self, charge: Fraction) -> tuple[Fraction, list[Fraction]]:
        if charge not in self.memo:
            problem, floors, users, rates, key, spans = self.args
            starts = [a for a, _ in problem.segments]
            edges = [
                (bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)) for a, b in spans
            ]
            total, within = Fraction(0), [Fraction(0)] * len(spans)
            for r in users:
                costs = floors.segments(r, {**rates, key: charge})
                running = list(itertools.accumulate(costs, initial=Fraction(0)))
                total += running[-1]
                within = [
                    w + running[hi] - running[lo] for w, (lo, hi) in zip(within, edges, strict=True)
                ]
            self.memo[charge] = (total, within)
        return self.memo[charge]

    def replicas(self, inside: Fraction, outside: Fraction, day: int) -> Fraction:
        """At `inside` within the span of the package bought on `day`, `outside` elsewhere."""
        total, within = self.at(outside)
        return total - within[day] + self.at(inside)[1][day]


def _shared(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Hours two ranges share."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


@dataclass(frozen=True)
class _TimedJob:
    """A train job as `_windowed` prices it: its cheapest config off the timed pool, and
    each held config on it as (card-hours of its runs, cards, storage)."""

    earliest: int
    deadline: int
    elsewhere: Fraction | None
    timed: tuple[tuple[int, int, Fraction], ...]

    @classmethod
    def of(cls, job: Job, key: Key, rates: dict[Key, Fraction], floors: _Floors) -> _TimedJob:
        on = [c for c in job.configs if c.held and c.pool == key]
        off = [floors.config(job, c, rates) for c in job.configs if not (c.held and c.pool == key)]
        timed = {(sum(length for _, length in c.runs), c.cards, c.storage_cost) for c in on}
        return cls(job.earliest, job.deadline, min(off, default=None), tuple(sorted(timed)))

    def floor(self, inside: Fraction, full: Fraction, span: tuple[int, int]) -> Fraction:
        """Its cheapest config when the timed pool charges `inside` within `span` and `full`
        elsewhere: a held config there runs inside for at most the hours its window shares
        with the span."""
        reach = _shared((self.earliest, self.deadline), span)
        costs = [
            storage + cards * (inside * min(hours, reach) + full * (hours - min(hours, reach)))
            for hours, cards, storage in self.timed
        ]
        if self.elsewhere is not None:
            costs.append(self.elsewhere)
        return min(costs)


def _replica_hour(
    problem: Problem, name: str, c: ReplicaConfig, rates: dict[Key, Fraction]
) -> Fraction:
    """What one replica-hour of `c` is charged: rented, its units' hourly price; on held
    cards, its cards at the pool's charge (committed hourly cards: free); plus its disk."""
    rate = problem.replica_rate(name, c)
    if c.rented:
        return rate.per_hour
    return c.cards * rates.get((c.offer, c.mode), Fraction(0)) + rate.disk
