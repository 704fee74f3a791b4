"""What each workload adds to a plan: what the plan would save without it, as a range.

A workload's share of a plan's spend says what it uses, not what it causes: q3's 71-hour
continued pre-training runs only on the B300 machine, so it alone forces a machine month
that the services then fill for little. Its *margin* is what the quarter would cost less
without it. Without workload w the optimum lies between

- the bound of the quarter without w (planner.bound, with the packages only-there jobs
  force, planner.forced), and
- the cheapest checked plan found without w: the heuristic's plan of that quarter, or the
  plan itself less the hourly and spot rentals started for w alone (still a plan: no other
  workload runs on them), whichever is cheaper.

So the plan saves at least `plan − that plan` and at most `plan − that bound`. Each workload
costs one heuristic plan, one check and one bound (seconds, not a solve), so the range is
as wide as those two are apart; the bound's own gap says how wide that can be.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from planner.baseline import greedy
from planner.bound import lower_bound
from planner.domain.plan import Plan
from planner.domain.scenario import Scenario
from planner.forced import forced_packages
from planner.problem import Infeasible, build_problem
from planner.solve import checked_solution


@dataclass(frozen=True)
class Margin:
    """What the plan saves without `workload`: between `at_least` and `at_most`."""

    workload: str
    at_least: Fraction
    at_most: Fraction


def margins(
    scenario: Scenario, plan: Plan, on_workload: Callable[[str], None] | None = None
) -> list[Margin]:
    """Each workload's margin in `plan` (a checked plan of `scenario`), in scenario order.
    `on_workload` is told each name before its margin is priced (progress)."""
    total = Fraction(plan.total_cost)
    out = []
    for workload in scenario.spec.workloads:
        name = workload.name
        if on_workload is not None:
            on_workload(name)
        own = sum((Fraction(r.cost) for r in plan.rentals if r.workload == name), Fraction(0))
        cheapest = total - own
        try:
            problem = build_problem(without(scenario, name), serving=True)
        except Infeasible:  # cannot happen for a planned quarter; no range beyond its own
            out.append(Margin(name, own, total))
            continue
        # the same heuristic and bound as `plan solve`: both start from the forced packages
        forced = forced_packages(problem)
        solution, _ = greedy(problem, careful=True, forced=list(forced.values()))
        found = checked_solution(problem, solution, {}, "heuristic")
        if found is not None:
            cheapest = min(cheapest, found.cost)
        floor = lower_bound(problem, {k: f.packages for k, f in forced.items()}).total
        out.append(
            Margin(name, max(Fraction(0), total - cheapest), max(Fraction(0), total - floor))
        )
    return out


def without(scenario: Scenario, name: str) -> Scenario:
    """`scenario` without workload `name` (jobs that ran after it no longer wait for it)."""
    kept = []
    for w in scenario.spec.workloads:
        if w.name == name:
            continue
        after = getattr(w, "after", ())
        kept.append(
            w.model_copy(update={"after": tuple(a for a in after if a != name)}) if after else w
        )
    spec = scenario.spec.model_copy(update={"workloads": kept})
    models = {k: v for k, v in scenario.models.items() if k != name}
    return scenario.model_copy(update={"spec": spec, "models": models})
