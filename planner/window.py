"""The bound with a forced package pool charged by time (planner.bound's argument).

λ may differ by hour: λ_P(t) in [0, price_P ÷ h_P]. Every plan that must buy in P holds
some package D whose days meet the window of a job that can run only on P. Charging λ
inside D's span and the full rate outside it, every other package of P pays at least 0
after its charges, and D pays price_P − λ × its card-hours; so

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
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from planner.problem import Job, Problem

if TYPE_CHECKING:
    from planner.bound import _Floors

Key = tuple[str, str]
STEPS = 8  # the charge inside the counted package's span: 0, 1/8, … 7/8 of the full rate


@dataclass(frozen=True)
class Windowed:
    """The bound priced by time: its total, the charge inside the counted package's span,
    and the real hours of the package that gives the least."""

    total: Fraction
    inside: Fraction
    span: tuple[int, int]


def priced(
    problem: Problem,
    key: Key,
    count: int,
    rates: dict[Key, Fraction],
    floors: _Floors,
    others: Fraction,
) -> Windowed | None:
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
    run = _Run.of(problem, anchor, key, count, floors, users, rates)
    best: Windowed | None = None
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
            if run is not None:
                total += run.extra(inside, full - inside, (a, b))
            if lowest is None or total < lowest[0]:
                lowest = (total, d)
        if lowest is not None and (best is None or lowest[0] > best.total):
            best = Windowed(lowest[0], inside, spans[lowest[1]])
    return best


# a charge per card-hour no cover takes where another config serves: the pool's cards are
# taken (planner.window._Run)
TAKEN = Fraction(10**9)


class _Run:
    """The anchor job's run, where each of its configs takes every card of the one counted
    package: in the hours it runs inside that package's span, the replica jobs cannot use
    the pool unless the plan holds a second package then, whose span shares at least a
    whole day with the first (spans are whole days) and so pays at least (full − inside) ×
    cards × that day's hours after its charges. The bound adds the lesser of the two: the
    replica jobs' extra cost without the pool over the anchor's cheapest placement of its
    shortest run, and that second package's least price."""

    def __init__(
        self,
        problem: Problem,
        anchor: Job,
        hours: int,
        floors: _Floors,
        users: list[int],
        rates: dict[Key, Fraction],
        key: Key,
    ) -> None:
        self.problem, self.anchor, self.hours = problem, anchor, hours
        self.floors, self.users, self.rates, self.key = floors, users, rates, key
        self.cards = problem.offers[key[0]].unit_cards
        self.day = min(problem.axis.day_hours(d) for d in range(problem.axis.days))
        self.memo: dict[Fraction, list[Fraction]] = {}

    @classmethod
    def of(
        cls,
        problem: Problem,
        anchor: Job,
        key: Key,
        count: int,
        floors: _Floors,
        users: list[int],
        rates: dict[Key, Fraction],
    ) -> _Run | None:
        """None unless one package is counted and every config of the anchor runs once on
        all its cards (then no other workload fits beside it)."""
        cards = problem.offers[key[0]].unit_cards
        if (
            count != 1
            or not users
            or any(c.cards < cards or len(c.runs) != 1 for c in anchor.configs)
        ):
            return None
        shortest = min(length for c in anchor.configs for _, length in c.runs)
        return cls(problem, anchor, shortest, floors, users, rates, key)

    def _running(self, inside: Fraction) -> list[Fraction]:
        """Running sums by hour of what the replica jobs pay more without the pool than with
        its cards at `inside`."""
        if inside not in self.memo:
            extra = [Fraction(0)] * len(self.problem.segments)
            for r in self.users:
                at = self.floors.segments(r, {**self.rates, self.key: inside})
                without = self.floors.segments(r, {**self.rates, self.key: TAKEN})
                for s, (x, y) in enumerate(zip(at, without, strict=True)):
                    extra[s] += y - x
            by_hour = []
            for s, (a, b) in enumerate(self.problem.segments):
                by_hour.extend([extra[s] / (b - a)] * (b - a))
            self.memo[inside] = list(itertools.accumulate(by_hour, initial=Fraction(0)))
        return self.memo[inside]

    def extra(self, inside: Fraction, margin: Fraction, span: tuple[int, int]) -> Fraction:
        """The least the run adds with the counted package on `span`; `margin`: the full rate
        less `inside`."""
        running = self._running(inside)
        a, b = span
        first = max(self.anchor.earliest, a)
        last = min(self.anchor.deadline - self.hours, b - 1)
        if first > last:
            return Fraction(0)
        cheapest = min(running[min(t + self.hours, b)] - running[t] for t in range(first, last + 1))
        return max(Fraction(0), min(cheapest, margin * self.cards * self.day))


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
