"""Rule 5: workloads use a held package's *cards*, so jobs and replicas
smaller than a machine share one."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from planner.check import check_plan
from planner.domain.costs import CostTerm
from tests.planning import job, offer, reserve, solved


def machine(**modes: Any) -> dict[str, Any]:
    """An 8-card a100-80g bare-metal machine: prices per machine."""
    return {**offer("m", **modes), "unit_cards": 8}


def _plan(result: Any) -> Any:
    assert result.plan is not None, result.reasons
    check = check_plan(result.problem.scenario, result.plan)
    assert check.ok, check.violations
    assert check.total == result.objective
    return result.plan


def test_three_reserved_cards_take_one_machine_not_two(make_scenario: Any) -> None:
    # 3 cards all day for one day, from 8-card machines at 100 a day: one machine holds
    # them (a 2-card and a 1-card replica, or three of one): 100, idle 5 cards × 24 h = 120
    # card-hours. Taking whole machines per replica would buy two (200).
    s = make_scenario(
        [machine(daily={"price": 100, "stock": 4})],
        [reserve(cards=3, hours="00:00-24:00")],
        days=1,
    )
    plan = _plan(solved(s))
    assert plan.total_cost == Decimal("100.00")
    assert sum(r.units for r in plan.rentals) == 1
    assert plan.cost_breakdown.reported[CostTerm.IDLE].amount == 5 * 24


def test_two_four_card_jobs_share_one_machine_week(make_scenario: Any) -> None:
    # Each job is 360 card-hours at 1,000 tokens/s per a100 (4 cards: 360 ÷ (4 × e) h with
    # e < 1 the scaling efficiency, about 92 h), due in 7 days (168 h): on 1 or 2 cards it
    # is too slow (360 h, ~185 h), so each takes 4 cards, and one after the other (~184 h)
    # misses the deadline. Both at once on one 8-card machine: one weekly package, 700.
    # Whole machines per job would need two: 1,400.
    jobs = [job(n, 360, max_cards=4, deadline="2026-07-08") for n in ("a", "b")]
    s = make_scenario([machine(weekly={"price": 700, "stock": 2})], jobs, days=7)
    plan = _plan(solved(s))
    assert [a.cards for a in plan.train] == [4, 4]
    assert plan.total_cost == Decimal("700.00")
    a, b = plan.train
    assert a.start < b.end and b.start < a.end  # they run side by side
