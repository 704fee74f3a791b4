"""Hourly replica rentals billed in steps that do not divide the hour (rule 6 as rule 4),
exactly: a rental's round-up depends on its length, so the model follows where each
rental started (docs/rules.md, "Billing steps of replicas").

Per rented config with a stepped rate, the replicas held in a segment are split into
*cohorts* (the rentals started at one segment, while ending would still pay the minimum
or break a min hold) and *pools* (the older ones, one per start phase: start hour modulo
the step's numerator).
A cohort's ends cost `ReplicaRate.extra` of their exact length; a pool's ends at an hour
cost `ReplicaRate.settled` of their residue, the same for every rental in the pool. Every
pairing of starts with ends is one assignment of these counts and back, so the cheapest
assignment bills what the cheapest pairing bills.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from ortools.sat.python import cp_model

from planner.cpsat.variables import Ends, Pools, Variables, replica_bound
from planner.problem import Problem
from planner.solution import Solution

Count = cp_model.LinearExpr | int  # a count of rentals: a variable, an expression, or 0


def bill_steps(model: cp_model.CpModel, problem: Problem, v: Variables) -> None:
    """Cohorts and pools for every rented replica config whose rate is stepped."""
    for j, job in enumerate(problem.replica_jobs):
        for k, config in enumerate(job.configs):
            if config.rented and problem.replica_rate(job.name, config).stepped:
                v.steps.append(_pools(model, problem, v, j, k))


def _pools(model: cp_model.CpModel, problem: Problem, v: Variables, j: int, k: int) -> Pools:
    job = problem.replica_jobs[j]
    config = job.configs[k]
    rate = problem.replica_rate(job.name, config)
    segments = problem.segments
    last = len(segments) - 1
    horizon_end = segments[-1][1]
    pools = Pools(j, k)
    parts: dict[int, list[Count]] = defaultdict(list)  # segment → held
    joining: dict[tuple[int, int], list[Count]] = defaultdict(list)

    def held(s: int, name: str, below: Count) -> cp_model.IntVar | int:
        """A new count ≤ `below` for segment s, or 0 where the config holds nothing."""
        if (j, k, s) not in v.replicas:
            return 0
        count = model.new_int_var(0, replica_bound(job, config, s), f"{name}[{j},{k},{s}]")
        model.add(count <= below)
        return count

    def end(count: Count, hours: Fraction) -> None:
        if hours and not isinstance(count, int):
            v.ends.append(Ends(count, j, k, hours))

    for u in range(len(segments)):
        up = v.starts.get((j, k, u))
        if up is None:
            continue
        a = segments[u][0]
        joined = rate.joins(segments, u)
        cohort: Count = up  # its starts: hinted as such
        for s in range(u, min(joined, last + 1)):
            parts[s].append(cohort)
            if s == last:
                end(cohort, rate.extra(horizon_end - a))
                break
            after = held(s + 1, "cohort", cohort)
            if not isinstance(after, int):
                pools.cohorts[(u, s + 1)] = after
            if not rate.may_end(a, segments[s + 1][0]):  # under its min hold
                model.add(after == cohort)
            end(cohort - after, rate.extra(segments[s + 1][0] - a))
            cohort = after
        else:
            if joined <= last:
                joining[(a % rate.phases, joined)].append(cohort)
    starts = [u for u in range(len(segments)) if (j, k, u) in v.starts]
    phases = sorted({segments[u][0] % rate.phases for u in starts})
    for phase in phases:  # a pool per phase some rental can start in
        pool: Count = 0
        for s, (a, _) in enumerate(segments):
            survivors = held(s, f"pool{phase}", pool) if not isinstance(pool, int) else 0
            if not isinstance(survivors, int):
                pools.survivors[(phase, s)] = survivors
            end(pool - survivors, rate.settled(a - phase))
            pool = survivors + sum(joining[(phase, s)])
            parts[s].append(pool)
        end(pool, rate.settled(horizon_end - phase))
    for s in range(len(segments)):
        if (j, k, s) in v.replicas:
            model.add(v.replicas[(j, k, s)] == sum(parts[s]))
    return pools


def hint(model: cp_model.CpModel, problem: Problem, v: Variables, solution: Solution) -> None:
    """Hint cohorts and pools from the cheapest rentals of the solution's count series: each
    rental counts in its cohort from its second segment up to the one it joins its pool
    at, and in its pool's survivors after that, while it is held."""
    segments = problem.segments
    index = {a: s for s, (a, _) in enumerate(segments)}
    for pools in v.steps:
        job = problem.replica_jobs[pools.job]
        rate = problem.replica_rate(job.name, job.configs[pools.config])
        cohorts: dict[tuple[int, int], int] = defaultdict(int)
        survivors: dict[tuple[int, int], int] = defaultdict(int)
        for a, b in rate.rentals(solution.series(problem, pools.job, pools.config), segments):
            u = index[a]
            joined = rate.joins(segments, u)
            for s in range(u + 1, len(segments)):
                if segments[s][0] >= b:
                    break
                if s <= joined:
                    cohorts[(u, s)] += 1
                else:
                    survivors[(a % rate.phases, s)] += 1
        for key, count in pools.cohorts.items():
            model.add_hint(count, cohorts.get(key, 0))
        for key, count in pools.survivors.items():
            model.add_hint(count, survivors.get(key, 0))
