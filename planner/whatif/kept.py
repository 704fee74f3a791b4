"""The base plan kept under a variant: the same orders and placements, except the work of
the workloads the change dropped, so that keeping the plan stays one of the variant's plans
(docs/whatif.md: a dropped workload relaxes the problem, every base plan stays a plan at no
higher cost)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from planner.domain.money import money
from planner.domain.plan import Plan, Rental
from planner.domain.scenario import Scenario
from planner.domain.values import PACKAGE_DAYS
from planner.problem import commitment_rentals
from planner.solution import committed_rental

__all__ = ["Kept", "kept_plan"]


@dataclass(frozen=True)
class Kept:
    """The plan as the variant keeps it, and what left it with the dropped workloads."""

    plan: Plan
    workloads: list[str]  # the plan's assignments that left, by the names the plan gives
    rentals: list[str]  # the rental ids that left with them
    # a commitment the change adds: the plan's packages it marks committed, and the
    # committed rentals added idle where the plan holds none to mark (by id)
    marked: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


def kept_plan(base_s: Scenario, variant_s: Scenario, plan: Plan) -> Kept:
    """`plan` (of `base_s`) as a plan of `variant_s`: with the committed rentals of a
    commitment the variant adds (`_committed`: its packages marked, else added idle); the
    assignments of the workloads the
    variant lacks leave (a service with request classes by its classes), and with them the
    hourly and spot rentals that carried them. Those are each a workload's own (docs/rules.md,
    rules 4 and 6: a run or replica on its own rental, billed by the hour, none without one),
    so they go as the work does; one another assignment also lists stays.

    Packages and committed rentals stay, idle where only a dropped workload used them:
    keeping the plan keeps what it ordered, and a package is bought for whole days and paid
    in full whether used or not (rule 5), a commitment is the variant's too. So the plan kept
    costs at most what it did, and passes the variant's rules wherever it passed the base's
    (fewer uses on the same cards). Money lines are left as stated: the checker reprices."""
    plan, marked, added = _committed(base_s, variant_s, plan)
    names = {w.name for w in variant_s.spec.workloads}
    gone = {w.name for w in base_s.spec.workloads} - names
    dropped = [a for a in plan.assignments if a.workload in gone]
    if not dropped:
        return Kept(plan, [], [], marked, added)
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
    return Kept(out, [a.workload for a in dropped], leaving, marked, added)


def _committed(
    base_s: Scenario, variant_s: Scenario, plan: Plan
) -> tuple[Plan, list[str], list[str]]:
    """`plan` holding the committed rentals the variant's commitments fix beyond those it
    marks committed already: a package of the plan on the same offer, mode, units and days
    is marked committed (the plan bought it; now it is signed for, at the same price), any
    other is added, idle (the plan does not use it; it is paid in full all the same, and
    counts against stock). Its money is the commitment's; the checker reprices the rest.
    Returns the plan, and the ids of the rentals marked and added."""
    if base_s.spec.commitments == variant_s.spec.commitments:
        return plan, [], []
    axis = variant_s.axis

    def key(r: Rental) -> tuple[str, str, int, int, int]:
        return (r.offer, r.mode, r.units, axis.hour(r.start), axis.hour(r.end))

    fixed = commitment_rentals(variant_s)
    missing = Counter((f.offer, f.mode, f.units, f.start, f.end) for f in fixed) - Counter(
        key(r) for r in plan.rentals if r.committed
    )
    rentals, marked = [], []
    for r in plan.rentals:
        k = None if r.committed or r.mode not in PACKAGE_DAYS else key(r)
        if k is not None and missing[k] > 0:
            missing[k] -= 1
            marked.append(r.id)
            r = r.model_copy(update={"committed": True})
        rentals.append(r)
    ids, added = {r.id for r in rentals}, []
    currency = variant_s.spec.currency
    for f in fixed:
        k = (f.offer, f.mode, f.units, f.start, f.end)
        if missing[k] <= 0:
            continue
        missing[k] -= 1
        n = 1 + sum(1 for i in ids if i.startswith(f"{f.name}#"))
        while f"{f.name}#{n}" in ids:
            n += 1
        offer = variant_s.offers[f.offer]
        rental = committed_rental(f, offer, axis, f"{f.name}#{n}", money(f.cost, currency))
        ids.add(rental.id)
        added.append(rental.id)
        rentals.append(rental)
    return plan.model_copy(update={"rentals": rentals}), marked, added
