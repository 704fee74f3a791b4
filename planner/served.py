"""A baseline's plan with each service's and reserve's replicas replaced, one replica job
at a time, by its least schedule alone on what the rest of the plan leaves free
(planner.rises' program, along its least path): a start for the search that the checker
judges like any plan.

Jobs are taken in the problem's order. For each, the plan's other workloads (train jobs
where the baseline placed them, the other replica jobs as chosen so far, rented replicas
from their setup hours on) leave per hour some units of each offer and mode (its stock,
and the offer's cap over all modes) and some cards of each pool the plan holds (packages
bought, commitments); each config of the job may hold at most what is left in a segment
and, if rented, in its setup hours before. The program then gives the job's least
schedule there, setups and switches included (`bound.schedules_alone`: that path's configs
followed one by one, and its least path); the cheapest of these that what is left
holds hour by hour replaces the job's replicas where it costs the job less. What the
program cannot see (the machines a pool's cards sit on) the checker can: where it refuses
the plan, the baseline stands. On q3 the heuristic's plan 420,048.93 becomes 413,160.27
this way (checked); on the generated 30-workload quarter 79,268.73 becomes 76,408.93, the
proven optimum among plans without optional packages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from planner import rises
from planner.bound import schedules_alone
from planner.configs import Config, ReplicaConfig
from planner.problem import Problem
from planner.rules import PACKAGE_MODES
from planner.serving import ReplicaJob
from planner.solution import Solution

Key = tuple[str, str]
Replicas = dict[tuple[int, int, int], int]  # (replica job, config, segment) → replicas


def improved(
    problem: Problem, base: Solution, order: Sequence[int] | None = None
) -> Solution | None:
    """`base` with each replica job's replicas replaced by its least schedule alone on
    what the rest of the plan leaves free, where that costs the job less (module
    docstring); None where no job changes. `order`: the replica jobs replanned, in turn
    (default: all, in the problem's order)."""
    room = _Room.of(problem, base)
    replicas = dict(base.replicas)
    changed = False
    covers: rises.Covers = {}
    for j in range(len(problem.replica_jobs)) if order is None else order:
        mine = {key: n for key, n in replicas.items() if key[0] == j}
        room.use_replicas(problem, mine, -1)
        variant = replace(problem, replica_jobs=_within(problem, j, room))
        paid = _money(problem, base, j, mine)
        found = (replicas_of(variant, j, s) for s in schedules_alone(variant, j, covers))
        priced = sorted((_money(problem, base, j, r), i, r) for i, r in enumerate(found) if r)
        # the cheapest that what is left holds (the program bounds each segment, not the
        # setup hours held before it); else the job keeps its replicas
        taken = next((r for money, _, r in priced if money < paid and room.takes(problem, r)), None)
        if taken is None:
            room.use_replicas(problem, mine, +1)
        else:
            replicas = {key: n for key, n in replicas.items() if key[0] != j} | taken
            changed = True
    return replace(base, replicas=replicas) if changed else None


def package_fits(problem: Problem, base: Solution, key: Key, day: int) -> bool:
    """Whether one more unit-package of pool `key` bought on `day` keeps `base` within its
    mode's stock and its offer's cap in every hour of its span (rule 7)."""
    offer = problem.offers[key[0]]
    a, b = problem.package(key, day)
    span = _span(problem.hours, a, b)
    stock = offer.billing(key[1]).stock
    if stock is not None:  # the units its packages (commitments among them) hold then
        held = _held(problem, base, key)[span]
        if held.size and int(held.max()) + 1 > stock:
            return False
    if offer.max_units is None:
        return True
    left = _Room.of(problem, base).offers[key[0]][span]  # the cap less everything held
    return not left.size or int(left.min()) >= 1


def _held(problem: Problem, base: Solution, key: Key) -> np.ndarray:
    """Units of pool `key` that `base` holds in each hour: its packages (the committed ones
    among them), or a committed hourly or spot pool's units."""
    pool = problem.pools[key]
    if pool.days:
        spans = [(*problem.package(key, day), n) for day, n in base.packages.get(key, {}).items()]
    else:
        spans = [(c.start, c.end, c.units) for c in pool.committed]
    held = np.zeros(problem.hours, dtype=np.int64)
    for a, b, n in spans:
        held[_span(problem.hours, a, b)] += n
    return held


def _span(hours: int, a: int, b: int) -> slice:
    """Hours [a, b) within a horizon of `hours`."""
    return slice(min(max(a, 0), hours), min(max(b, 0), hours))


def replicas_of(
    problem: Problem, j: int, schedule: dict[int, dict[ReplicaConfig, int]]
) -> Replicas | None:
    """Replica job `j`'s `schedule` (per segment, replicas per config) as a solution's
    replicas, held as long as its minimum hold asks (`ReplicaJob.kept`); None where that
    would break a config's bound on replicas (the model's domain)."""
    job = problem.replica_jobs[j]
    index = {c: k for k, c in enumerate(job.configs)}
    rows: dict[int, list[int]] = {}
    for s, counts in schedule.items():
        for config, n in counts.items():
            rows.setdefault(index[config], [0] * len(problem.segments))[s] = n
    kept = {k: job.kept(problem.segments, row) for k, row in rows.items()}
    for k, row in kept.items():
        if any(n > most for n, most in zip(row, job.bounds[job.configs[k]], strict=True)):
            return None
    return {(j, k, s): n for k, row in sorted(kept.items()) for s, n in enumerate(row) if n}


def _money(problem: Problem, base: Solution, j: int, replicas: Replicas) -> Fraction:
    """What replica job `j` pays with `replicas` (on held cards: nothing beyond the
    packages, which stay bought)."""
    return sum(replace(base, replicas=replicas).replica_money(problem, j), Fraction(0))


def _within(problem: Problem, j: int, room: _Room) -> tuple[ReplicaJob, ...]:
    """The replica jobs with job `j`'s configs bounded per segment by what `room` leaves
    there and, for a rented config, in its setup hours before (where a replica it starts
    is held); its configs and their order unchanged, so indices carry over."""
    job = problem.replica_jobs[j]
    starts = [a for a, _ in problem.segments]
    bounds = {}
    for c in job.configs:
        free = each = room.replicas(problem, c)
        for lag in range(1, 0 if c.held else problem.replica_setup.get((job.name, c.offer), 0) + 1):
            free = np.minimum(free, np.concatenate([each[:lag], each[:-lag]]))
        most = np.minimum.reduceat(free[: problem.segments[-1][1]], starts)
        bounds[c] = tuple(np.minimum(job.bounds[c], most).tolist())
    jobs = list(problem.replica_jobs)
    jobs[j] = replace(job, bounds=bounds)
    return tuple(jobs)


# more than any count a config's bounds allow: where an offer sets no limit
UNLIMITED = 1 << 40


@dataclass
class _Room:
    """What a plan leaves free per hour: units of each offer's rented modes (their stock),
    of each offer over all modes (its cap), and cards of each pool it holds."""

    hours: int
    units: dict[Key, np.ndarray]
    offers: dict[str, np.ndarray]
    cards: dict[Key, np.ndarray]

    @classmethod
    def of(cls, problem: Problem, base: Solution) -> _Room:
        """What `base` leaves free: its packages (commitments among them) and committed
        units held, its train jobs' and replicas' units and cards taken."""
        hours = problem.hours
        room = cls(hours, {}, {}, {})
        for offer_id, offer in problem.offers.items():
            for mode, billing in offer.modes.items():
                if mode not in PACKAGE_MODES and billing.stock is not None:
                    room.units[(offer_id, mode)] = np.full(hours, billing.stock, dtype=np.int64)
            if offer.max_units is not None:
                room.offers[offer_id] = np.full(hours, offer.max_units, dtype=np.int64)
        for key, pool in problem.pools.items():
            held = _held(problem, base, key)
            room.cards[key] = held * problem.offers[key[0]].unit_cards
            for left in (room.offers.get(key[0]), None if pool.days else room.units.get(key)):
                if left is not None:  # held units count against the cap, committed ones
                    left -= held  # against their mode's stock too (rule 7)
        for job in problem.jobs:
            config, start = base.config(problem, job.index), base.starts[job.index]
            for offset, length in config.runs:
                room._take(problem, config, start + offset, start + offset + length, 1)
        room.use_replicas(problem, base.replicas, +1)
        return room

    def _hours(self, a: int, b: int) -> slice:
        return _span(self.hours, a, b)

    def use_replicas(self, problem: Problem, replicas: Replicas, sign: int) -> None:
        """Replicas taken (`sign` +1) or given back (-1): on held cards per segment, rented
        ones as the plan rents them, each from its setup hours before it serves."""
        series: dict[tuple[int, int], list[int]] = {}
        for (j, k, s), n in replicas.items():
            series.setdefault((j, k), [0] * len(problem.segments))[s] = n
        for (j, k), counts in sorted(series.items()):
            job = problem.replica_jobs[j]
            c = job.configs[k]
            if c.held:
                for (a, b), n in zip(problem.segments, counts, strict=True):
                    if n:
                        self._take(problem, c, a, b, sign * n)
                continue
            setup = problem.replica_setup.get((job.name, c.offer), 0)
            rate = problem.replica_rate(job.name, c)
            for a, b in rate.rentals(counts, problem.segments):
                self._take(problem, c, a - setup, b, sign)

    def takes(self, problem: Problem, replicas: Replicas) -> bool:
        """Whether what is left holds `replicas` too: taken if so. An hour already short
        (what this count and the checker's differ on) only may not get shorter."""
        lefts = [left for kind in (self.units, self.offers, self.cards) for left in kind.values()]
        floors = [np.minimum(left, 0) for left in lefts]
        self.use_replicas(problem, replicas, +1)
        if all((left >= floor).all() for left, floor in zip(lefts, floors, strict=True)):
            return True
        self.use_replicas(problem, replicas, -1)
        return False

    def _take(self, problem: Problem, c: Config | ReplicaConfig, a: int, b: int, n: int) -> None:
        """`n` runs or replicas of `c` over [a, b): cards of its pool where held, else
        units of its offer and mode and of the offer's cap."""
        if c.held:  # every held config's pool is among the problem's pools
            self.cards[c.pool][self._hours(a, b)] -= n * problem.held_cards(c.offer, c.cards)
            return
        for left in (self.units.get(c.pool), self.offers.get(c.offer)):
            if left is not None:
                left[self._hours(a, b)] -= n * c.units

    def replicas(self, problem: Problem, c: ReplicaConfig) -> np.ndarray:
        """Per hour, the most replicas of `c` that what is left can hold."""
        if c.held:
            held: np.ndarray = np.maximum(self.cards[c.pool], 0)
            return held // problem.held_cards(c.offer, c.cards)
        most = np.full(self.hours, UNLIMITED, dtype=np.int64)
        for left in (self.units.get(c.pool), self.offers.get(c.offer)):
            if left is not None:
                most = np.minimum(most, np.maximum(left, 0) // c.units)
        return most
