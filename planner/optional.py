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

Each day is also tried another way, on the best start so far (the per-service plan):
the package added to it as it is, and the services that would gain most from its cards
(`bound.sharers`: their least covers at the pools' full rates cost more without it)
replanned on it one after another, as the start replans each (planner.served), the rest
of the plan left where it was. The heuristic's pass places every train job again around
the package and serves last; on the 100-workload quarter that costs 7-12k more than the
start on every day tried, where a 4090 48G machine-month that three services and the
people's desks share saves 1.7-3.5k on the start. A day on the start is tried only
where one more package keeps its pool within its stock and its offer within its cap
(`served.package_fits`): the start may hold packages already.

Then, while one pays, more packages on the best plan the same way, each laid end to end
with one it holds (the 100-workload quarter: a second 4090 48G machine-month right after
the first, 207,207.80 → 203,332.10 when not timed); and so on the next few days that paid
on the start (`STACKED`), as the cheapest single package need not stack best.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

from planner.baseline import bought_first
from planner.bound import sharers
from planner.forced import Forced
from planner.problem import Problem
from planner.served import improved, package_fits
from planner.solution import Solution

Key = tuple[str, str]

POOLS = 2  # the pools tried, those the bound credits most first
STEP = 7  # days between the start days tried on the heuristic's pass alone
FINISHED = 3  # of those passes, the cheapest planned through (each service alone)
NEAR = (-3, 3, -1, 1)  # then these days either side of the best, each planned through
STACKED = 3  # the days on the start that pay most, each stacked (the best one first)


def tried(
    problem: Problem,
    forced: Sequence[Forced],
    pools: Sequence[Key],
    until: float | None = None,
    passes: int | None = None,
    guess: tuple[float, float] = (0.0, 0.0),
    start: Solution | None = None,
) -> tuple[Solution, Key, int] | None:
    """The cheapest plan found with one unit-package of one of `pools` (best first) bought
    on some day, its pool and day (module docstring); None where none gives a plan.
    `until`: a `time.perf_counter()` past which nothing more is started (the passes stop
    halfway there; each step is timed, and one is not started where the last of its kind,
    at first `guess` (a pass, a plan planned through), would not fit); `passes`: the most
    heuristic passes tried (the finishing steps besides; with `start`, each day's two
    ways count as one). Where no pass can be planned through in time, the cheapest pass
    as it is. `start`: a plan without the package; each day is also tried as `start`
    with the package added and the services that would gain most from its cards
    (`bound.sharers`) replanned on it, one after another."""
    last = {"pass": guess[0], "finish": guess[1], "start": guess[1] / 2}
    now = time.perf_counter()
    # the passes take at most the first half of the time, the finishing steps the rest
    half = None if until is None else now + (until - now) / 2
    ends = {"pass": half, "start": half, "finish": until}

    def room(kind: str, extra: float = 0.0) -> bool:
        end = ends[kind]
        return end is None or time.perf_counter() + last[kind] + extra < end

    sharing = {key: sharers(problem, key) for key in pools[:POOLS]} if start is not None else {}
    start_cost = None if start is None else start.cost(problem)

    def on_start(key: Key, day: int, base: Solution | None = None) -> Solution | None:
        """`base` (default `start`) with one unit-package of `key` bought on `day` and its
        sharers replanned; the step timed (`last["start"]`)."""
        began = time.perf_counter()
        base = start if base is None else base
        assert base is not None
        plan = None
        if package_fits(problem, base, key, day):
            packages = {k: dict(v) for k, v in base.packages.items()}
            packages.setdefault(key, {})[day] = packages.get(key, {}).get(day, 0) + 1
            plan = improved(problem, replace(base, packages=packages), sharing[key])
        last["start"] = time.perf_counter() - began
        return plan

    def day_on_start(key: Key, day: int) -> None:
        """A day tried on the start, kept where it is the cheapest so far (and among the
        days to stack on, where it pays)."""
        plan = on_start(key, day)
        cost = keep(plan, key, day, True)
        tried_on.add((key, day))
        if plan is not None and cost is not None and start_cost is not None and cost < start_cost:
            paying.append((cost, key, day, plan))

    # the heuristic's pass alone on every STEP-th day of each pool: every other one of
    # those days first, the pools in turn, so a short budget spans more of the quarter;
    # the days whose packages lie nearest the middle of the quarter first (a package there
    # holds cards for whole months of every workload active through it)
    length = max((problem.pools[key].days for key in pools[:POOLS]), default=0)
    middle = max(0, (problem.axis.days - length) // 2)
    coarse = [
        (key, day)
        for first in (0, STEP)
        for day in sorted(
            range(first, problem.axis.days, 2 * STEP), key=lambda d: (abs(d - middle), d)
        )
        for key in pools[:POOLS]
    ]
    # the passes and the days on the start: a pass is planned through before it is
    # compared (FINISHED of them, the cheapest first); a day on the start is already
    # planned and competes as it is
    passed: list[tuple[Fraction, Key, int, Solution]] = []
    best: tuple[Fraction, Key, int, bool, Solution] | None = None

    def keep(plan: Solution | None, key: Key, day: int, on: bool) -> Fraction | None:
        """`plan` kept where it is the cheapest so far; its cost (None: no plan)."""
        nonlocal best
        if plan is None:
            return None
        cost = plan.cost(problem)
        if best is None or (cost, key, day, on) < best[:4]:
            best = (cost, key, day, on, plan)
        return cost

    tried_on: set[tuple[Key, int]] = set()
    paying: list[tuple[Fraction, Key, int, Solution]] = []  # days on the start that pay
    for key, day in coarse[:passes]:
        if not room("pass"):
            break
        began = time.perf_counter()
        plan = bought_first(problem, forced, key, day)
        last["pass"] = time.perf_counter() - began
        if plan is not None:
            passed.append((plan.cost(problem), key, day, plan))
        if start is not None and room("start"):
            day_on_start(key, day)
    passed.sort(key=lambda f: f[:3])

    def spare(seconds: float) -> bool:
        """Whether a step of `seconds` still fits in the time left."""
        return ends["finish"] is None or time.perf_counter() + seconds < ends["finish"]

    # (a plan's cost and packages, pool, day): a package tried on that plan that did not pay
    refused: set[tuple[object, Key, int]] = set()

    def stacked(cost: Fraction, plan: Solution) -> Solution:
        """More packages on `plan` (costing `cost`) while one pays: of the pools tried,
        laid end to end with a package it holds (before or after), the earliest first;
        the first that lowers the cost is kept, and the next round starts from it."""
        while True:
            held = (
                cost,
                tuple(sorted((k, tuple(sorted(v.items()))) for k, v in plan.packages.items())),
            )
            beside = sorted(
                {
                    (key, day + step)
                    for key, held in plan.packages.items()
                    if key in sharing
                    for day in held
                    for step in (problem.pools[key].days, -problem.pools[key].days)
                    if 0 <= day + step < problem.axis.days
                },
                key=lambda e: (e[1], e[0]),
            )
            cheaper = None
            for key, day in beside:
                if (held, key, day) in refused:
                    continue
                if not spare(last["start"]):
                    return plan
                more = on_start(key, day, plan)
                if more is not None and more.cost(problem) < cost:
                    cheaper = more
                    break
                refused.add((held, key, day))
            if cheaper is None:
                return plan
            cost, plan = cheaper.cost(problem), cheaper

    done_stacking: set[tuple[Key, int]] = set()  # days on the start stacked already

    def stack() -> None:
        """The best plan stacked (`stacked`), where it holds a day on the start."""
        nonlocal best
        if start is not None and best is not None:
            plan = stacked(best[0], best[4])
            best = (plan.cost(problem), best[1], best[2], best[3], plan)
            if best[3]:  # a day on the start: stacked already
                done_stacking.add((best[1], best[2]))

    def stack_paying() -> None:
        """The days on the start that pay most (`STACKED` of them, the cheapest first),
        each stacked (`stacked`) and kept where it is the cheapest: the cheapest single
        package need not stack best (the 100-workload quarter: alone, a 4090 48G
        machine-month from 12 August beats one from 29 July; each with a second laid end
        to end, 29 July's pair costs 1,221.03 less)."""
        for cost, key, day, plan in sorted(paying, key=lambda f: f[:3])[:STACKED]:
            if (key, day) in done_stacking:
                continue
            if not spare(last["start"]):
                return
            done_stacking.add((key, day))
            keep(stacked(cost, plan), key, day, True)

    # where a day on the start already pays, its packages are stacked first: on a large
    # quarter the passes planned through seldom catch up with it
    if start_cost is not None and best is not None and best[0] < start_cost:
        stack_paying()
    done: set[tuple[Key, int]] = set()

    planned = []  # the passes planned through

    def finish(key: Key, day: int, plan: Solution | None) -> None:
        done.add((key, day))
        # a day not passed yet needs its pass first
        if not room("finish", 0.0 if plan is not None else last["pass"]):
            return
        planned.append((key, day))
        began = time.perf_counter()
        if plan is None:
            plan = bought_first(problem, forced, key, day)
        keep(plan and (improved(problem, plan) or plan), key, day, False)
        last["finish"] = time.perf_counter() - began

    for _, key, day, plan in passed[:FINISHED]:
        finish(key, day, plan)
    if passed and not planned:  # none planned through in time: the cheapest pass as it is
        keep(passed[0][3], passed[0][1], passed[0][2], False)
    if best is None:
        return None

    _, key, centre, on, _ = best
    for offset in NEAR:
        day = centre + offset
        if not 0 <= day < problem.axis.days:
            continue
        if not on and (key, day) not in done:
            finish(key, day, None)
        elif on and (key, day) not in tried_on and spare(last["start"]):
            day_on_start(key, day)
    stack()
    stack_paying()
    assert best is not None
    return best[4], best[1], best[2]
