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

from planner.baseline import pinned
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
    """The cheapest plan (and its shift in days) over shifts of every `forced` placement
    together (module docstring); None where no shift gives a plan. `until`: a
    `time.perf_counter()` past which no further shift is tried (each is timed, and one is
    not started where the last, or at first `guess` seconds, would not fit); `trials`: the
    most shifts tried (at most TRIALS)."""
    if not any(f.placed and f.bought for f in forced):
        return None
    reach = problem.axis.days
    shifts = [d for n in range(1, reach) for d in (-n, n) if _moved(problem, forced, d)]
    if len(shifts) > COARSE:
        shifts = [d for d in shifts if d % STEP == 0][:COARSE]
    tried: dict[int, Solution | None] = {}
    last = guess

    def room() -> bool:
        most = min(trials, TRIALS)
        return len(tried) < most and (until is None or time.perf_counter() + last < until)

    def trial(days: int) -> None:
        nonlocal last
        moved = _moved(problem, forced, days)
        if not moved or days in tried:
            return
        began = time.perf_counter()
        plan = pinned(problem, moved)
        tried[days] = plan and (improved(problem, plan) or plan)
        last = time.perf_counter() - began

    for days in shifts:
        if not room():
            break
        trial(days)
    found = {d: s for d, s in tried.items() if s is not None}
    if not found:
        return None
    best = min(found, key=lambda d: (found[d].cost(problem), abs(d), d))
    for days in (best - 1, best + 1):
        if room():
            trial(days)
    found = {d: s for d, s in tried.items() if s is not None}
    best = min(found, key=lambda d: (found[d].cost(problem), abs(d), d))
    return found[best], best


def _moved(problem: Problem, forced: Sequence[Forced], days: int) -> list[Forced] | None:
    """Every placement in `forced` moved `days` whole days (earlier where negative); None
    where a job would leave its window (or its window hours) or a package the horizon."""
    moved = []
    for f in forced:
        if not (f.placed and f.bought):
            continue
        first, final = min(d for d, _ in f.bought), max(d for d, _ in f.bought)
        if first + days < 0 or final + days >= problem.axis.days:
            return None
        hours = problem.package(f.key, first + days)[0] - problem.package(f.key, first)[0]
        placed = []
        for index, k, start in f.placed:
            job = problem.jobs[index]
            if start + hours not in job.start_range(job.configs[k]):
                return None
            placed.append((index, k, start + hours))
        bought = tuple((day + days, units) for day, units in f.bought)
        moved.append(replace(f, placed=tuple(placed), bought=bought))
    return moved
