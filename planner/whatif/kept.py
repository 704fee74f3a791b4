"""The base plan kept under a variant: the same orders and placements, except the work of
the workloads the change dropped, so that keeping the plan stays one of the variant's plans
(docs/whatif.md: a dropped workload relaxes the problem, every base plan stays a plan at no
higher cost)."""

from __future__ import annotations

from dataclasses import dataclass

from planner.domain.plan import Plan
from planner.domain.scenario import Scenario
from planner.domain.values import PACKAGE_DAYS

__all__ = ["Kept", "kept_plan"]


@dataclass(frozen=True)
class Kept:
    """The plan as the variant keeps it, and what left it with the dropped workloads."""

    plan: Plan
    workloads: list[str]  # the plan's assignments that left, by the names the plan gives
    rentals: list[str]  # the rental ids that left with them


def kept_plan(base_s: Scenario, variant_s: Scenario, plan: Plan) -> Kept:
    """`plan` (of `base_s`) as a plan of `variant_s`: the assignments of the workloads the
    variant lacks leave (a service with request classes by its classes), and with them the
    hourly and spot rentals that carried them. Those are each a workload's own (docs/rules.md,
    rules 4 and 6: a run or replica on its own rental, billed by the hour, none without one),
    so they go as the work does; one another assignment also lists stays.

    Packages and committed rentals stay, idle where only a dropped workload used them:
    keeping the plan keeps what it ordered, and a package is bought for whole days and paid
    in full whether used or not (rule 5), a commitment is the variant's too. So the plan kept
    costs at most what it did, and passes the variant's rules wherever it passed the base's
    (fewer uses on the same cards). Money lines are left as stated: the checker reprices."""
    names = {w.name for w in variant_s.spec.workloads}
    gone = {w.name for w in base_s.spec.workloads} - names
    dropped = [a for a in plan.assignments if a.workload in gone]
    if not dropped:
        return Kept(plan, [], [])
    staying = [a for a in plan.assignments if a.workload not in gone]
    shared = {r for a in staying for r in a.rentals}
    own = {r for a in dropped for r in a.rentals}
    own |= {r.id for r in plan.rentals if r.workload in gone}
    leaving = [
        r.id
        for r in plan.rentals
        if r.id in own - shared
        and (r.workload is None or r.workload in gone)
        and not r.committed
        and r.mode not in PACKAGE_DAYS
    ]
    left = set(leaving)
    out = plan.model_copy(
        update={
            "rentals": [r for r in plan.rentals if r.id not in left],
            "assignments": staying,
            "attribution": {k: v for k, v in plan.attribution.items() if k not in gone},
            "margins": [m for m in plan.margins if m.workload not in gone],
        }
    )
    return Kept(out, [a.workload for a in dropped], leaving)
