"""Rules the checker gained from the mutation score (benchmarks/mutation.py): each test takes
a valid plan, breaks exactly one stated figure, and expects exactly that violation."""

from __future__ import annotations

import datetime as dt
from typing import Any

from planner.check import check_plan
from planner.domain.plan import Plan
from tests.planning import job, offer, solved, train_of, with_assignment

H = dt.timedelta(hours=1)


def _violations(s: Any, plan: Plan) -> list[tuple[str, str]]:
    return [(v.rule, v.subject) for v in check_plan(s, plan).violations]


def test_an_assignment_ends_with_its_last_run(make_scenario: Any) -> None:
    # 20 h of work in 08:00-22:00 windows: runs 14 h and 6 h on two days. Stating the first
    # run's end as the assignment's end (mutant assignment-end-at-first-run) is refused.
    s = make_scenario(
        [offer("o", hourly={"price": 10})], [job("j", 20, daily_hours="08:00-22:00")], days=3
    )
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    j = train_of(plan, "j")
    assert len(j.runs) == 2
    early = with_assignment(plan, "j", end=j.runs[0].end)
    assert _violations(s, early) == [("duration", "j")]
    late_start = with_assignment(plan, "j", start=j.start + H)
    assert _violations(s, late_start) == [("duration", "j")]


def test_stated_compute_hours_include_spot_rework(make_scenario: Any) -> None:
    # 6 h of work on spot (2/3 useful) occupy 9 h: compute hours 9. Stating the useful 6 h
    # (mutant assignment-compute-hours-without-rework) is refused; the 4-decimal rounding
    # a plan shows is not.
    spot = {"price": 5, "preemptions_per_hour": 0.5, "restart_minutes": 30, "stock": 2}
    s = make_scenario(
        [offer("o", hourly={"price": 10}, spot=spot)],
        [job("j", 6, checkpoint_every="60m")],
        days=1,
    )
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    j = train_of(plan, "j")
    assert j.mode == "spot" and j.compute_hours == 9
    assert _violations(s, with_assignment(plan, "j", compute_hours=6.0)) == [("duration", "j")]
    assert check_plan(s, with_assignment(plan, "j", compute_hours=9.00005)).ok


def test_stated_setup_hours_are_rule_two(make_scenario: Any) -> None:
    # 30 min of setup per start: a plan stating none is refused.
    s = make_scenario(
        [{**offer("o", hourly={"price": 10}), "setup_minutes": 30}],
        [{**job("j", 1.5), "setup_minutes": None}],
        days=1,
    )
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    assert train_of(plan, "j").setup_hours == 0.5
    assert _violations(s, with_assignment(plan, "j", setup_hours=0.0)) == [("duration", "j")]
