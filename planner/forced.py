"""Packages that some workloads force: per package pool, the fewest unit-packages that the
train jobs which can run only on that pool need, proven by a small exact CP-SAT solve.

Every plan runs those jobs on that pool, so every plan holds at least those packages: the
count is a valid term of the lower bound (planner.bound), where the solver-free argument
alone sees one job at a time. The sub-problem is the full model restricted to those jobs
and that pool: their configs, windows, durations, setup and stock, with everything else
left out (dropping constraints and other workloads only lowers its optimum, so its proven
bound stays a bound). Storage is left out too: the count is what is wanted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from fractions import Fraction

from planner.cpsat.model import CpModel, SolverSettings
from planner.problem import Job, Problem

Key = tuple[str, str]

# Deterministic time per pool: the forced sub-problems seen so far (q3's 70B continued
# pre-training on the B300 machine; seven B300-only jobs of a generated quarter) are proven
# in well under one unit.
SECONDS_PER_POOL = 2.0


@dataclass(frozen=True)
class Forced:
    """The packages one pool's only-there jobs force, and whether the count is proven
    optimal for them (else it is the sub-problem's proven lower bound)."""

    key: Key
    packages: int  # unit-packages
    jobs: tuple[str, ...]
    exact: bool
    # where a proven optimum places those jobs: (job index, config index, start hour) each,
    # and the unit-packages it buys per local day (a heuristic starts from them)
    placed: tuple[tuple[int, int, int], ...] = ()
    bought: tuple[tuple[int, int], ...] = ()


def forced_packages(
    problem: Problem, seconds: float = SECONDS_PER_POOL, until: float | None = None
) -> dict[Key, Forced]:
    """For each buyable pool without commitments, the unit-packages its only-there jobs
    force (pools where that is 0 are left out). `until`: a `time.perf_counter()` past which
    no further pool is solved (the bound then counts fewer, which stays a bound)."""
    found: dict[Key, Forced] = {}
    for key, pool in sorted(problem.pools.items()):
        if until is not None and time.perf_counter() >= until:
            break
        if not pool.days or pool.committed or not pool.unit_price:
            continue
        jobs = [j for j in problem.jobs if j.configs and all(c.pool == key for c in j.configs)]
        if not jobs:
            continue
        sub = _restricted(problem, key, jobs)
        settings = SolverSettings(seconds, workers=1, seed=0, deterministic=True, portfolio=False)
        status, bound, solution = CpModel(sub).least_cost(settings)
        if status not in ("optimal", "feasible"):
            continue  # infeasible alone is proven elsewhere (planner.explain); no bound here
        money = Fraction(bound, sub.money_scale)
        count = -(-money // pool.unit_price)  # whole unit-packages: ceil
        if count > 0:
            names = tuple(j.name for j in jobs)
            exact = status == "optimal"
            placed: tuple[tuple[int, int, int], ...] = ()
            bought: tuple[tuple[int, int], ...] = ()
            if exact and solution is not None:
                placed = tuple(
                    (job.index, solution.configs[i], solution.starts[i])
                    for i, job in enumerate(jobs)
                )
                bought = tuple(sorted(solution.packages.get(key, {}).items()))
            found[key] = Forced(key, int(count), names, exact, placed, bought)
    return found


def _restricted(problem: Problem, key: Key, jobs: list[Job]) -> Problem:
    """`problem` with only `jobs` (renumbered, no dependencies, no storage) on the pool."""
    renumbered = []
    for i, job in enumerate(jobs):
        configs = tuple(replace(c, job=i, storage_cost=Fraction(0)) for c in job.configs)
        renumbered.append(replace(job, index=i, after=(), configs=configs))
    return replace(
        problem,
        jobs=tuple(renumbered),
        pools={key: problem.pools[key]},
        fixed=(),
        segments=(),
        replica_jobs=(),
        replica_setup={},
    )
