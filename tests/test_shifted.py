"""The forced packages moved by whole days (`planner/shifted.py`): other starts for the
search, each planned as the per-service start and checked like any plan."""

from __future__ import annotations

from typing import Any

from planner.baseline import greedy
from planner.forced import Forced, forced_packages
from planner.problem import build_problem
from planner.shifted import _moved, swept
from planner.solve import TECHNIQUES, checked_solution
from tests import planning
from tests.planning import offer


def _quarter(make_scenario: Any, deadline: str = "2026-07-04") -> Any:
    # three days; job j (5 h) runs only on m's daily package of two h200 cards (100), any
    # day by `deadline`; chat needs one replica all day 1, on m's spare card (free while
    # held) or an a100 rented hourly at 3 (72 a day: less than a package of its own)
    offers = [
        {**offer("m", card="h200-141g", daily={"price": 100, "stock": 1}), "unit_cards": 2},
        offer("o", hourly={"price": 3, "stock": 4}),
    ]
    chat = planning.service(start="2026-07-02", end="2026-07-03", concurrency=50)
    j = planning.only_on_h200("j", 5, earliest_start="2026-07-01", deadline=deadline)
    return make_scenario(offers, [j, chat], days=3)


def test_the_forced_package_moved_to_the_day_a_service_rides_it(make_scenario: Any) -> None:
    # the forced solve places j and its package on day 0, so the heuristic rents chat on
    # day 1 (100 + 72 = 172); moved one day later, j runs on day 1 and chat rides the
    # package's spare card: 100, the optimum. Moved two days, chat rents again (172)
    s = _quarter(make_scenario)
    problem = build_problem(s, serving=True)
    forced = list(forced_packages(problem).values())
    assert [f.bought for f in forced] == [((0, 1),)]
    heuristic, _ = greedy(problem, careful=True, forced=forced)
    assert heuristic is not None and heuristic.cost(problem) == 172
    found = swept(problem, forced)
    assert found is not None
    plan, days = found
    assert days == 1 and plan.packages == {("m", "daily"): {1: 1}}
    checked = checked_solution(problem, plan, {}, "shifted")
    assert checked is not None and checked.cost == 100
    result = planning.solved(s)
    assert result.plan is not None and result.plan.total_cost == 100
    assert result.plan.status == "optimal"


def test_no_shift_where_none_keeps_the_jobs_in_their_windows(make_scenario: Any) -> None:
    # j due by the end of day 0: its package cannot move, so nothing is tried
    s = _quarter(make_scenario, deadline="2026-07-02")
    problem = build_problem(s, serving=True)
    forced = list(forced_packages(problem).values())
    assert [f.bought for f in forced] == [((0, 1),)]
    assert swept(problem, forced) is None


def test_the_solve_starts_from_the_shifted_plan(make_scenario: Any) -> None:
    # the same quarter solved: the first checked plan it reports is the shifted one (100);
    # without the technique, the cheapest start is the heuristic's (172)
    s = _quarter(make_scenario)
    assert planning.first_start(s, TECHNIQUES) == (100, "the checked shifted plan")
    cost, what = planning.first_start(s, TECHNIQUES - {"shift"})
    assert cost == 172 and "shifted" not in what


def test_a_shift_keeps_each_job_on_its_own_day_across_a_clock_change(
    make_scenario: Any,
) -> None:
    # Berlin's clocks go back on Sunday 25 October 2026: that day has 25 hours. Packages
    # bought on days 0 and 4 (23 and 27 October), j placed at 01:00 of day 4; moved three
    # days, j starts at 01:00 of 30 October, inside the package moved to that day (the
    # first package's shift in real hours, 73, would put it an hour late: past its package)
    offers = [{**offer("m", card="h200-141g", daily={"price": 100, "stock": 2}), "unit_cards": 2}]
    j = planning.only_on_h200("j", 5, earliest_start="2026-10-23", deadline="2026-11-01")
    s = make_scenario(offers, [j], days=9, timezone="Europe/Berlin", start="2026-10-23")
    problem = build_problem(s, serving=True)
    axis, key = problem.axis, ("m", "daily")
    assert axis.day_hours(2) == 25
    k = [c.pool for c in problem.jobs[0].configs].index(key)
    f = Forced(key, 2, ("j",), True, ((0, k, axis.day_start(4) + 1),), ((0, 1), (4, 1)))
    moved = _moved(problem, [f], 3)
    assert moved is not None
    ((_, _, start),) = moved[0].placed
    assert axis.local(start).isoformat() == "2026-10-30T01:00:00"  # local wall clock
    a, b = problem.package(key, 7)
    assert moved[0].bought == ((3, 1), (7, 1)) and a <= start < b
