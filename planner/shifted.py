"""The forced packages' placement moved by whole days: other starts for the search.

planner.forced proves how few packages the jobs that run only on one pool need, and gives
one placement of them and their packages; the heuristic places them there first
(planner.baseline). The same placement some days earlier or later, where every such job
keeps its window and every package the horizon, needs no more packages, and leaves other
hours of their spare cards to the services that ride them. Each shift is planned as the
start is (the heuristic's train-jobs-first pass with those pins, then each service alone
on what the rest leaves: planner.served) and the cheapest is returned, for the checker to
judge like any plan. Shifts are tried every `STEP` days outward from the proven
placement (every day where there are few), then the days either side of the best; q3:
413,160.27 → 412,158.48 (its B300 machine-month six days earlier).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

from planner.baseline import pinnable, pinned
from planner.forced import Forced
from planner.problem import Problem
from planner.served import improved
from planner.solution import Solution

STEP = 3  # days between the shifts tried first
COARSE = 10  # of those, at most this many (±3, ±6, … ±15 days); all where no more
TRIALS = 12  # shifts tried at most, the two either side of the best among them


def swept(
    problem: Problem,
    forced: Sequence[Forced],
    until: float | None = None,
    trials: int = TRIALS,
    guess: float = 0.0,
) -> tuple[Solution, int] | None:
    """The cheapest plan (and its shift in days) over shifts of every placement the
    heuristic pins (`forced`'s, planner.baseline) together (module docstring); None where
    no shift gives a plan. `until`: a `time.perf_counter()` past which no further shift is
    tried (each is timed, and one is not started where the last, or at first `guess`
    seconds, would not fit); `trials`: the most shifts tried (at most TRIALS)."""
    pins = pinnable(problem, forced)
    moves = {
        d: m
        for n in range(1, problem.axis.days)
        for d in (-n, n)
        if (m := _moved(problem, pins, d))
    }
    shifts = list(moves)
    if len(shifts) > COARSE:
        shifts = ([d for d in shifts if d % STEP == 0] or shifts)[:COARSE]
    plans: dict[int, tuple[Fraction, Solution] | None] = {}
    last = guess

    def trial(days: int) -> None:
        nonlocal last
        if days not in moves or days in plans:
            return
        if len(plans) >= min(trials, TRIALS):
            return
        if until is not None and time.perf_counter() + last >= until:
            return
        began = time.perf_counter()
        plan = pinned(problem, moves[days])
        plan = plan and (improved(problem, plan) or plan)
        plans[days] = None if plan is None else (plan.cost(problem), plan)
        last = time.perf_counter() - began

    def best() -> int | None:
        found = [(p[0], abs(d), d) for d, p in plans.items() if p is not None]
        return min(found)[2] if found else None

    for days in shifts:
        trial(days)
    first = best()
    if first is None:
        return None
    for days in (first - 1, first + 1):
        trial(days)  # 0 is no shift: never among `moves`
    chosen = best()
    assert chosen is not None
    found = plans[chosen]
    assert found is not None
    return found[1], chosen


def _moved(problem: Problem, forced: Sequence[Forced], days: int) -> list[Forced] | None:
    """Every placement in `forced` moved `days` local days (earlier where negative), each
    job to the same hour of its new day; None where there is none, or a job would leave
    its window (or its window hours) or a package the horizon."""
    axis = problem.axis
    moved = []
    for f in forced:
        first, final = min(d for d, _ in f.bought), max(d for d, _ in f.bought)
        if first + days < 0 or final + days >= axis.days:
            return None
        placed = []
        for index, k, start in f.placed:
            day = axis.day_of(start)
            if not 0 <= day + days < axis.days:
                return None
            hour = axis.day_start(day + days) + start - axis.day_start(day)
            job = problem.jobs[index]
            if hour not in job.start_range(job.configs[k]):
                return None
            placed.append((index, k, hour))
        bought = tuple((day + days, units) for day, units in f.bought)
        moved.append(replace(f, placed=tuple(placed), bought=bought))
    return moved or None
