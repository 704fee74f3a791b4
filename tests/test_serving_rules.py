"""Serving rules the model used to simplify away, now planned and checked: storage for
replicas and reserved cards (rule 9), `max_cards_per_replica`, setup hours held in stock."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from planner import baseline
from planner.check import check_plan
from planner.check.contract import reserve_demand
from planner.configs import replica_configs
from planner.domain.costs import CostTerm
from planner.domain.errors import LoadError
from planner.domain.workload import ReserveWorkload, ServeWorkload
from planner.problem import build_problem
from planner.serving import reserve_hours
from planner.solve import SolveParams, solve
from tests.planning import job, offer, reserve, service, solved


def _reserve(cards: int, hours: str, **fields: Any) -> dict[str, Any]:
    return reserve("desk", cards, hours, **fields)


def test_reserved_cards_pay_their_disks_while_held(make_scenario: Any) -> None:
    # 2 cards 09:00-12:00, hourly 10, no setup: 2 × 3 h × 10 = 60.00. Disk 72 per GB-month
    # of 720 h, 10 GB per card: 1.00 per card-hour × 6 card-hours = 6.00. Total 66.00.
    o = {**offer("o", hourly={"price": 10}), "disk_price_per_gb_month": 72}
    s = make_scenario([o], [_reserve(2, "09:00-12:00", disk_gb=10)], days=1)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("66.00")
    assert plan.cost_breakdown is not None
    assert plan.cost_breakdown.paid[CostTerm.STORAGE] == Decimal("6.00")
    [desk] = plan.replica
    assert desk.cost == Decimal("66.00")  # its rentals and its disks
    # a plan that leaves the disks out is refused by the checker
    cheap = plan.model_copy(update={"total_cost": Decimal("60.00")})
    assert any(v.subject == "total" for v in check_plan(s, cheap).violations)


def test_setup_hours_are_held_and_stocked(make_scenario: Any) -> None:
    # Setup 60 min: the card serving 09:00-12:00 is rented 08:00-12:00 (4 h = 40.00).
    o = {**offer("o", hourly={"price": 10, "stock": 1}), "setup_minutes": 60}
    s = make_scenario([o], [_reserve(1, "09:00-12:00")], days=1)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("40.00")
    [rental] = plan.rentals
    assert (rental.start.hour, rental.end.hour, rental.billed_hours) == (8, 12, 4)
    # A second reserve 06:00-09:00 is rented 05:00-09:00: its last hour is the first one's
    # setup hour, so stock 1 cannot hold both (a rental serves one workload); stock 2 can.
    early = {**_reserve(1, "06:00-09:00"), "name": "early"}
    assert solved(make_scenario([o], [_reserve(1, "09:00-12:00"), early], days=1)).plan is None
    o2 = {**o, "hourly": {"price": 10, "stock": 2}}
    plan = solved(make_scenario([o2], [_reserve(1, "09:00-12:00"), early], days=1)).plan
    assert plan is not None and plan.total_cost == Decimal("80.00")


def test_max_cards_per_replica_limits_the_configs(make_scenario: Any) -> None:
    serve = service()
    offers = [offer("o", hourly={"price": 10})]
    s = make_scenario(offers, [serve], days=1)
    w = s.workload("chat")
    assert isinstance(w, ServeWorkload)
    assert {c.cards for c in replica_configs(s, w)} == {1, 2, 4, 8}
    limited = make_scenario(offers, [{**serve, "max_cards_per_replica": 1}], days=1)
    w = limited.workload("chat")
    assert isinstance(w, ServeWorkload)
    assert {c.cards for c in replica_configs(limited, w)} == {1}
    plan = solved(limited).plan
    assert plan is not None and all(u.cards == 1 for a in plan.replica for u in a.uses)


def test_a_replica_stays_within_one_node_even_with_a_network(make_scenario: Any) -> None:
    # nodes of 4 cards joined by a 3,200 Gb/s network: the serving estimate times its
    # all-reduces on a node's links, so an 8-card replica across two nodes is no config (it
    # had been one, at the one-node speed), and the checker refuses one stated in a plan
    networked = {
        **offer("o", hourly={"price": 10}),
        "cards_per_node": 4,
        "network": {"kind": "ib", "gbps": 3200},
    }
    s = make_scenario([networked], [service()], days=1)
    w = s.workload("chat")
    assert isinstance(w, ServeWorkload)
    assert {c.cards for c in replica_configs(s, w)} == {1, 2, 4}
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    [use] = plan.replica[0].uses[:1]
    wide = plan.replica[0].model_copy(update={"uses": [use.model_copy(update={"cards": 8})]})
    tampered = plan.model_copy(update={"replica": [wide], "assignments": [wide]})
    said = [v.message for v in check_plan(s, tampered).violations if v.rule == "config"]
    assert "8 card(s) do not fit one 4-card node of o" in said


def test_baselines_hold_replica_setup_hours_too(make_scenario: Any) -> None:
    # Stock 1, setup 30 min: the reserve's card is rented 08:00-12:00 (setup 08:00-09:00),
    # so a 9-hour job cannot run 00:00-09:00 beside it; the baselines place it at 12:00.
    o = {**offer("o", hourly={"price": 10, "stock": 1}), "setup_minutes": 30}
    s = make_scenario([o], [job("j", 9, setup_minutes=0), _reserve(1, "09:00-12:00")], days=1)
    plan = solved(s).plan
    assert plan is not None and plan.baseline_notes == {}
    # reserve: 4 h billed; job: 9 h → 130.00, for the optimum and both baselines
    assert plan.total_cost == plan.naive_cost == plan.heuristic_cost == Decimal("130.00")


def _committed_hourly(units: int) -> list[dict[str, Any]]:
    return [{"offer": "o", "mode": "hourly", "units": units, "start": "2026-07-01"}]


def test_reserved_cards_use_committed_hourly_units_first(make_scenario: Any) -> None:
    # 1 committed hourly unit all day: 24 h × 10 = 240.00, paid whatever happens. A reserve
    # of 1 card all day runs on it and pays nothing more: total 240.00 (it was billed
    # hourly again on top of the commitment).
    o = offer("o", hourly={"price": 10, "stock": 2})
    s = make_scenario([o], [_reserve(1, "00:00-24:00")], days=1, commitments=_committed_hourly(1))
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("240.00")
    [desk] = plan.replica
    assert [u.held for u in desk.uses] == [True] and desk.cost == 0
    assert plan.cost_breakdown is not None
    assert plan.cost_breakdown.reported[CostTerm.IDLE].amount == 0


def test_two_reserved_cards_with_one_committed_are_feasible(make_scenario: Any) -> None:
    # 2 cards all day, 1 committed unit (240.00) and 1 rented unit 24 h × 10 = 240.00:
    # 480.00 (it was reported as proven infeasible: replicas were capped at the commitment).
    o = offer("o", hourly={"price": 10, "stock": 2})
    s = make_scenario([o], [_reserve(2, "00:00-24:00")], days=1, commitments=_committed_hourly(1))
    result = solved(s)
    assert result.plan is not None and result.plan.total_cost == Decimal("480.00")
    [desk] = result.plan.replica
    assert sorted(u.held for u in desk.uses) == [False, True]
    # stock 1 cannot hold the commitment and a rental at once: truly infeasible now
    tight = offer("o", hourly={"price": 10, "stock": 1})
    s = make_scenario(
        [tight], [_reserve(2, "00:00-24:00")], days=1, commitments=_committed_hourly(1)
    )
    assert solved(s).status == "infeasible"


def test_the_heuristic_serves_on_committed_package_cards(make_scenario: Any) -> None:
    # 1 weekly unit committed for two weeks (2 × 1,000.00) and a reserve of 1 card all
    # day for 10 days: the committed card carries it, so the heuristic plan costs the
    # commitment alone, 2,000.00, as the optimum does (it bought 10 daily packages on top,
    # 4,000.00, and the plan showed a saving of 2,000.00 against it)
    o = offer(
        "o",
        hourly={"price": 10, "stock": 4},
        daily={"price": 200, "stock": 4},
        weekly={"price": 1000, "stock": 4},
    )
    committed = [{"offer": "o", "mode": "weekly", "units": 1, "start": "2026-07-01"}]
    s = make_scenario([o], [_reserve(1, "00:00-24:00", days=10)], days=10, commitments=committed)
    problem = build_problem(s, serving=True)
    heuristic, _ = baseline.greedy(problem, careful=True)
    assert heuristic is not None and heuristic.cost(problem) == 2000 * problem.money_scale
    naive, _ = baseline.greedy(problem, careful=False)
    assert naive is not None and naive.cost(problem) > heuristic.cost(problem)
    result = solved(s)
    assert result.plan is not None and result.plan.total_cost == Decimal("2000.00")


def test_the_heuristic_buys_the_base_package_that_costs_least_over_its_days(
    make_scenario: Any,
) -> None:
    # A reserve of 1 card all day for 10 days. Monthly (2,400.00, 30 days) is the cheapest
    # per hour but one costs as much as the 10 days hourly (240 h × 10); two weekly units
    # cost 2,000.00, which a careful person buys. (The optimum, a week and 72 h hourly,
    # 1,720.00, is the search's.)
    o = offer(
        "o",
        hourly={"price": 10, "stock": 4},
        weekly={"price": 1000, "stock": 4},
        monthly={"price": 2400, "stock": 4},
    )
    s = make_scenario([o], [_reserve(1, "00:00-24:00", days=10)], days=10)
    problem = build_problem(s, serving=True)
    heuristic, _ = baseline.greedy(problem, careful=True)
    assert heuristic is not None and heuristic.cost(problem) == 2000 * problem.money_scale


def _curve(levels: dict[str, int]) -> dict[str, Any]:
    """`service()` for one day, no replica required where its demand is 0."""
    return service(concurrency=levels, min_replicas=0, max_cards_per_replica=1)


def _round_up(plan: Any) -> Decimal:
    assert plan.cost_breakdown is not None
    return Decimal(plan.cost_breakdown.reported[CostTerm.ROUND_UP].amount)


def test_one_replica_for_20_hours_on_a_two_hour_minimum(make_scenario: Any) -> None:
    # One a100 replica carries 100 requests. 50 in flight 02:00-22:00 is one replica for
    # 20 h: billed 20 h at 10/h = 200.00, nothing rounded up by the 2 h minimum.
    two = offer("two", hourly={"price": 10, "min_hours": 2})
    s = make_scenario([two], [_curve({"00-02": 0, "02-22": 50, "22-24": 0})], days=1)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("200.00")
    assert _round_up(plan) == 0
    # A second replica for one hour at 10:00 and one at 15:00: each rise starts a rental and
    # each fall ends the oldest, so the 02:00 rental ends at 11:00 (9 h), the 10:00 one at
    # 16:00 (6 h), the 15:00 one serves to 22:00 (7 h): 22 h billed, 220.00, no round-up.
    # Billing each hour's extra replica alone would pay 2 + 2 h at the minimum: 240.00.
    levels = {"00-02": 0, "02-10": 50, "10-11": 150, "11-15": 50, "15-16": 150}
    s = make_scenario([two], [_curve({**levels, "16-22": 50, "22-24": 0})], days=1)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("220.00")
    assert sorted(r.billed_hours for r in plan.rentals) == [6, 7, 9]


def test_a_minimum_is_paid_where_nothing_older_can_stop(make_scenario: Any) -> None:
    # One replica 10:00-11:00 and one 12:00-13:00 (nothing else) on a 2 h minimum at 10/h:
    # holding it 10:00-13:00 costs 30.00, two rentals 2 h each would cost 40.00.
    two = offer("two", hourly={"price": 10, "min_hours": 2})
    near = {"00-10": 0, "10-11": 50, "11-12": 0, "12-13": 50, "13-24": 0}
    plan = solved(make_scenario([two], [_curve(near)], days=1)).plan
    assert plan is not None and plan.total_cost == Decimal("30.00")
    # 10:00-11:00 and 15:00-16:00: holding through costs 60.00, two rentals billed at the
    # minimum 40.00, of which 2 h (20.00) is round-up, reported and checked.
    far = {"00-10": 0, "10-11": 50, "11-15": 0, "15-16": 50, "16-24": 0}
    plan = solved(make_scenario([two], [_curve(far)], days=1)).plan
    assert plan is not None and plan.total_cost == Decimal("40.00")
    assert [r.billed_hours for r in plan.rentals] == [2, 2] and _round_up(plan) == 2


def test_a_fractional_minimum_after_setup_is_exact(make_scenario: Any) -> None:
    # Minimum 2.5 h in 0.5 h steps, setup 60 min held before serving: a card reserved
    # 09:00-10:00 is rented 08:00-10:00 (2 h held) and billed 2.5 h at 10/h = 25.00.
    # Against it, an offer billed by the hour at 13/h: 2 h = 26.00. The cheaper is chosen.
    half = {
        **offer("half", hourly={"price": 10, "min_hours": 2.5, "increment_hours": 0.5}),
        "setup_minutes": 60,
    }
    dear = {**offer("dear", hourly={"price": 13}), "setup_minutes": 60}
    plan = solved(make_scenario([half, dear], [_reserve(1, "09:00-10:00")], days=1)).plan
    assert plan is not None and plan.total_cost == Decimal("25.00")
    [rental] = plan.rentals
    assert (rental.offer, rental.billed_hours) == ("half", Decimal("2.5"))
    # two hours 09:00-11:00: 3 h held, no round-up, 30.00 against 39.00
    plan = solved(make_scenario([half, dear], [_reserve(1, "09:00-11:00")], days=1)).plan
    assert plan is not None and plan.total_cost == Decimal("30.00")


def test_billing_in_steps_that_divide_the_hour_is_exact(make_scenario: Any) -> None:
    # Billing by 6 minutes (increment 0.1 h, minimum 0.1 h) of whole held hours bills those
    # hours: 09:00-12:00 on one card at 10/h = 30.00, checked.
    tenth = offer("m", hourly={"price": 10, "min_hours": 0.1, "increment_hours": 0.1})
    result = solved(make_scenario([tenth], [_reserve(1, "09:00-12:00")], days=1))
    assert result.plan is not None and result.plan.total_cost == Decimal("30.00")


def test_a_pool_with_no_stock_does_not_make_a_feasible_plan_infeasible(
    make_scenario: Any,
) -> None:
    # 6 reserved cards weekdays 09:00-19:00 for 5 days on an hourly offer of stock 6 (10/h),
    # beside an 8-card machine sold monthly with stock 0: 6 cards × 10 h × 5 days = 300
    # card-hours + 6 setups of 1 h on the first morning... each morning's rise: 6 × 1 h × 5
    # = 30 more: 330 × 10 = 3,300. CP-SAT 9.14-9.15 called this infeasible when the empty
    # pool was a cumulative of capacity 0 (found by the explanation's relaxed example).
    hourly = {**offer("h", hourly={"price": 10, "stock": 6}), "setup_minutes": 60}
    machine = {**offer("m", monthly={"price": 1000, "stock": 0}), "unit_cards": 8}
    desks = reserve(cards=6, hours="09:00-19:00", days=5, setup_minutes=None)
    s = make_scenario([hourly, machine], [desks], days=5)
    for workers in (1, 2, 4):
        result = solve(s, SolveParams(time_limit=10, workers=workers, deterministic=True))
        assert result.plan is not None, (workers, result.reasons)
        assert result.plan.total_cost == Decimal("3300.00")


def test_the_naive_plan_serves_on_the_cheapest_config_for_its_own_curve(
    make_scenario: Any,
) -> None:
    # 10 requests in flight all day: one a100-80g replica (100 in flight, 10.00/h) carries
    # them for 24 × 10 = 240.00; an h200 replica carries 220 at 21.00/h, less per request in
    # flight (0.095 against 0.10) but 504.00 for this curve. The naive plan is "each on its
    # cheapest feasible hourly config": the a100's
    offers = [offer("a", hourly={"price": 10}), offer("h", card="h200-141g", hourly={"price": 21})]
    plan = solved(make_scenario(offers, [service(end="2026-07-02")], days=1)).plan
    assert plan is not None
    assert plan.naive_cost == plan.total_cost == Decimal("240.00")


def test_the_heuristic_moves_to_the_next_offer_where_stock_runs_out(
    make_scenario: Any,
) -> None:
    # 2 reserved cards 09:00-12:00: "cheap" (10/h) has stock 1, "dear" (12/h) stock 2.
    # The naive plan takes the cheapest offer and stops where its stock runs out; the
    # heuristic, like a careful person, moves to the next: 2 × 3 h × 12 = 72.00. The
    # optimum mixes them: 3 h × 10 + 3 h × 12 = 66.00.
    offers = [
        offer("cheap", hourly={"price": 10, "stock": 1}),
        offer("dear", hourly={"price": 12, "stock": 2}),
    ]
    plan = solved(make_scenario(offers, [_reserve(2, "09:00-12:00")], days=1)).plan
    assert plan is not None
    assert plan.naive_cost is None and "stock of cheap" in plan.baseline_notes["naive"]
    assert plan.heuristic_cost == Decimal("72.00")
    assert plan.total_cost == Decimal("66.00")


def test_the_heuristic_serves_from_idle_cards_of_a_package_a_job_bought(
    make_scenario: Any,
) -> None:
    # A 5 h job: hourly 5 × 100 = 500, a daily package 300, so it takes the package. People
    # need 1 card 09:00-11:00: 200 hourly. Serving first, the heuristic rents them (a
    # package for 2 h is dearer) and the job then buys its package: 500. Train jobs first,
    # the job's package is held all day and the people use its idle card: 300, the optimum.
    offers = [offer("o", hourly={"price": 100, "stock": 2}, daily={"price": 300, "stock": 1})]
    s = make_scenario(offers, [job("j", 5), _reserve(1, "09:00-11:00")], days=1)
    problem = build_problem(s, serving=True)
    serving_first, _ = baseline._greedy(problem, careful=True, trains_first=False)
    assert serving_first is not None and serving_first.cost(problem) == 500
    plan = solved(s).plan
    assert plan is not None
    assert plan.heuristic_cost == Decimal("300.00") == plan.total_cost


def test_package_commitments_on_one_day_add_up_and_none_may_start_past_the_horizon(
    make_scenario: Any,
) -> None:
    # Two daily commitments of 1 unit on the same day are 2 units bought (200.00), not 1
    # (found by a review: the model bought the larger of the two and the
    # checker refused the plan). Packages that would start past the horizon end are refused
    # by name (they crashed the model).
    o = offer("o", hourly={"price": 10}, daily={"price": 100}, weekly={"price": 300})
    same_day = [
        {"offer": "o", "mode": "daily", "units": 1, "start": "2026-07-01", "count": 1},
        {"offer": "o", "mode": "daily", "units": 1, "start": "2026-07-01", "count": 1},
    ]
    plan = solved(make_scenario([o], [job("j", 5)], days=2, commitments=same_day)).plan
    assert plan is not None and plan.total_cost == Decimal("200.00")
    for mode, count, fit in (("daily", 3, 1), ("weekly", 2, 1)):
        past = [{"offer": "o", "mode": mode, "units": 1, "start": "2026-07-02", "count": count}]
        with pytest.raises(LoadError) as refused:
            make_scenario([o], [job("j", 5)], days=2, commitments=past)
        text = str(refused.value)
        assert "commitments[0].count" in text and f"at most {fit} fit" in text
        # said as docs/scenarios.md ("Commitments") says it; rule 8 says nothing of it
        assert "every package must start before the horizon end" in text
        assert "rule 8" not in text


def test_the_heuristic_serves_nights_on_a_small_replica_and_days_on_a_large_one(
    make_scenario: Any,
) -> None:
    # A 70B model in FP8 on H200s at 10 an hour per card: one card carries 45 requests, two
    # in tensor parallel 145. 45 requests at night and 145 by day: one card all night and
    # two cards all day cost 12 × 10 + 12 × 20 = 360; one config all day costs more (1-card:
    # 12 × 10 + 12 × 4 × 10 = 600; 2-card: 24 × 20 = 480). The heuristic mixes, as a
    # careful person would, and that is the optimum.
    o = offer("o", card="h200-141g", hourly={"price": 10, "stock": 16})
    chat = service(model="llama-3.1-70b", precision="fp8", concurrency={"00-12": 45, "12-24": 145})
    s = make_scenario([o], [chat], days=1)
    capacities = {
        c.cards: c.capacity for c in build_problem(s, serving=True).replica_jobs[0].configs
    }
    assert capacities[1] == 45 and capacities[2] == 145  # the premise, from the estimates
    plan = solved(s).plan
    assert plan is not None
    assert plan.heuristic_cost == Decimal("360.00") == plan.total_cost


def test_a_window_opened_before_the_reserves_start_is_not_needed(make_scenario: Any) -> None:
    # From Wed 07-01, a 22:00-06:00 window on Wednesdays and Fridays, the reserve from Thu 07-02
    # to Sat 07-04. Wednesday's window opened the day before the start: its tail 07-02
    # 00:00-06:00 is Wednesday's, so not needed. Friday's opens 07-03 22:00 and the reserve
    # ends at 07-04 00:00: 2 h × 10 = 20.00, in the model and in the checker.
    night = {
        **_reserve(1, "22:00-06:00"),
        "days": ["wed", "fri"],
        "start": "2026-07-02",
        "end": "2026-07-04",
    }
    s = make_scenario([offer("o", hourly={"price": 10})], [night], days=5)
    workload = s.spec.workloads[0]
    assert isinstance(workload, ReserveWorkload)
    needed = [h for h, n in enumerate(reserve_hours(s, workload)) if n]
    assert [s.axis.text(h)[:16] for h in (needed[0], needed[-1])] == [
        "2026-07-03 22:00",
        "2026-07-03 23:00",
    ]
    assert reserve_demand(s, workload) == reserve_hours(s, workload)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("20.00")
