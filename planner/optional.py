"""One optional package bought by the start: other starts for the search.

The heuristic buys a package only where a job alone fills it more cheaply than renting, or
for a service's base load; the start then replans each service on what that plan leaves
(planner.served). Neither buys a package that pays only when several workloads share it:
an 8-card machine-month that a few train jobs and the services' peaks fill between them.
Here one unit-package of a pool the bound credits (its cards at their full rate would save
the workloads something: planner.bound.credited) is bought first on a given local day; the
heuristic's train-jobs-first pass then fills its cards like any held ones before renting
(planner.baseline.bought_first). Start days are tried every `STEP` days on that pass
alone (every other one first), the cheapest few are planned through as the start is (each
service alone on what the rest leaves), then the days either side of the best. The
cheapest is returned, for the checker to judge like any plan. On the 30-workload quarter
of benchmarks/generate.py: 76,408.93 → 73,079.90 with an A100 40G machine-month from 29
July, which train jobs and the services share (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from fractions import Fraction

from planner.baseline import bought_first
from planner.forced import Forced
from planner.problem import Problem
from planner.served import improved
from planner.solution import Solution

Key = tuple[str, str]

POOLS = 2  # the pools tried, those the bound credits most first
STEP = 7  # days between the start days tried on the heuristic's pass alone
FINISHED = 3  # of those passes, the cheapest planned through (each service alone)
NEAR = (-3, 3, -1, 1)  # then these days either side of the best, each planned through


def tried(
    problem: Problem,
    forced: Sequence[Forced],
    pools: Sequence[Key],
    until: float | None = None,
    passes: int | None = None,
    guess: tuple[float, float] = (0.0, 0.0),
) -> tuple[Solution, Key, int] | None:
    """The cheapest plan found with one unit-package of one of `pools` (best first) bought
    on some day, its pool and day (module docstring); None where none gives a plan.
    `until`: a `time.perf_counter()` past which nothing more is started (the passes stop
    halfway there; each step is timed, and one is not started where the last of its kind,
    at first `guess` (a pass, a plan planned through), would not fit); `passes`: the most
    heuristic passes tried (the finishing steps besides). Where no pass can be planned
    through in time, the cheapest pass as it is."""
    last = {"pass": guess[0], "finish": guess[1]}
    now = time.perf_counter()
    # the passes take at most the first half of the time, the finishing steps the rest
    ends = {"pass": None if until is None else now + (until - now) / 2, "finish": until}

    def room(kind: str, extra: float = 0.0) -> bool:
        end = ends[kind]
        return end is None or time.perf_counter() + last[kind] + extra < end

    # the heuristic's pass alone on every STEP-th day of each pool: every other one of
    # those days first, the pools in turn, so a short budget spans more of the quarter
    found: list[tuple[Fraction, Key, int, Solution]] = []
    coarse = [
        (key, day)
        for first in (0, STEP)
        for day in range(first, problem.axis.days, 2 * STEP)
        for key in pools[:POOLS]
    ]
    for key, day in coarse[:passes]:
        if not room("pass"):
            break
        began = time.perf_counter()
        plan = bought_first(problem, forced, key, day)
        last["pass"] = time.perf_counter() - began
        if plan is not None:
            found.append((plan.cost(problem), key, day, plan))
    found.sort(key=lambda f: (f[0], f[1], f[2]))
    best: tuple[Fraction, Key, int, Solution] | None = None
    done: set[tuple[Key, int]] = set()

    def finish(key: Key, day: int, plan: Solution | None) -> None:
        nonlocal best
        done.add((key, day))
        # a day not passed yet needs its pass first
        if not room("finish", 0.0 if plan is not None else last["pass"]):
            return
        began = time.perf_counter()
        if plan is None:
            plan = bought_first(problem, forced, key, day)
        plan = plan and (improved(problem, plan) or plan)
        if plan is not None:
            cost = plan.cost(problem)
            if best is None or (cost, key, day) < (best[0], best[1], best[2]):
                best = (cost, key, day, plan)
        last["finish"] = time.perf_counter() - began

    for _, key, day, plan in found[:FINISHED]:
        finish(key, day, plan)
    if best is None:  # none planned through in time: the cheapest pass stands
        return (found[0][3], found[0][1], found[0][2]) if found else None
    _, key, centre, _ = best
    for offset in NEAR:
        day = centre + offset
        if 0 <= day < problem.axis.days and (key, day) not in done:
            finish(key, day, None)
    return best[3], best[1], best[2]
