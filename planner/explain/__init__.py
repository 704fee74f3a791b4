"""Why a scenario has no plan: typed conflicts, each a proof from the estimates and the
rules (one workload alone) or from the solver (several together), with the smallest
relaxations found."""

from __future__ import annotations

from collections.abc import Sequence

from planner.domain.scenario import Scenario
from planner.explain.conflict import Conflict, Relaxation, patched
from planner.explain.joint import joint_conflicts
from planner.explain.replicas import replica_conflicts
from planner.explain.train import train_conflicts
from planner.problem import Job


def alone(scenario: Scenario, jobs: Sequence[Job]) -> list[Conflict]:
    """Every workload that cannot be planned even with nothing else: train jobs given with
    their windows tightened along `after` (`Problem.jobs`, or `Infeasible.jobs`)."""
    return train_conflicts(scenario, jobs) + replica_conflicts(scenario)


__all__ = ["Conflict", "Relaxation", "alone", "joint_conflicts", "patched"]
