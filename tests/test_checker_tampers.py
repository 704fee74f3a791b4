"""Tampered plans the first checker accepted, and legal plans the model never writes: the
independent checker rejects the first by the rule broken and accepts the second."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from planner.check import check_plan
from planner.domain.costs import CostTerm
from planner.domain.plan import Plan, Rental
from tests.planning import job, offer, reserve, solved, train_of, with_assignment

H = dt.timedelta(hours=1)


def _rental(plan: Plan, rental_id: str) -> Rental:
    return next(r for r in plan.rentals if r.id == rental_id)


def test_two_concurrent_runs_cannot_share_one_rental(make_scenario: Any) -> None:
    # Stock 1: a (3 h) and b (3 h) run one after the other, 2 rentals, 60.00. Tampered: b
    # runs beside a on a's rental, b's own rental deleted, total 30.00.
    s = make_scenario([offer("o", hourly={"price": 10, "stock": 1})], [job("a", 3), job("b", 3)])
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("60.00")
    a, b = train_of(plan, "a"), train_of(plan, "b")
    runs = [r.model_copy() for r in a.runs]
    tampered = with_assignment(plan, "b", start=a.start, end=a.end, runs=runs, rentals=a.rentals)
    tampered = tampered.model_copy(
        update={
            "rentals": [r for r in plan.rentals if r.id not in b.rentals],
            "total_cost": Decimal("30.00"),
        }
    )
    violations = check_plan(s, tampered).violations
    assert any(v.rule == "rental" and v.subject == "b" for v in violations)


def test_a_train_job_cannot_run_on_a_reserve_rental(make_scenario: Any) -> None:
    # A reserve holds one a100 09:00-12:00 on its own hourly rental; a 3-hour job pointed at
    # that rental instead of its own is caught, however the money is restated.
    s = make_scenario([offer("o", hourly={"price": 10})], [job("a", 3), reserve()], days=1)
    plan = solved(s).plan
    assert plan is not None
    desk = next(r for r in plan.rentals if r.workload == "desk")
    a = train_of(plan, "a")
    at = desk.start
    tampered = with_assignment(
        plan,
        "a",
        start=at,
        end=at + 3 * H,
        runs=[a.runs[0].model_copy(update={"start": at, "end": at + 3 * H})],
        rentals=[desk.id],
    )
    tampered = tampered.model_copy(
        update={"rentals": [r for r in plan.rentals if r.id not in a.rentals]}
    )
    violations = check_plan(s, tampered).violations
    assert any(v.rule == "rental" and v.subject == "a" for v in violations)


def test_a_deleted_breakdown_is_rejected(make_scenario: Any) -> None:
    s = make_scenario([offer("o", hourly={"price": 10})], [job("a", 3)], days=1)
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    violations = check_plan(s, plan.model_copy(update={"cost_breakdown": None})).violations
    assert [(v.rule, v.subject) for v in violations] == [("cost", "cost_breakdown")]


def test_a_deleted_rental_is_named_as_missing_and_its_lines_read_as_money(
    make_scenario: Any,
) -> None:
    # the job's rental taken out of the plan: its run has no rental, the assignment lists
    # one the plan does not have (not "one time more than the runs it carries"), and the
    # breakdown lines say money, not reprs
    s = make_scenario([offer("o", hourly={"price": 10})], [job("a", 3)], days=1)
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    [rental] = plan.rentals
    violations = check_plan(s, plan.model_copy(update={"rentals": []})).violations
    said = [f"{v.rule} {v.subject}: {v.message}" for v in violations]
    assert f"rental a: lists rental {rental.id}, which is not among the plan's rentals" in said
    assert not any("time(s) more than" in line for line in said)
    assert "cost cost_breakdown.total: states 30.00, recomputed 0.00" in said
    assert "cost cost_breakdown.by_month.2026-07: states 30.00, recomputed no line" in said


def test_a_breakdown_line_off_is_a_violation_of_the_difference(make_scenario: Any) -> None:
    # min_hours 3: a 1-hour job is billed 3 h = 30.00, 2 unit-hours of round-up costing
    # 20.00. Breakdown lines edited: the total by +5.00 (money, in the plan's currency),
    # round-up's hours by -1.5 (unit-hours), idle's cost alone by +7.00 (money).
    s = make_scenario([offer("o", hourly={"price": 10, "min_hours": 3})], [job("a", 1)], days=1)
    plan = solved(s).plan
    assert plan is not None and plan.cost_breakdown is not None
    b = plan.cost_breakdown
    round_up, idle = b.reported[CostTerm.ROUND_UP], b.reported[CostTerm.IDLE]
    assert round_up.amount == 2 and round_up.cost == Decimal("20.00")
    edited = {
        CostTerm.ROUND_UP: round_up.model_copy(update={"amount": Decimal("0.5")}),
        CostTerm.IDLE: idle.model_copy(update={"cost": (idle.cost or 0) + Decimal(7)}),
    }
    tampered = plan.model_copy(
        update={
            "cost_breakdown": b.model_copy(
                update={"total": b.total + 5, "reported": {**b.reported, **edited}}
            )
        }
    )
    found = {
        v.subject: (v.amount, v.unit)
        for v in check_plan(s, tampered).violations
        if v.subject.startswith("cost_breakdown")
    }
    money = s.spec.currency
    assert found == {
        "cost_breakdown.total": (5.0, money),
        "cost_breakdown.reported.round_up": (-1.5, "unit-hours"),
        "cost_breakdown.reported.idle": (7.0, money),
    }
    # setup carries no cost; one stated as 0.00 differs by being there: 1, no unit
    setup = b.reported[CostTerm.SETUP]
    assert setup.cost is None
    costed = {**b.reported, CostTerm.SETUP: setup.model_copy(update={"cost": Decimal(0)})}
    extra = plan.model_copy(update={"cost_breakdown": b.model_copy(update={"reported": costed})})
    [v] = [v for v in check_plan(s, extra).violations if v.subject.startswith("cost_breakdown")]
    assert (v.subject, v.amount, v.unit) == ("cost_breakdown.reported.setup", 1, "")


def test_the_minimum_billed_hours_are_recomputed(make_scenario: Any) -> None:
    # min_hours 3: a 1-hour job is billed 3 h = 30.00. A plan stating 1 h and 10.00 (the
    # rule ignored) is rejected on its billed hours, its cost and its total.
    s = make_scenario([offer("o", hourly={"price": 10, "min_hours": 3})], [job("a", 1)], days=1)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("30.00")
    [r] = plan.rentals
    cheap = r.model_copy(update={"billed_hours": Decimal(1), "cost": Decimal("10.00")})
    tampered = plan.model_copy(update={"rentals": [cheap], "total_cost": Decimal("10.00")})
    subjects = {v.subject for v in check_plan(s, tampered).violations if v.rule == "cost"}
    assert {r.id, "total"} <= subjects


def test_an_occupied_hours_slip_is_caught(make_scenario: Any) -> None:
    # A 5-hour job shown as a 3-hour run and rental (30.00 instead of 50.00).
    s = make_scenario([offer("o", hourly={"price": 10})], [job("a", 5)], days=1)
    plan = solved(s).plan
    assert plan is not None
    a = train_of(plan, "a")
    [r] = plan.rentals
    short_run = a.runs[0].model_copy(update={"end": a.start + 3 * H})
    short = r.model_copy(
        update={"end": r.start + 3 * H, "billed_hours": Decimal(3), "cost": Decimal("30.00")}
    )
    tampered = with_assignment(plan, "a", end=a.start + 3 * H, runs=[short_run], hours=3)
    tampered = tampered.model_copy(update={"rentals": [short], "total_cost": Decimal("30.00")})
    [slip] = [v for v in check_plan(s, tampered).violations if v.rule == "duration"]
    assert slip.amount == 2


def test_a_run_moved_before_the_earliest_start_is_said_once_each_way(make_scenario: Any) -> None:
    # 20 h in 08:00-22:00 windows from 07-02: runs on 07-02 (14 h) and 07-03 (6 h). The
    # first run moved a day earlier: the window is said (it had been hidden behind the
    # runs' mismatch), the mismatch names the first run that differs, the moved run is
    # said to have no rental of its own, and the rental it left is not also called "used
    # by no run"
    s = make_scenario(
        [offer("o", hourly={"price": 10})],
        [job("j", 20, daily_hours="08:00-22:00", earliest_start="2026-07-02")],
        days=4,
    )
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    j = train_of(plan, "j")
    day = 24 * H
    first = j.runs[0].model_copy(
        update={"start": j.runs[0].start - day, "end": j.runs[0].end - day}
    )
    moved = with_assignment(plan, "j", start=first.start, runs=[first, *j.runs[1:]])
    said = {(v.rule, v.subject): v for v in check_plan(s, moved).violations}
    # 07-01 08:00 is 16 h before the earliest start, 07-02 00:00
    assert said[("window", "j")].message == "starts 16 h before its earliest start"
    assert said[("duration", "j")].message.startswith("run 2 is ")
    rentals = [v.message for v in check_plan(s, moved).violations if v.rule == "rental"]
    assert len(rentals) == 1 and rentals[0].startswith("run 1 (")


def test_an_edited_run_is_still_checked_against_the_other_rules(make_scenario: Any) -> None:
    # b (3 h) runs after a (3 h). b's run edited to start 2 h earlier and last 2 h: its
    # mismatch with the replay is said, and so are what the edit breaks besides: it starts
    # before a finishes, and no rental of its own covers the edited hours.
    s = make_scenario([offer("o", hourly={"price": 10})], [job("a", 3), job("b", 3, after=["a"])])
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    b = train_of(plan, "b")
    [run] = b.runs
    edited = run.model_copy(update={"start": run.start - 2 * H, "end": run.start})
    tampered = with_assignment(plan, "b", start=edited.start, end=edited.end, runs=[edited])
    violations = check_plan(s, tampered).violations
    said = {(v.rule, v.message.split(" ")[0]): v for v in violations if v.subject == "b"}
    assert said[("duration", "run")].amount == 1  # 3 h due, 2 h stated
    assert said[("dependency", "starts")].message == "starts 2 h before a finishes"
    assert said[("rental", "run")].message.startswith("run 1 (")
    # its money is unchanged: the rental it lists is still its own, not a cost line off
    assert not [v for v in violations if v.rule == "cost" and v.subject == "b"]


def test_a_legal_start_the_model_never_writes_is_accepted(make_scenario: Any) -> None:
    # Window 08:00-22:00, 4 hours of work: the model starts at 08:00; started by hand at
    # 12:00 instead, same cost, the plan is legal (rule 3 runs from any window hour).
    s = make_scenario(
        [offer("o", hourly={"price": 10})], [job("a", 4, daily_hours="08:00-22:00")], days=1
    )
    plan = solved(s).plan
    assert plan is not None
    a = train_of(plan, "a")
    [r] = plan.rentals
    later = 4 * H
    moved = with_assignment(
        plan,
        "a",
        start=a.start + later,
        end=a.end + later,
        runs=[a.runs[0].model_copy(update={"start": a.start + later, "end": a.end + later})],
    )
    moved = moved.model_copy(
        update={"rentals": [r.model_copy(update={"start": r.start + later, "end": r.end + later})]}
    )
    result = check_plan(s, moved)
    assert result.ok, result.violations
    # and a start outside the window is not
    early = with_assignment(
        moved,
        "a",
        start=a.start - 2 * H,
        runs=[a.runs[0].model_copy(update={"start": a.start - 2 * H, "end": a.end - 2 * H})],
    )
    assert any(v.rule == "window" for v in check_plan(s, early).violations)
