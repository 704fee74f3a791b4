"""The checker: a valid plan passes; break one thing and exactly that violation appears."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from planner.check import check_plan
from planner.domain.plan import Plan
from tests.planning import job, offer, solved

H = dt.timedelta(hours=1)


@pytest.fixture(scope="module")
def case(make_scenario: Any) -> Any:
    offers = [
        offer("o", hourly={"price": 10, "stock": 1}),
        offer("big", card="h200-141g", hourly={"price": 30, "stock": 1}),
    ]
    jobs = [
        job("a", 4, earliest_start="2026-07-01T02:00", deadline="2026-07-02"),
        job("b", 3, after=["a"], deadline="2026-07-02"),
    ]
    s = make_scenario(offers, jobs, days=2)
    result = solved(s)
    assert result.plan is not None
    return s, result.plan


def rules_of(s: Any, plan: Plan) -> list[str]:
    return sorted({v.rule for v in check_plan(s, plan).violations})


def with_assignment(plan: Plan, name: str, **changes: Any) -> Plan:
    assignments = [
        a.model_copy(update=changes) if a.workload == name else a for a in plan.assignments
    ]
    return plan.model_copy(update={"assignments": assignments})


def shifted(plan: Plan, name: str, hours: int) -> Plan:
    """Move a workload and its rental by `hours`, keeping the plan otherwise consistent."""
    a = next(x for x in plan.assignments if x.workload == name)
    runs = [
        r.model_copy(update={"start": r.start + hours * H, "end": r.end + hours * H})
        for r in a.runs
    ]
    plan = with_assignment(plan, name, start=a.start + hours * H, end=a.end + hours * H, runs=runs)
    rentals = [
        r.model_copy(update={"start": r.start + hours * H, "end": r.end + hours * H})
        if r.workload == name
        else r
        for r in plan.rentals
    ]
    return plan.model_copy(update={"rentals": rentals})


def test_the_valid_plan_passes(case: Any) -> None:
    s, plan = case
    result = check_plan(s, plan)
    assert result.ok and money(result.total) == plan.total_cost


def money(value: Any) -> Decimal:
    return Decimal(value.numerator) / Decimal(value.denominator)


def test_a_removed_rental(case: Any) -> None:
    s, plan = case
    broken = plan.model_copy(update={"rentals": plan.rentals[1:]})
    assert "rental" in rules_of(s, broken)


def test_a_wrong_rental_cost(case: Any) -> None:
    s, plan = case
    first = plan.rentals[0]
    rentals = [first.model_copy(update={"cost": first.cost + 1}), *plan.rentals[1:]]
    violations = check_plan(s, plan.model_copy(update={"rentals": rentals})).violations
    assert any(
        v.rule == "cost" and v.subject == plan.rentals[0].id and v.amount == 1 for v in violations
    )


def test_a_start_before_the_earliest(case: Any) -> None:
    s, plan = case
    violations = check_plan(s, shifted(plan, "a", -2)).violations
    early = [v for v in violations if v.rule == "window"]
    assert early and early[0].amount == 2


def test_a_broken_dependency(case: Any) -> None:
    s, plan = case
    a = next(x for x in plan.assignments if x.workload == "a")
    b = next(x for x in plan.assignments if x.workload == "b")
    hours = int((a.end - b.start) / H) - 1  # b starts one hour before a finishes
    violations = check_plan(s, shifted(plan, "b", hours)).violations
    broken = [v for v in violations if v.rule == "dependency"]
    assert broken and broken[0].amount == 1


def test_a_missed_deadline(case: Any) -> None:
    s, plan = case
    b = next(x for x in plan.assignments if x.workload == "b")
    deadline = dt.datetime(2026, 7, 2, tzinfo=b.end.tzinfo)
    late = shifted(plan, "b", int((deadline - b.end) / H) + 5)
    assert [v.amount for v in check_plan(s, late).violations if v.rule == "deadline"] == [5]


def test_stock_over_by_one_unit(case: Any) -> None:
    s, plan = case
    extra = plan.rentals[0].model_copy(update={"id": "extra", "workload": None})
    violations = check_plan(
        s, plan.model_copy(update={"rentals": [*plan.rentals, extra]})
    ).violations
    assert any(v.rule == "stock" and v.amount == 1 for v in violations)


def test_a_card_that_does_not_fit(case: Any) -> None:
    s, plan = case
    broken = with_assignment(plan, "a", card="rtx3090", offer="o")
    assert "config" in rules_of(s, broken)  # o rents a100-80g, not rtx3090


def test_a_missing_workload(case: Any) -> None:
    s, plan = case
    broken = plan.model_copy(update={"assignments": plan.assignments[:1]})
    assert any(
        v.rule == "workload" and "not done" in v.message for v in check_plan(s, broken).violations
    )


def test_a_wrong_total(case: Any) -> None:
    s, plan = case
    broken = plan.model_copy(update={"total_cost": plan.total_cost - Decimal("0.01")})
    violations = check_plan(s, broken).violations
    assert [(v.rule, v.subject) for v in violations] == [("cost", "total")]


def test_memory_over_is_an_amount(make_scenario: Any) -> None:
    # A 7B full fine-tune with mixed-precision AdamW needs ~112 GiB: an H200 only.
    offers = [
        offer("h200", card="h200-141g", hourly={"price": 30}),
        offer("a100", hourly={"price": 10}),
    ]
    full = {
        **job("j", 2),
        "method": "full",
        "recipe": "ddp-adamw",
        "measured": {"card": "h200-141g", "cards": 1, "tokens_per_s": 1000},
    }
    s = make_scenario(offers, [full], days=1)
    plan = solved(s).plan
    assert plan is not None and plan.assignments[0].card == "h200-141g"
    broken = with_assignment(plan, "j", card="a100-80g", offer="a100")
    [memory] = [v for v in check_plan(s, broken).violations if v.rule == "memory"]
    assert memory.unit == "GiB" and 30 < memory.amount < 50
