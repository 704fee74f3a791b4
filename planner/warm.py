"""A plan read back as a solution of a problem: the same placements (card, count, offer,
mode, start; replicas per segment; packages bought), priced by that problem's rules.

`plan whatif` uses it to carry one side's plan to the other scenario ("the same plan, except
the change"): where the plan is valid there and cheaper than what that side's own solve
found, it is the better plan of that side, and is shown, checked as always.
"""

from __future__ import annotations

from planner.domain.plan import Plan
from planner.domain.timeaxis import TimeAxisError
from planner.domain.values import PACKAGE_DAYS
from planner.problem import Problem
from planner.solution import Solution


def solution_of(problem: Problem, plan: Plan) -> Solution | None:
    """`plan` as a solution of `problem`, or None where a placement has no config of the
    problem (a workload, offer, mode or count the problem does not have, or a start off its
    grid). Validity is for the checker to judge."""
    axis = problem.axis
    try:
        train = {a.workload: a for a in plan.train}
        configs, starts = [], []
        for job in problem.jobs:
            a = train.get(job.name)
            if a is None:
                return None
            start = axis.hour(a.start)
            found = [
                k
                for k, c in enumerate(job.configs)
                if (c.card, c.cards, c.offer, c.mode, c.held)
                == (a.card, a.cards, a.offer, a.mode, a.held)
                and start in job.start_range(c)
                and start + c.span == axis.hour(a.end)
            ]
            if not found:
                return None
            configs.append(found[0])
            starts.append(start)
        replicas: dict[tuple[int, int, int], int] = {}
        uses = {r.workload: r.uses for r in plan.replica}
        for j, replica_job in enumerate(problem.replica_jobs):
            for u in uses.get(replica_job.name, []):
                place = (u.card, u.cards, u.offer, u.mode, u.held, u.precision)
                k = next(
                    (
                        k
                        for k, c in enumerate(replica_job.configs)
                        if (c.card, c.cards, c.offer, c.mode, c.held, c.precision) == place
                    ),
                    None,
                )
                if k is None:
                    return None
                first, last = axis.hour(u.start), axis.hour(u.end)
                for s, (x, y) in enumerate(problem.segments):
                    if first <= x and y <= last:
                        replicas[(j, k, s)] = replicas.get((j, k, s), 0) + u.replicas
        packages: dict[tuple[str, str], dict[int, int]] = {}
        for r in plan.rentals:
            if r.mode in PACKAGE_DAYS:
                key = (r.offer, r.mode)
                if key not in problem.pools:
                    return None
                day = axis.day_of(axis.hour(r.start))
                if day >= axis.days:
                    continue  # committed packages past the horizon are not bought there
                bought = packages.setdefault(key, {})
                bought[day] = bought.get(day, 0) + r.units
    except TimeAxisError:
        return None
    for key in problem.pools:  # this problem's committed packages are bought, whatever the plan
        for day, units in problem.committed_purchases(key).items():
            bought = packages.setdefault(key, {})
            bought[day] = max(bought.get(day, 0), units)
    return Solution(tuple(configs), tuple(starts), packages, replicas)
