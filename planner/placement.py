"""Learning what cannot be placed on machines: a no-good per conflict the checker finds.

The model counts cards per pool of held cards at every hour; the checker also places the
work on the pool's machines (`planner.check.machines`). Where counting accepts a plan that
placement refutes, the checker names a smallest set of the pool's work that cannot be
placed together. That set, on the configs and starts the plan gave it, with the units
bought and the replicas carried around it, becomes a `NoGood`; the solver searches again
with it. Each no-good removes only plans that hold at most those units and carry at least
that work at those hours, none of which can be placed, so a plan proven optimal with them
is optimal among the plans that can be placed.
"""

from __future__ import annotations

from dataclasses import replace

from planner.problem import NoGood, Problem
from planner.solution import Solution, to_plan


def nogood(
    problem: Problem, solution: Solution, pool: tuple[str, str], names: tuple[str, ...]
) -> NoGood:
    """The no-good of conflict `names` (train job names, "<service> replicas #i") on `pool`
    in `solution`."""
    trains = set(names)
    served = {n.rsplit(" replicas #", 1)[0] for n in names if " replicas #" in n}
    jobs = []
    spans: list[tuple[int, int]] = []
    for job in problem.jobs:
        if job.name in trains:
            config = solution.config(problem, job.index)
            start = solution.starts[job.index]
            jobs.append((job.name, config, start))
            spans.append((start, start + config.span))
    replicas = []
    hours = _named_uses(problem, solution, names)
    for (j, k, s), count in sorted(solution.replicas.items()):
        replica_job = problem.replica_jobs[j]
        replica = replica_job.configs[k]
        on_pool = replica.held and (replica.offer, replica.mode) == pool
        a, b = problem.segments[s]
        # only the replica uses named in the conflict (their config and hours), where known
        named = hours.get(replica_job.name)
        inside = named is None or any(
            x <= a and b <= y and kind == (replica.card, replica.cards, replica.precision)
            for x, y, kind in named
        )
        if replica_job.name in served and on_pool and count and inside:
            replicas.append((replica_job.name, replica, s, count))
            spans.append(problem.segments[s])
    lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
    packages = []
    if pool in problem.pools and problem.pools[pool].days:
        bought = solution.packages.get(pool, {})
        for day in range(problem.axis.days):
            start, end = problem.package(pool, day)
            if start < hi and end > lo:
                packages.append((day, bought.get(day, 0)))
    return NoGood(pool, tuple(jobs), tuple(replicas), tuple(packages))


def _named_uses(
    problem: Problem, solution: Solution, names: tuple[str, ...]
) -> dict[str, list[tuple[int, int, tuple[str, int, str]]]]:
    """The hours and replica (card, cards, precision) of each use named "<service>
    replicas #i" in a conflict (the checker names the uses of the plan `solution` makes,
    in order), per service; a service whose uses cannot be found is left out (all its
    replicas on the pool then count)."""
    wanted: dict[str, set[int]] = {}
    for n in names:
        if " replicas #" in n:
            service, number = n.rsplit(" replicas #", 1)
            wanted.setdefault(service, set()).add(int(number))
    if not wanted:
        return {}
    plan = to_plan(problem, solution, "feasible")
    out: dict[str, list[tuple[int, int, tuple[str, int, str]]]] = {}
    for a in plan.replica:
        numbers = wanted.get(a.workload, set())
        if not numbers or max(numbers) > len(a.uses):
            continue
        out[a.workload] = [
            (problem.axis.hour(u.start), problem.axis.hour(u.end), (u.card, u.cards, u.precision))
            for i, u in enumerate(a.uses, start=1)
            if i in numbers
        ]
    return out


def with_nogoods(problem: Problem, cuts: list[NoGood]) -> Problem:
    return replace(problem, nogoods=problem.nogoods + tuple(cuts))
