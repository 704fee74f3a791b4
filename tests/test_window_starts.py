"""Rule 3: a windowed job runs in every window hour *from its start*, and
it may start at any window hour, not only at a window's opening."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.check import check_plan
from planner.rules import DailyRuns, daily_runs
from tests.planning import job, offer, solved

HOURLY = {"price": 10, "stock": 1}


def _plan(result: Any) -> Any:
    assert result.plan is not None, result.reasons
    check = check_plan(result.problem.scenario, result.plan)
    assert check.ok, check.violations
    return result.plan


def test_a_job_starts_inside_its_first_window(make_scenario: Any) -> None:
    # 20 h of work in 08:00-22:00, earliest 1 Jul 12:00, deadline 2 Jul 20:00.
    # From 12:00: 10 h on 1 Jul (12-22), 10 h on 2 Jul (08-18), done 18:00: billed 10 + 10
    # = 20 h × 10 = 200. From the next opening (2 Jul 08:00) it could do only 12 h by 20:00,
    # so a planner starting only at openings finds no plan.
    windowed = job(
        "j",
        20,
        daily_hours="08:00-22:00",
        earliest_start="2026-07-01T12:00",
        deadline="2026-07-02T20:00",
    )
    plan = _plan(solved(make_scenario([offer("o", hourly=HOURLY)], [windowed], days=3)))
    assert plan.total_cost == Decimal("200.00")
    (a,) = plan.train
    assert (a.start.day, a.start.hour, a.end.day, a.end.hour) == (1, 12, 2, 18)
    assert [(r.start.hour, r.end.hour) for r in a.runs] == [(12, 22), (8, 18)]


def test_a_dependency_that_ends_mid_window_starts_the_next_job_there(
    make_scenario: Any,
) -> None:
    # a: 10 h from 00:00, done 10:00 (100). b after a, 20 h in 08:00-22:00, due 2 Jul 20:00:
    # from 10:00 it runs 12 h on 1 Jul (10-22) and 8 h on 2 Jul (08-16): 200. Total 300.
    jobs = [
        job("a", 10),
        job("b", 20, daily_hours="08:00-22:00", after=["a"], deadline="2026-07-02T20:00"),
    ]
    plan = _plan(solved(make_scenario([offer("o", hourly={"price": 10, "stock": 2})], jobs, 3)))
    assert plan.total_cost == Decimal("300.00")
    b = next(a for a in plan.train if a.workload == "b")
    assert (b.start.hour, b.end.day, b.end.hour) == (10, 2, 16)


def test_a_late_start_with_setup_wastes_no_day(make_scenario: Any) -> None:
    # Setup 1 h a day on hourly. 4 h of work from 1 Jul 20:00 in 08:00-22:00: 20-22 holds
    # setup + 1 h, then 2 Jul 08-12 holds setup + 3 h: billed 2 + 4 = 6 h = 60. Starting
    # at 2 Jul 08:00 instead: one run 08-13 (setup + 4) = 50, cheaper and still in time.
    windowed = {
        **job("j", 4, daily_hours="08:00-22:00", earliest_start="2026-07-01T20:00"),
        "setup_minutes": 60,
    }
    plan = _plan(solved(make_scenario([offer("o", hourly=HOURLY)], [windowed], days=3)))
    assert plan.total_cost == Decimal("50.00")
    (a,) = plan.train
    assert (a.start.day, a.start.hour, a.end.hour) == (2, 8, 13)


def test_a_window_that_crosses_midnight_is_open_in_the_first_hours_of_a_day(
    make_scenario: Any,
) -> None:
    # Window 20:00-04:00. 4 h of work from 2 Jul 00:00, due 2 Jul 04:00: the hours 00-04 of
    # 2 Jul are the window opened on 1 Jul, so it runs 00:00-04:00, one rental of 4 h at 10/h
    # = 40.00. Starting only in windows opened on or after its earliest day, it would wait
    # for 2 Jul 20:00 and miss its deadline.
    night = job(
        "j",
        4,
        daily_hours="20:00-04:00",
        earliest_start="2026-07-02T00:00",
        deadline="2026-07-02T04:00",
    )
    result = solved(make_scenario([offer("o", hourly=HOURLY)], [night], days=2))
    plan = _plan(result)
    assert result.status == "optimal" and plan.total_cost == Decimal("40.00")
    (a,) = plan.train
    assert [(r.start.day, r.start.hour, r.end.hour) for r in a.runs] == [(2, 0, 4)]


def test_the_horizon_may_open_inside_a_window_that_crosses_midnight(make_scenario: Any) -> None:
    # Window 22:00-02:00 and a horizon from 1 Jul 00:00: its first two hours are the window
    # opened on 30 Jun. 2 h of work due 1 Jul 02:00 runs 00:00-02:00: 2 h x 10 = 20.00.
    early = job("j", 2, daily_hours="22:00-02:00", deadline="2026-07-01T02:00")
    result = solved(make_scenario([offer("o", hourly=HOURLY)], [early], days=1))
    assert result.status == "optimal" and _plan(result).total_cost == Decimal("20.00")
    # 15 h in 22:00-02:00 windows over 4 days, billed per 0.75 h: from 1 Jul 00:00 its runs
    # are 2, 4, 4, 4 and 1 h (00-02, then 22:00-02:00 three times, then 22:00-23:00 on
    # 4 Jul), billed 2.25 + 3 x 4.5 + 1.5 = 17.25 h: 172.50. From 1 Jul 22:00 the windows
    # left in the horizon hold 4 + 4 + 4 + 2 = 14 h, too few.
    steps = offer("o", hourly={"price": 10, "increment_hours": 0.75})
    long_ = job("j", 15, daily_hours="22:00-02:00")
    result = solved(make_scenario([steps], [long_], days=4))
    assert result.status == "optimal" and _plan(result).total_cost == Decimal("172.50")


@settings(max_examples=300, deadline=None)
@given(
    compute=st.fractions(min_value=Fraction(1, 8), max_value=60, max_denominator=360),
    setup=st.fractions(min_value=0, max_value=3, max_denominator=60),
    lengths=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 16)), min_size=1, max_size=8),
    every_day=st.booleans(),
)
def test_daily_runs_are_the_rule_in_exact_hours(
    compute: Fraction, setup: Fraction, lengths: list[tuple[int, int]], every_day: bool
) -> None:
    """`daily_runs` (in whole units of the amounts' common denominator) against rule 3 in
    Fractions: each day's window holds a run until the work is done; the last run holds
    ceil(what is left + its setup) hours; a day whose window cannot progress, or windows
    that end first, give no runs."""
    windows, at = [], 0
    for gap, length in lengths:
        windows.append((at + gap, at + gap + length))
        at += gap + length
    runs: list[tuple[int, int]] = []
    left, first, expected = compute, windows[0][0], None
    for opens, closes in windows:
        if closes <= opens:
            continue
        this = setup if (every_day or not runs) else Fraction(0)
        if closes - opens - this <= 0:
            break
        if left <= closes - opens - this:
            runs.append((opens - first, max(1, math.ceil(left + this))))
            expected = DailyRuns(tuple(runs))
            break
        runs.append((opens - first, closes - opens))
        left -= closes - opens - this
    assert daily_runs(compute, setup, iter(windows), every_day) == expected
