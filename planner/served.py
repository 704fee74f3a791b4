"""A baseline's plan with each service's and reserve's replicas replaced by its least
schedule alone (planner.rises' program on rented and committed hourly cards, along its
least path): a start for the search that the checker judges like any plan.

Served alone, a service ignores the stock that the train jobs and other services share
and the package cards the baseline holds; where that matters the checker refuses the plan,
or it costs more than the baseline, and the baseline stands. On the generated 30-workload
quarter the heuristic's train jobs with every service's schedule alone cost 76,506.45
(checked), 0.13% above the best plan without optional packages (76,408.93, proven), where
the heuristic costs 79,268.73 and 60 s of search from it had ended at 77,978.13.
"""

from __future__ import annotations

from dataclasses import replace

from planner.bound import Served
from planner.configs import ReplicaConfig
from planner.problem import Problem
from planner.solution import Solution


def with_schedules(problem: Problem, base: Solution, served: Served) -> Solution | None:
    """`base` with the replicas of each replica job in `served` replaced by its schedule
    there (`replicas_of`) where that costs the job less than `base`'s replicas (on held
    cards they cost nothing beyond the packages, which stay bought). None where no job
    changes."""
    replicas = dict(base.replicas)
    changed = False
    for j, job in enumerate(problem.replica_jobs):
        alone = replicas_of(problem, j, served.get(job.name) or {})
        if not alone or sum(replace(base, replicas=alone).replica_money(problem, j)) >= sum(
            base.replica_money(problem, j)
        ):
            continue  # the base serves it for less (its cards held anyway, or a better mix)
        replicas = {key: n for key, n in replicas.items() if key[0] != j}
        replicas.update(alone)
        changed = True
    return replace(base, replicas=replicas) if changed else None


def replicas_of(
    problem: Problem, j: int, schedule: dict[int, dict[ReplicaConfig, int]]
) -> dict[tuple[int, int, int], int] | None:
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
