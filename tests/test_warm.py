"""A plan read back as a solution (planner/warm.py), and a what-if side taking the other
side's plan where that is cheaper than what its own solve found."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from planner.cli.variant import crossed
from planner.problem import build_problem
from planner.solution import to_plan
from planner.warm import solution_of
from planner.whatif.compare import Side
from tests.planning import job, offer, reserve, solved


def _scenario(make_scenario: Any, daily: int = 150) -> Any:
    offers = [offer("o", hourly={"price": 10, "stock": 4}, daily={"price": daily, "stock": 1})]
    jobs = [
        job("a", 10, deadline="2026-07-02"),
        job("b", 10, deadline="2026-07-02"),
        reserve("desk", cards=1, hours="09:00-12:00", days=2),
    ]
    return make_scenario(offers, jobs, days=2)


def test_a_plan_reads_back_as_its_own_solution(make_scenario: Any) -> None:
    s = _scenario(make_scenario)
    result = solved(s)
    assert result.plan is not None and result.solution is not None and result.problem is not None
    back = solution_of(result.problem, result.plan)
    assert back is not None
    assert back.cost(result.problem) == result.solution.cost(result.problem) == Fraction(210)
    plan = to_plan(result.problem, back, result.plan.status)
    assert plan.rentals == to_plan(result.problem, result.solution, result.plan.status).rentals


def test_a_plan_of_another_scenario_is_priced_by_this_ones_rules(make_scenario: Any) -> None:
    # the same placements with the daily package at 120 instead of 150: 30 less
    base = _scenario(make_scenario)
    cheaper = _scenario(make_scenario, daily=120)
    plan = solved(base).plan
    assert plan is not None
    problem = build_problem(cheaper, serving=True)
    back = solution_of(problem, plan)
    assert back is not None and back.cost(problem) == Fraction(180)


def test_a_side_takes_the_other_sides_plan_where_it_is_cheaper(make_scenario: Any) -> None:
    base_s, variant_s = _scenario(make_scenario), _scenario(make_scenario, daily=120)
    base = solved(base_s)
    assert base.plan is not None and base.objective == 210
    # a variant side whose solve found only a dearer plan (the all-hourly 260) and a bound
    hourly = _scenario(make_scenario, daily=10_000)
    dear = solved(hourly).plan
    assert dear is not None and dear.total_cost == 260
    # the side's own figures travel with the plan it takes (this one's made up)
    dear = dear.model_copy(update={"bound_without_packages": Decimal(250)})
    variant = Side("variant", "feasible", dear, Fraction(260), Fraction(100))
    base_side = Side("base", "optimal", base.plan, Fraction(210), Fraction(210))
    new_base, new_variant = crossed(base_s, variant_s, [base_side, variant])
    assert new_base is base_side  # proven optimal: kept
    assert new_variant.total == Fraction(180) and new_variant.bound == Fraction(100)
    assert new_variant.plan is not None and new_variant.plan.total_cost == 180
    assert "carried here" in new_variant.plan.baseline_notes["solver"]
    assert new_variant.plan.bound_without_packages == Decimal(250)
