"""One hand-worked instance per constraint and cost term; arithmetic in the comments."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from planner.check import check_plan
from planner.domain.costs import CostTerm
from tests.planning import job, offer, solved

HOURLY = {"price": 10, "stock": 4}


def only(result):  # type: ignore[no-untyped-def]
    assert result.plan is not None, result.reasons
    check = check_plan(result.problem.scenario, result.plan)
    assert check.ok, check.violations
    assert check.total == result.objective  # the checker's total is the solver's objective
    return result.plan


def test_a_90_minute_job_pays_two_hours(make_scenario: Any) -> None:
    # 1.5 h occupies ceil(1.5) = 2 h; billed ceil(max(2, 1) / 1) × 1 = 2 h → 2 × 10 = 20.
    plan = only(solved(make_scenario([offer("o", hourly=HOURLY)], [job("j", 1.5)])))
    assert plan.total_cost == Decimal("20.00")
    assert plan.rentals[0].billed_hours == 2
    assert plan.cost_breakdown.reported[CostTerm.ROUND_UP].amount == 0  # held 2 h, billed 2 h


def test_minimum_and_increment_round_up(make_scenario: Any) -> None:
    # 2 h held; minimum 3 h → billed 3 h; round-up 1 unit-hour, 10 of money.
    hourly = {**HOURLY, "min_hours": 3}
    plan = only(solved(make_scenario([offer("o", hourly=hourly)], [job("j", 2)])))
    assert plan.total_cost == Decimal("30.00")
    assert plan.cost_breakdown.reported[CostTerm.ROUND_UP].amount == 1
    assert plan.cost_breakdown.reported[CostTerm.ROUND_UP].cost == Decimal("10.00")
    # 5 h held, increment 2 h → billed ceil(5 / 2) × 2 = 6 h = 60.
    hourly = {**HOURLY, "increment_hours": 2}
    plan = only(solved(make_scenario([offer("o", hourly=hourly)], [job("j", 5)])))
    assert plan.total_cost == Decimal("60.00")


def test_fourteen_windowed_days_pay_fourteen_rentals(make_scenario: Any) -> None:
    # 14 h a day (08:00-22:00) for 196 h of work = 14 daily rentals of 14 h = 196 × 10.
    windowed = job("j", 196, daily_hours="08:00-22:00", earliest_start="2026-07-02")
    plan = only(solved(make_scenario([offer("o", hourly=HOURLY)], [windowed], days=20)))
    assert len(plan.rentals) == 14
    assert all(r.billed_hours == 14 and r.start.hour == 8 for r in plan.rentals)
    assert plan.total_cost == Decimal("1960.00")


def test_setup_is_paid_per_start_on_hourly(make_scenario: Any) -> None:
    # setup 30 min + 2 h of work → occupied ceil(2.5) = 3 h, billed 3 h = 30.
    o = {**offer("o", hourly=HOURLY), "setup_minutes": 30}
    plan = only(solved(make_scenario([o], [{**job("j", 2), "setup_minutes": None}])))
    assert plan.total_cost == Decimal("30.00")
    assert plan.cost_breakdown.reported[CostTerm.SETUP].amount == 0.5


def test_package_wins_once_use_passes_break_even(make_scenario: Any) -> None:
    # hourly 10; a daily package 200 = 20 h of hourly. A 19 h job rents hourly (190);
    # a 21 h job takes the package (200 < 210) and leaves 3 card-hours idle (3 × 200/24 = 25).
    offers = [offer("o", hourly=HOURLY, daily={"price": 200, "stock": 4})]
    short = only(solved(make_scenario(offers, [job("j", 19)])))
    assert short.total_cost == Decimal("190.00") and short.assignments[0].mode == "hourly"
    long = only(solved(make_scenario(offers, [job("j", 21)])))
    assert long.total_cost == Decimal("200.00") and long.assignments[0].mode == "daily"
    assert long.assignments[0].start.hour == 0  # a package starts at 00:00
    assert long.cost_breakdown.reported[CostTerm.IDLE].amount == 3
    assert long.cost_breakdown.reported[CostTerm.IDLE].cost == Decimal("25.00")
    assert any("o daily" in line and "bought" in line for line in long.decisions)
    assert long.assignments[0].package_share == Decimal("175.00")  # 21 card-hours × 200/24


def test_a_baseline_without_a_plan_says_why(make_scenario: Any) -> None:
    # only a daily package sells these cards: no hourly config exists for the naive plan
    plan = only(
        solved(make_scenario([offer("o", daily={"price": 100, "stock": 1})], [job("j", 5)]))
    )
    assert plan.naive_cost is None
    assert plan.baseline_notes["naive"] == "j has no hourly config (no hourly offer can run it)"
    assert plan.heuristic_cost == Decimal("100.00")
    assert any("j can run on nothing else" in line for line in plan.decisions)


def test_two_jobs_share_one_package(make_scenario: Any) -> None:
    # Two 10 h jobs: hourly 2 × 100 = 200; one daily package (150) holds both, one after
    # the other, on one card: 150.
    offers = [offer("o", hourly=HOURLY, daily={"price": 150, "stock": 1})]
    plan = only(solved(make_scenario(offers, [job("a", 10), job("b", 10)], days=1)))
    assert plan.total_cost == Decimal("150.00")
    assert {a.mode for a in plan.assignments} == {"daily"}
    a, b = sorted(plan.assignments, key=lambda x: x.start)
    assert a.end <= b.start  # one unit held: they cannot overlap


def test_stock_sequences_jobs(make_scenario: Any) -> None:
    # stock 1 unit: two 10 h jobs cannot overlap; within 20 h they run back to back.
    offers = [offer("o", hourly={"price": 10, "stock": 1})]
    plan = only(
        solved(
            make_scenario(
                offers,
                [
                    job("a", 10, deadline="2026-07-01T20:00"),
                    job("b", 10, deadline="2026-07-01T20:00"),
                ],
            )
        )
    )
    starts = sorted(a.start.hour for a in plan.assignments)
    assert starts == [0, 10]


def test_stock_makes_it_infeasible(make_scenario: Any) -> None:
    offers = [offer("o", hourly={"price": 10, "stock": 1})]
    result = solved(
        make_scenario(
            offers,
            [job("a", 10, deadline="2026-07-01T15:00"), job("b", 10, deadline="2026-07-01T15:00")],
        )
    )
    assert result.status == "infeasible" and result.plan is None
    [conflict] = result.conflicts  # the infeasible core names them
    assert (conflict.kind, conflict.workloads) == ("joint", ("a", "b"))


def test_deadline_no_config_is_infeasible_with_reason(make_scenario: Any) -> None:
    result = solved(
        make_scenario([offer("o", hourly=HOURLY)], [job("a", 30, deadline="2026-07-02")])
    )
    assert result.status == "infeasible"
    assert result.reasons[0].startswith("[deadline] a: needs 30 h")


def test_after_waits_for_the_job_before(make_scenario: Any) -> None:
    jobs = [job("a", 5, earliest_start="2026-07-01T03:00"), job("b", 2, after=["a"])]
    plan = only(solved(make_scenario([offer("o", hourly=HOURLY)], jobs)))
    a, b = (next(x for x in plan.assignments if x.workload == n) for n in "ab")
    assert a.start.hour == 3 and b.start >= a.end


def test_spot_rework_and_price(make_scenario: Any) -> None:
    # λ = 0.5/h, checkpoint every 60 min, restart 30 min: useful share 1/(1 + 0.5 × (0.5 + 0.5))
    # = 2/3, so 6 h of work occupies 9 h on spot: 9 × 5 = 45 < 6 × 10 = 60 hourly.
    spot = {"price": 5, "preemptions_per_hour": 0.5, "restart_minutes": 30, "stock": 2}
    offers = [offer("o", hourly=HOURLY, spot=spot)]
    plan = only(solved(make_scenario(offers, [job("j", 6, checkpoint_every="60m")])))
    assert plan.assignments[0].mode == "spot" and plan.total_cost == Decimal("45.00")
    assert plan.cost_breakdown.reported[CostTerm.SPOT_REWORK].amount == 3.0
    # without a checkpoint interval the job is not spot-eligible
    plan = only(solved(make_scenario(offers, [job("j", 6)])))
    assert plan.assignments[0].mode == "hourly" and plan.total_cost == Decimal("60.00")


def test_scaling_loss_is_reported(make_scenario: Any) -> None:
    # measured 1 card; 2 cards keep eff < 1, so two cards cost more: the solver keeps one,
    # unless the deadline forces two. 10 h of work by hour 6 needs 2 cards. The job shards
    # its frozen base (ZeRO-3) and steps on 3,072-token sequences: the weights gathered each
    # step (27 GB and 32 layers × 3 passes of gathers, 0.44 s) take longer than half the
    # step's compute (0.72 s), so two cards lose part of their sum (efficiency 0.90).
    plan = only(
        solved(
            make_scenario(
                [offer("o", hourly=HOURLY)],
                [job("j", 10, max_cards=2, deadline="2026-07-01T07:00", zero=3, seq_len=3072)],
            )
        )
    )
    a = plan.assignments[0]
    assert a.cards == 2
    loss = plan.cost_breakdown.reported[CostTerm.SCALING_LOSS].amount
    assert 1.0 < loss < 1.1  # 10 h ÷ 0.903 − 10 h = 1.07 card-hours


def test_packages_beyond_the_horizon_are_reported(make_scenario: Any) -> None:
    # horizon 3 days; a weekly package (100 < 50 h × 10) bought on day 0 runs 4 days past it.
    offers = [offer("o", hourly=HOURLY, weekly={"price": 100, "stock": 1})]
    plan = only(solved(make_scenario(offers, [job("j", 50)], days=3)))
    assert plan.total_cost == Decimal("100.00")
    assert plan.cost_breakdown.reported[CostTerm.BEYOND_HORIZON].amount == 4 * 24


def test_monthly_spend_books_packages_in_their_start_month(make_scenario: Any) -> None:
    # July 31 00:00 + 30 h crosses into August: a 48 h daily-package plan is 2 packages,
    # one booked in July and one in August.
    offers = [offer("o", hourly=HOURLY, daily={"price": 100, "stock": 1})]
    j = job("j", 30, earliest_start="2026-07-31")
    plan = only(solved(make_scenario(offers, [j], days=40)))
    assert plan.cost_breakdown.by_month == {
        "2026-07": Decimal("100.00"),
        "2026-08": Decimal("100.00"),
    }


def test_commitments_are_paid_and_used(make_scenario: Any) -> None:
    # a committed weekly package (70) from July 1: the 20 h job runs on it for nothing more.
    offers = [offer("o", hourly=HOURLY, weekly={"price": 70, "stock": 2})]
    commitment = [{"offer": "o", "mode": "weekly", "units": 1, "start": "2026-07-01", "count": 1}]
    plan = only(solved(make_scenario(offers, [job("j", 20)], commitments=commitment)))
    assert plan.total_cost == Decimal("70.00")
    assert plan.assignments[0].held and any(r.committed for r in plan.rentals)
    assert plan.cost_breakdown.paid[CostTerm.COMMITMENT] == Decimal("70.00")


def test_storage_bills_the_whole_span(make_scenario: Any) -> None:
    # disk 72 per GB-month of 720 h = 0.1 per GB-hour; 10 GB for a 5 h job = 5.
    o = {**offer("o", hourly=HOURLY), "disk_price_per_gb_month": 72}
    plan = only(solved(make_scenario([o], [job("j", 5, disk_gb=10)])))
    assert plan.total_cost == Decimal("55.00")
    assert plan.cost_breakdown.paid[CostTerm.STORAGE] == Decimal("5.00")


def test_offer_wide_cap_limits_all_modes(make_scenario: Any) -> None:
    # hourly stock 2 and spot stock 2 but at most 1 unit of the offer at once.
    o = {**offer("o", hourly={"price": 10, "stock": 2}), "max_units": 1}
    plan = only(solved(make_scenario([o], [job("a", 5), job("b", 5)])))
    a, b = sorted(plan.assignments, key=lambda x: x.start)
    assert a.end <= b.start


def test_ties_go_to_the_lower_offer_id_and_the_earlier_finish(make_scenario: Any) -> None:
    # Two offers at the same price: only the tie order decides; "a-offer" < "b-offer".
    offers = [offer("b-offer", hourly=HOURLY), offer("a-offer", hourly=HOURLY)]
    plan = only(solved(make_scenario(offers, [job("j", 3)])))
    assert plan.assignments[0].offer == "a-offer"
    assert plan.assignments[0].start.hour == 0  # any start costs the same: the earliest wins


def test_a_rental_and_a_disk_whose_halves_make_a_whole_are_priced_exactly(
    make_scenario: Any,
) -> None:
    # 1 h at 0.50 and 360 GB of disk at 1 per GB-month (0.50 for that hour): 1.00. The
    # solver's money scale must hold each part, not only their sum
    offers = [{**offer("o", hourly={"price": 0.5, "stock": 1}), "disk_price_per_gb_month": 1}]
    result = solved(make_scenario(offers, [job("a", 1, disk_gb=360)], days=1))
    assert result.status == "optimal" and result.plan is not None
    assert str(result.plan.total_cost) == "1.00"
