"""Rule 5 on machines: the work on a pool of held cards must fit its machines, not only its
card count.

Counting cards per pool (`rentals.pools`) accepts plans no one can run: two 4-card jobs on
two different 8-card machines leave 8 cards free that one 8-card job cannot use, and a job
whose package ends mid-run must move to another machine. Here every held unit (a package's
or commitment's unit: an 8-card machine, or a 1-card container) is a machine held from its
start to its end; a unit bought on the day another ends may be its renewal (the same
machine, held on). The checker searches, depth-first and exhaustively, for a placement in
which

- a train job sits on the same unit(s) from its first run to its last (following a unit
  into its renewal), ceil(cards ÷ unit cards) units, each fully if it needs more than one;
- a replica on held cards sits on one unit between two hours at which anything on the
  pool starts or ends, and may restart on another then (starts on held cards cost
  nothing). So more replicas, or fewer units, never make a pool easier to place, which is
  what makes the solver's learnt no-goods valid (planner/placement.py);
- at every hour the cards that runs and replicas use on a unit are at most its cards.

No placement is a violation naming a smallest set of the pool's work that cannot be
placed together (`CheckResult.conflicts`, from which the solver learns). The search is
exact; one that runs out of its step budget decides nothing: the plan's cards suffice at
every hour, so it is not a violation, and the plan says which pool went unverified
(`CheckResult.undecided`).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from planner.check.rentals import Held
from planner.check.result import CheckResult
from planner.check.train import Placed
from planner.domain.plan import Plan, ReplicaAssignment
from planner.domain.scenario import Scenario
from planner.domain.timeaxis import TimeAxisError

NODES = 1_000_000  # search steps per pool before the answer is "unknown" (undecided)


@dataclass(frozen=True)
class Unit:
    start: int
    end: int


@dataclass(frozen=True)
class Work:
    """Something placed on a pool's units: a train job (count 1, its runs) or a replica use
    (count replicas, one range)."""

    name: str
    runs: tuple[tuple[int, int], ...]
    cards: int
    count: int
    fixed: bool  # a train job: the same units all along; replicas may move between pieces


def check_machines(
    scenario: Scenario,
    plan: Plan,
    rentals: list[Held],
    placed: dict[str, Placed],
    result: CheckResult,
) -> None:
    units: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for h in rentals:
        if h.package or h.rental.committed:
            units[h.key] += [Unit(h.start, h.end)] * h.rental.units
    work: dict[tuple[str, str], list[Work]] = defaultdict(list)
    for name, p in placed.items():
        job = p.assignment
        if job.held and p.runs and all(x < y for x, y in p.runs):
            work[(job.offer, job.mode)].append(Work(name, tuple(p.runs), job.cards, 1, True))
    for a in plan.assignments:
        if not isinstance(a, ReplicaAssignment):
            continue
        for i, u in enumerate(a.uses):
            try:
                start, end = scenario.axis.hour(u.start), scenario.axis.hour(u.end)
            except TimeAxisError:  # off the hour grid: the replica rules' violation
                continue
            # a use that is empty or runs backwards is the replica rules' violation, not this
            if u.held and u.replicas > 0 and start < end:
                span = ((start, end),)
                label = f"{a.workload} replicas #{i + 1}"
                work[(u.offer, u.mode)].append(Work(label, span, u.cards, u.replicas, False))
    for key in sorted(work):
        size = scenario.offers[key[0]].unit_cards
        held = units.get(key, [])
        status = place(held, work[key], size)
        if status == "placed":
            continue
        subject = f"{key[0]} {key[1]}"
        if status == "unknown":
            names = ", ".join(sorted(w.name for w in work[key]))
            result.undecided.append(
                f"{subject}: no placement of {names} on its machines was found or refuted in "
                f"{NODES:,} steps; its cards suffice at every hour, so the plan stands, but "
                "check that the provider can place them"
            )
            continue
        if status.startswith("uncovered"):
            result.add("machines", subject, 1, "", status.removeprefix("uncovered: "))
            continue
        core = _conflict(held, work[key], size)
        result.conflicts[key] = tuple(w.name for w in core)
        result.add(
            "machines",
            subject,
            1,
            "",
            f"the cards fit at every hour, but no placement on its {len(held)} unit(s) of "
            f"{size} card(s) runs {', '.join(w.name for w in core)} without moving one of "
            "them between units",
        )


def _conflict(units: list[Unit], work: list[Work], size: int) -> list[Work]:
    """A smallest-by-deletion set of `work` that cannot be placed: each member dropped in
    turn, kept only if the rest then fits."""
    core = list(work)
    for w in list(core):
        rest = [x for x in core if x is not w]
        if rest and place(units, rest, size) == "infeasible":
            core = rest
    return core


def place(units: list[Unit], work: list[Work], size: int) -> str:
    """ "placed", "infeasible", "unknown" (the search's step budget ran out), or
    "uncovered: why" (work at hours when no unit is held).

    Train jobs, depth-first in order of start (the largest first among equal starts), each
    part on a path of units from its first hour to its last, following a unit into a
    renewal already chosen or choosing one; units alike in span, load and renewal are tried
    once. Replicas may restart on another unit wherever anything on the pool starts or ends
    (starts on held cards cost nothing), so between two such hours they are packed anew
    into the units' free cards (`_Search._pack`: a closed form when sizes divide one
    another, 1, 2, 4, 8 cards; exact bin packing otherwise). Every train placement is tried
    before "infeasible", so the answer is exact."""
    cuts = sorted({t for u in units for t in (u.start, u.end)})
    jobs: list[Work] = []
    replicas: list[Work] = []
    for w in work:
        first, last = w.runs[0][0], w.runs[-1][1]
        for t in [first, *(t for t in cuts if first < t < last)]:
            if not any(u.start <= t < u.end for u in units):
                return f"uncovered: {w.name} needs held cards at hour {t} when no unit is"
        whole = -(-w.cards // size)  # units a part larger than one unit needs, each fully
        if w.fixed and w.cards > size:  # each unit of the job a part of its own
            jobs += [Work(w.name, w.runs, size, 1, True)] * whole
        elif w.cards > size:
            replicas.append(Work(w.name, w.runs, size, w.count * whole, False))
        elif w.fixed:
            jobs.append(w)
        else:
            replicas.append(w)
    jobs.sort(key=lambda w: (w.runs[0][0], -w.cards))
    events = sorted({*cuts, *(t for w in work for run in w.runs for t in run)})
    search = _Search(units, size, events, replicas)
    try:
        return "placed" if search.run(jobs, 0) else "infeasible"
    except _Budget:
        return "unknown"


class _Budget(Exception):
    pass


class _Search:
    def __init__(
        self, units: list[Unit], size: int, events: list[int], replicas: list[Work]
    ) -> None:
        self.units, self.size = units, size
        self.load: list[dict[int, int]] = [defaultdict(int) for _ in units]
        self.renewed: dict[int, int] = {}  # unit → the unit it continues as
        self.nodes = 0
        self.refuted: set[tuple[tuple[int, ...], tuple[tuple[int, int], ...]]] = set()
        # the pieces between events where replicas run, with what runs there by size
        self.pieces: list[tuple[int, int, dict[int, int]]] = []
        for x, y in itertools.pairwise(events):
            need: dict[int, int] = defaultdict(int)
            for w in replicas:
                if any(a <= x and y <= b for a, b in w.runs):
                    need[w.cards] += w.count
            if need:
                self.pieces.append((x, y, dict(need)))

    def _step(self) -> None:
        self.nodes += 1
        if self.nodes > NODES:
            raise _Budget

    def run(self, jobs: list[Work], i: int) -> bool:
        self._step()
        if i == len(jobs):
            return self._replicas_fit()
        w = jobs[i]
        for parts in self._paths(w):
            self._step()
            if self._add(parts, w.cards):
                if self.run(jobs, i + 1):
                    return True
                self._load(parts, -w.cards)
        return False

    def _replicas_fit(self) -> bool:
        """Whether every piece's replicas pack into the units' free cards there."""
        for x, y, need in self.pieces:
            free = [
                self.size - self.load[u][x]
                for u, unit in enumerate(self.units)
                if unit.start <= x and y <= unit.end
            ]
            if not self._pack(tuple(sorted((f for f in free if f), reverse=True)), need):
                return False
        return True

    def _pack(self, free: tuple[int, ...], need: dict[int, int]) -> bool:
        """Whether replicas (cards → count) pack into units with `free` cards each (largest
        first). Sizes that divide one another fit exactly when each size's slots hold it and
        all larger; otherwise a replica of the largest size is tried on each distinct free
        count in turn, depth-first, refuted states remembered: exact bin packing."""
        sizes = sorted((s for s, n in need.items() if n), reverse=True)
        if not sizes:
            return True
        if all(a % b == 0 for a, b in itertools.pairwise(sizes)):
            larger = 0  # replicas of the sizes above, in units of the current size
            previous = None
            for size in sizes:
                larger = larger * (previous // size) if previous else 0
                larger += need[size]
                if sum(f // size for f in free) < larger:
                    return False
                previous = size
            return True
        if sum(s * n for s, n in need.items()) > sum(free):
            return False
        key = (free, tuple(sorted(need.items())))
        if key in self.refuted:
            return False
        self._step()
        size = sizes[0]
        rest = {**need, size: need[size] - 1}
        for i, f in enumerate(free):
            if f < size:
                break
            if i and free[i - 1] == f:  # units with as many free cards are alike
                continue
            left = tuple(sorted((*free[:i], f - size, *free[i + 1 :]), reverse=True))
            if self._pack(tuple(x for x in left if x), rest):
                return True
        self.refuted.add(key)
        return False

    def _paths(self, w: Work) -> Iterator[list[tuple[int, int, int]]]:
        """Each path of units (with renewals) holding `w` from its first hour to its last,
        as (unit, from, to) parts over its runs, new renewals claimed while it is tried.
        Of units alike (span, load over the job's hours, renewal), only the first."""
        first, last = w.runs[0][0], w.runs[-1][1]
        seen = set()
        for u, unit in enumerate(self.units):
            if not unit.start <= first < unit.end:
                continue
            alike = (
                unit.start,
                unit.end,
                tuple(self.load[u][t] for t in range(first, min(last, unit.end))),
                self.renewed.get(u),
                u in self.renewed.values(),
            )
            if alike in seen:
                continue
            seen.add(alike)
            for path in self._follow(u, first, last, []):
                # the job holds the path all along, and uses its cards in its runs
                yield [
                    (v, max(x, rx), min(y, ry))
                    for v, x, y in path
                    for rx, ry in w.runs
                    if max(x, rx) < min(y, ry)
                ]

    def _follow(
        self, u: int, t: int, last: int, path: list[tuple[int, int, int]]
    ) -> Iterator[list[tuple[int, int, int]]]:
        end = self.units[u].end
        here = [*path, (u, t, min(end, last))]
        if end >= last:
            yield here
            return
        if u in self.renewed:
            yield from self._follow(self.renewed[u], end, last, here)
            return
        taken = set(self.renewed.values())
        for s, unit in enumerate(self.units):
            if unit.start == end and s not in taken:
                self.renewed[u] = s
                yield from self._follow(s, end, last, here)
                del self.renewed[u]

    def _add(self, parts: list[tuple[int, int, int]], cards: int) -> bool:
        """Load `cards` onto the parts' units over their hours, if every unit stays within
        its cards (else load nothing)."""
        if any(self.load[u][t] + cards > self.size for u, x, y in parts for t in range(x, y)):
            return False
        self._load(parts, cards)
        return True

    def _load(self, parts: list[tuple[int, int, int]], cards: int) -> None:
        for u, x, y in parts:
            for t in range(x, y):
                self.load[u][t] += cards
