"""The plan's views: the order sheet groups rentals into what a person orders, spend by use
spreads each rental over its hours, and cards held and used per pool add up to the plan's
utilisation. Hand-worked instances, and the shipped quarter's plan for the invariants."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from planner.views import _day_ranges, _hour_ranges, order_sheet, pool_hours, spend_by_use
from tests.planning import job, offer, reserve, solved


def test_hour_and_day_ranges_join_across_midnight_and_the_week() -> None:
    assert _hour_ranges([9, 10, 11]) == "09:00–12:00"
    assert _hour_ranges([0, 1, 22, 23]) == "22:00–02:00"
    assert _hour_ranges([3, 8, 9]) == "03:00–04:00, 08:00–10:00"
    assert _hour_ranges(list(range(9, 24))) == "09:00–24:00"
    assert _day_ranges([0, 1, 2, 3, 4]) == "mon-fri"
    assert _day_ranges([0, 5, 6]) == "sat-mon"
    assert _day_ranges([2]) == "wed"


def test_a_desk_on_ten_mornings_is_one_order_line(make_scenario: Any) -> None:
    # one card 09:00-12:00 on each of 10 days, hourly at 10.00: 10 rentals of 3 h, 300.00
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4})],
        [reserve("desk", cards=1, hours="09:00-12:00", days=10)],
    )
    plan = solved(s).plan
    assert plan is not None and len(plan.rentals) == 10
    (line,) = order_sheet(s.axis, plan)
    assert (line.offer, line.mode, line.workload, line.rentals) == ("o", "hourly", "desk", 10)
    assert (line.base_units, line.peak_units, line.hours, line.days) == (0, 1, "09:00–12:00", "")
    assert line.pattern == "up to 1 card at 09:00–12:00"
    assert line.cost == Decimal("300.00")
    assert f"{line.first:%m-%d %H}" == "07-01 09" and f"{line.last:%m-%d %H}" == "07-10 12"


def test_weekday_windows_name_their_days(make_scenario: Any) -> None:
    # 2026-07-01 is a Wednesday: 14 days hold 10 weekdays; 2 cards 09-19 on each
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4})],
        [
            reserve("dev", cards=2, hours="09:00-19:00", days=14)
            | {"days": ["mon", "tue", "wed", "thu", "fri"]}
        ],
        days=14,
    )
    plan = solved(s).plan
    assert plan is not None
    (line,) = order_sheet(s.axis, plan)
    assert line.pattern == "up to 2 cards at 09:00–19:00 mon-fri"
    # 10 weekdays × 2 cards × 10 h × 10.00
    assert line.cost == Decimal("2000.00")


def test_spend_by_use_spreads_a_rental_over_its_months(make_scenario: Any) -> None:
    # a 72-hour job from 2026-07-30 00:00 on one card at 10.00 an hour: 720.00, all of it
    # booked in July as cash; by use, 48 h in July (480.00) and 24 h in August (240.00)
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 1})],
        [job("j", 72, earliest_start="2026-07-30", deadline="2026-08-02")],
        days=5,
        start="2026-07-29",
    )
    plan = solved(s).plan
    assert plan is not None and plan.cost_breakdown is not None
    assert plan.cost_breakdown.by_month == {"2026-07": Decimal("720.00")}
    assert spend_by_use(s.axis, plan) == {
        "2026-07": Decimal("480.00"),
        "2026-08": Decimal("240.00"),
    }


def test_spend_by_use_keeps_the_cash_total_to_the_minor_unit(make_scenario: Any) -> None:
    # 3 h at 3.333333 is 9.999999, billed 10.00; split 2 h / 1 h across the month end the
    # shares are 6.666666 and 3.333333: cut to 6.66 and 3.33 they add to 9.99, and the last
    # minor unit goes to the larger remainder (July)
    s = make_scenario(
        [offer("o", hourly={"price": 3.333333, "stock": 1})],
        [job("j", 3, earliest_start="2026-07-31T22:00", deadline="2026-08-02")],
        days=3,
        start="2026-07-31",
    )
    plan = solved(s).plan
    assert plan is not None and plan.cost_breakdown is not None
    use = spend_by_use(s.axis, plan)
    assert plan.cost_breakdown.by_month == {"2026-07": Decimal("10.00")}
    assert use == {"2026-07": Decimal("6.67"), "2026-08": Decimal("3.33")}


def test_held_cards_per_pool_add_up_to_the_plans_utilisation(q3_plan: Any) -> None:
    scenario, plan = q3_plan
    pools = pool_hours(scenario.axis, plan)
    for card, use in plan.utilisation.items():
        held = sum(sum(p.held) for p in pools if p.card == card)
        used = sum(sum(p.used) for p in pools if p.card == card)
        assert (held, used) == (use.held_card_hours, use.used_card_hours), card
    for p in pools:  # no pool is used beyond what it holds
        assert all(u <= h for h, u in zip(p.held, p.used, strict=True)), (p.card, p.mode)


def test_the_q3_order_sheet_is_short_and_adds_up(q3_plan: Any) -> None:
    scenario, plan = q3_plan
    lines = order_sheet(scenario.axis, plan)
    assert len(lines) < 35  # under one screen with the table's head
    assert sum(line.rentals for line in lines) == len(plan.rentals)
    assert sum(line.cost for line in lines) == plan.total_cost  # rentals and storage
