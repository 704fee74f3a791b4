"""One vocabulary of cost terms (PyPSA's check): on solved random plans, for every paid term
the objective's expression, the model's pricing and the independent checker agree exactly,
and every reported term agrees in the plan's breakdown."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from planner.check import check_plan
from planner.domain.costs import PAID, REPORTED, CostTerm
from planner.pricing import paid_terms, reported_terms
from tests.planning import job, offer, solved
from tests.test_planner_properties import build, instances, mixed, slow


def assert_terms_agree(make_scenario: Any, instance: dict[str, Any]) -> None:
    s = build(make_scenario, instance)
    result = solved(s, 10)
    if result.plan is None:
        return
    assert result.problem is not None and result.solution is not None
    check = check_plan(s, result.plan)
    assert check.ok, check.violations
    model = paid_terms(result.problem, result.solution)
    for term in PAID:
        assert model[term] == check.money[term], term
        if result.terms:  # the objective's own value of the term (absent on a baseline plan)
            assert result.terms[term] == check.money[term], term
    assert sum(model.values(), Fraction(0)) == result.objective == check.total
    reported = reported_terms(result.problem, result.solution)
    assert check.breakdown is not None and result.plan.cost_breakdown == check.breakdown
    for term in REPORTED:
        # the model's closed forms carry float estimates as bounded fractions; the
        # checker's are exact: equal to far below the 0.01 h the breakdown shows
        assert abs(reported[term][0] - check.amounts[term]) < Fraction(1, 10**4), term


@slow
@given(instances(days=3))
def test_every_term_of_train_plans_agrees(make_scenario: Any, instance: dict[str, Any]) -> None:
    assert_terms_agree(make_scenario, instance)


@slow
@given(mixed())
def test_every_term_of_mixed_plans_agrees(make_scenario: Any, instance: dict[str, Any]) -> None:
    assert_terms_agree(make_scenario, instance)


@slow
@given(st.integers(1, 3), st.sampled_from([None, 1, 2]), st.integers(0, 12))
def test_commitments_and_storage_agree(
    make_scenario: Any, units: int, stock: int | None, hours: int
) -> None:
    # a committed daily package and an hourly commitment beside bought capacity and disks
    o = {
        **offer("o", hourly={"price": 10, "stock": stock}, daily={"price": 150}),
        "disk_price_per_gb_month": 72,
    }
    instance = {
        "offers": [o],
        "jobs": [job("a", hours + 1, disk_gb=10), job("b", 3, checkpoint_every="30m")],
        "days": 2,
    }
    s = make_scenario(
        instance["offers"],
        instance["jobs"],
        days=2,
        commitments=[
            {"offer": "o", "mode": "daily", "units": units, "start": "2026-07-01", "count": 1},
            {"offer": "o", "mode": "hourly", "units": 1, "start": "2026-07-02T04:00"},
        ],
    )
    result = solved(s, 10)
    assert result.plan is not None and result.problem is not None
    assert result.solution is not None
    check = check_plan(s, result.plan)
    assert check.ok, check.violations
    model = paid_terms(result.problem, result.solution)
    assert {t: model[t] for t in PAID} == check.money
    assert check.money[CostTerm.COMMITMENT] == 150 * units + 10 * 20  # 04:00 to 24:00 = 20 h
