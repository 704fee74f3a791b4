"""The solver-free lower bound (`planner/bound.py`): never above an optimum, exact where the
relaxation loses nothing, and at least the package a job cannot avoid."""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import bound, charges, purchases, rises, solve, views
from planner.bound import _Floors, lower_bound
from planner.cpsat.model import CpModel, SolverSettings
from planner.export.page import gap_words
from planner.forced import forced_packages
from planner.problem import Infeasible, Problem, build_problem, within_stock
from planner.rules import PACKAGE_MODES
from tests import planning
from tests.planning import job, offer
from tests.test_planner_properties import build, instances, mixed

SETTINGS = SolverSettings(time_limit=20, workers=2, seed=0, deterministic=True)


def optimum(problem: Any) -> Fraction | None:
    outcome = CpModel(problem).solve(SETTINGS)
    assert outcome.status in ("optimal", "infeasible"), outcome.status
    return None if outcome.objective is None else Fraction(outcome.objective, problem.money_scale)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed())
def test_the_bound_never_exceeds_the_optimum(make_scenario: Any, instance: dict[str, Any]) -> None:
    """With and without the packages that only-there jobs force (planner.forced)."""
    try:
        problem = build_problem(build(make_scenario, instance), serving=True)
    except Infeasible:
        return
    best = optimum(problem)
    if best is not None:
        counts = {k: f.packages for k, f in forced_packages(problem).items()}
        assert lower_bound(problem).total <= lower_bound(problem, counts).total <= best
        assert (
            lower_bound(problem, counts).total
            <= lower_bound(problem, counts, by_segment=True).total
            <= best
        )


def _busy_desk(make_scenario: Any) -> Problem:
    """A card 09:00-12:00 on 3 days: hourly at 10, or a daily package at 100."""
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}),
        offer("p", daily={"price": 100, "stock": 4}),
    ]
    s = make_scenario(offers, [planning.reserve("desk", 1, "09:00-12:00", days=3)], days=3)
    return build_problem(s, serving=True)


def test_a_package_used_only_in_busy_hours_is_charged_by_segment(make_scenario: Any) -> None:
    # a card 09:00-12:00 on 3 days: hourly at 10 costs 3 × 3 × 10 = 90; a daily package at
    # 100 holds the card all day. One charge for the whole quarter (100 ÷ 24 per card-hour)
    # prices the package's 9 busy hours at 37.50; charged by segment, the busy hours carry
    # up to 10 each (30 a day, within the package's 100), so the bound is the optimum
    problem = _busy_desk(make_scenario)
    assert lower_bound(problem, by_day=False).total == Fraction(75, 2)
    assert lower_bound(problem, by_segment=True, by_day=False).total == optimum(problem) == 90


def test_a_machine_a_desk_uses_little_is_not_bought(make_scenario: Any) -> None:
    # the desk as above, next to a daily package of an 8-card machine at 100. Charged per
    # segment, the machine's 8 cards share its 100 over the 3 busy hours of a day: at most
    # 100 / 8 / 3 a card-hour, so the bound is 3 days × 3 h × 25/6 = 37.50. Decided day by
    # day, a package costs 100 against 30 of hourly cards that day: never bought, and the
    # bound is the optimum, 90
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}),
        {**offer("p", daily={"price": 100, "stock": 4}), "unit_cards": 8},
    ]
    s = make_scenario(offers, [planning.reserve("desk", 1, "09:00-12:00", days=3)], days=3)
    problem = build_problem(s, serving=True)
    # (the charges are GLOP's duals rounded down to millionths)
    assert 37 < lower_bound(problem, by_segment=True, by_day=False).total <= Fraction(75, 2)
    found = lower_bound(problem)
    assert found.total == optimum(problem) == 90
    assert found.bought == (("p", "daily"),)
    note = planning.solved(problem.scenario).plan.baseline_notes["bound"]  # type: ignore[union-attr]
    assert "the purchases of p daily are decided day by day" in note


def test_whole_replicas_on_one_hourly_offer_are_exact(make_scenario: Any) -> None:
    # 2 cards 09:00-12:00 for 3 days at 10 an hour: 2 × 3 h × 3 days × 10 = 180, exactly
    offers = [offer("o", hourly={"price": 10, "stock": 4})]
    s = make_scenario(offers, [planning.reserve("desk", 2, "09:00-12:00", days=3)], days=3)
    problem = build_problem(s, serving=True)
    assert lower_bound(problem).total == optimum(problem) == 180


def assert_below_optimum(problem: Any) -> Fraction | None:
    """The bound, with the packages only-there jobs force and with the charges by segment
    too, is at most the CP-SAT optimum (where there is one), which it returns."""
    best = optimum(problem)
    if best is not None:
        # configs beyond their offer's stock dropped, as the planner does before the bound
        assert lower_bound(problem).total <= lower_bound(within_stock(problem)).total <= best
        counts = {k: f.packages for k, f in forced_packages(problem).items()}
        assert lower_bound(problem, counts).total <= best
        assert lower_bound(problem, counts, by_segment=True).total <= best
    return best


def test_each_day_of_cards_pays_its_setup(make_scenario: Any) -> None:
    # a card 09:00-12:00 on 3 days, rented hourly at 10 with a 1 h setup: each morning the
    # card is set up again (1 h) or was held through the night (21 h), so each day costs at
    # least (3 + 1) h × 10 and the quarter 3 × 40 = 120, exactly; the bound without the
    # setups would be 90
    offers = [{**offer("o", hourly={"price": 10, "stock": 4}), "setup_minutes": 60}]
    s = make_scenario(offers, [planning.reserve("desk", 1, "09:00-12:00", days=3)], days=3)
    problem = build_problem(s, serving=True)
    assert lower_bound(problem).total == optimum(problem) == 120


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed(), st.lists(st.sampled_from([0, 20, 60, 90, 150]), min_size=4, max_size=4))
def test_the_bound_with_setups_never_exceeds_the_optimum(
    make_scenario: Any, instance: dict[str, Any], setups: list[int]
) -> None:
    """Replicas and people's cards set up on each start (the first segment of each run of
    demand pays it, or the gap before): with and without the charges by segment."""
    offers = [
        {**o, "setup_minutes": setups[i % len(setups)]} for i, o in enumerate(instance["offers"])
    ]
    try:
        problem = build_problem(build(make_scenario, {**instance, "offers": offers}), True)
    except Infeasible:
        return
    best = optimum(problem)
    if best is not None:
        assert lower_bound(problem).total <= lower_bound(problem, by_segment=True).total
        assert lower_bound(problem, by_segment=True).total <= best


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mixed(),
    st.sampled_from([1, 2, 8]),
    st.sampled_from(["daily", "weekly"]),
    st.integers(10, 400),
    st.integers(1, 2),
    st.sampled_from([0, 0, 60, 150]),
)
def test_purchases_decided_by_day_never_exceed_the_optimum(
    make_scenario: Any,
    instance: dict[str, Any],
    cards: int,
    mode: str,
    price: int,
    stock: int,
    setup: int,
) -> None:
    """A machine of `cards` cards of the first offer's card, sold by the day or the week,
    beside the instance's offers (rented replicas set up in `setup` minutes): the bound
    with its purchases decided day by day (and by segment; serving paying each day's
    setups) stays at or below the optimum."""
    machine = {
        **offer("machine", card=instance["offers"][0]["card"], **{mode: {"price": price}}),
        "unit_cards": cards,
    }
    machine[mode]["stock"] = stock
    offers = [{**o, "setup_minutes": setup} for o in instance["offers"]]
    try:
        problem = build_problem(
            build(make_scenario, {**instance, "offers": [*offers, machine]}), True
        )
    except Infeasible:
        return
    best = assert_below_optimum(problem)
    # the program alone, train jobs' savings counted per package and at the held charge
    key = ("machine", mode)
    if best is not None and key in problem.pools:
        full = problem.pools[key].unit_price / (cards * 24 * problem.pools[key].days)
        for anywhere in (False, True):
            alone, _ = purchases.search(
                problem,
                [key],
                {key: full},
                _Floors(problem),
                bound._committed(problem),
                [full],
                [0],
                anywhere=anywhere,
            )
            assert alone <= best


def test_a_job_whose_window_meets_several_packages_pays_its_cards_once(
    make_scenario: Any,
) -> None:
    # a desk of one card 08:00-20:00 for 21 days (hourly 10: 2,520; three weekly one-card
    # packages at 300: 900) and a 10 h job due by the end, which runs at night on the held
    # card for nothing: the optimum 900. Flat, a card-hour costs 300/168: 252 desk hours and
    # 10 job hours, 3,275/7. By day, its saving counted per package meeting its window (100
    # each, three packages): 3 × 300 + 100 − 300 = 700; priced anywhere at the held charge
    # (0 here), the job costs 0 and every package is paid: 900, the optimum
    offers = [offer("o", hourly={"price": 10, "stock": 2}, weekly={"price": 300, "stock": 2})]
    jobs = [
        planning.reserve("desk", 1, "08:00-20:00", days=21),
        job("a", 10, deadline="2026-07-22"),
    ]
    problem = build_problem(make_scenario(offers, jobs, days=21), serving=True)
    key, full = ("o", "weekly"), Fraction(300, 168)
    ways = [
        purchases.search(
            problem, [key], {key: full}, _Floors(problem), Fraction(0), [full], [0], anywhere=a
        )[0]
        for a in (False, True)
    ]
    assert ways == [700, 900]
    assert lower_bound(problem, by_day=False).total == Fraction(3275, 7)
    found = lower_bound(problem)
    assert (found.total, found.bought, found.anywhere) == (900, (key,), True)
    assert optimum(problem) == 900
    said = solve._bound_note(problem, {}, found)
    assert "o weekly are decided day by day" in said
    assert "by train jobs on any day of their windows" in said
    assert "inside each day" not in said  # no setups here: the days' programs add nothing
    daily = replace(found, daily_setups=True)
    assert "serving pays the setups of the replicas it starts inside each day" in (
        solve._bound_note(problem, {}, daily)
    )


def test_a_job_that_only_a_package_holds_pays_for_one(make_scenario: Any) -> None:
    # a 5 h job on an offer that sells only daily packages at 300: the bound is the package,
    # though its card-hours at the package's full rate would charge only 5/24 of it
    offers = [offer("o", daily={"price": 300, "stock": 1})]
    problem = build_problem(make_scenario(offers, [job("j", 5)], days=2), serving=True)
    assert lower_bound(problem).total == optimum(problem) == 300


def test_jobs_that_run_only_on_one_pool_force_every_package_they_need(
    make_scenario: Any,
) -> None:
    # two 10 h jobs that only a weekly package runs, 40 days apart: no one package holds
    # both, so every plan buys two (600); the one-job arithmetic alone sees one (300), and
    # priced by time, the other job runs outside that week at the full rate 300/168 h:
    # 300 + 10 × 300/168 = 2,225/7. Purchases decided by day see both: 600
    offers = [offer("o", weekly={"price": 300, "stock": 1})]
    jobs = [
        job("a", 10, earliest_start="2026-07-01", deadline="2026-07-03"),
        job("b", 10, earliest_start="2026-08-10", deadline="2026-08-12"),
    ]
    problem = build_problem(make_scenario(offers, jobs, days=60), serving=True)
    assert lower_bound(problem, by_day=False).total == Fraction(2225, 7)
    assert lower_bound(problem).total == 600
    forced = forced_packages(problem)
    assert {k: (f.packages, f.exact, f.jobs) for k, f in forced.items()} == {
        ("o", "weekly"): (2, True, ("a", "b"))
    }
    counts = {k: f.packages for k, f in forced.items()}
    assert lower_bound(problem, counts).total == optimum(problem) == 600


def test_two_packages_held_at_once_are_both_paid(make_scenario: Any) -> None:
    # two 10 h jobs that only a one-card weekly package at 300 runs, both due 10 h after the
    # horizon starts: two packages held at once, in a 3-day quarter (no second week to lay
    # them end to end): 600, and the bound decided by day buys both on the first days
    offers = [offer("o", weekly={"price": 300, "stock": 2})]
    jobs = [job(name, 10, deadline="2026-07-01T10:00:00") for name in ("a", "b")]
    problem = build_problem(make_scenario(offers, jobs, days=3), serving=True)
    counts = {k: f.packages for k, f in forced_packages(problem).items()}
    assert counts == {("o", "weekly"): 2}
    assert lower_bound(problem, counts).total == optimum(problem) == 600
    # the program alone (no counted packages in its fixed part) sees both packages too
    key = ("o", "weekly")
    full = Fraction(300, 168)
    alone, _ = purchases.search(
        problem, [key], {key: full}, _Floors(problem), Fraction(0), [full], [2]
    )
    assert alone == 600


def test_jobs_that_share_one_package_force_only_it(make_scenario: Any) -> None:
    # the same two jobs three days apart fit in one weekly package: 300, not 600
    offers = [offer("o", weekly={"price": 300, "stock": 1})]
    jobs = [
        job("a", 10, earliest_start="2026-07-01", deadline="2026-07-03"),
        job("b", 10, earliest_start="2026-07-04", deadline="2026-07-06"),
    ]
    problem = build_problem(make_scenario(offers, jobs, days=20), serving=True)
    counts = {k: f.packages for k, f in forced_packages(problem).items()}
    assert counts == {("o", "weekly"): 1}
    assert lower_bound(problem, counts).total == optimum(problem) == 300


def test_a_forced_package_holds_cards_only_while_it_lasts(make_scenario: Any) -> None:
    # A 5 h job that only a weekly package of two h200 cards (1,400: 1,400 / 336 card-hours
    # = 4.17 a card-hour) runs, due by day 2, and a one-card service for 14 days that may
    # also rent a100s hourly at 2. One charge c for the whole fortnight: the package term
    # 1,400 − 336 c, the service min(c, 2) × 336, the job 5 c: at most 1,410 (at c = 2).
    # Priced by time, the package's week lies on days 0-6 or 1-7 (it must meet the job's
    # window); outside it the service pays its hourly 2 × 24 h × 7 days, inside nothing:
    # 1,400 + 336 = 1,736, the optimum.
    offers, jobs = planning.forcing_fortnight()
    problem = build_problem(make_scenario(offers, jobs, days=14), serving=True)
    bound = lower_bound(problem)
    assert bound.total == optimum(problem) == 1736
    assert bound.window == (("pkg", "weekly"), (0, 168))
    flat = lower_bound(problem, time=False, by_day=False)
    assert 1400 < flat.total <= 1410 and flat.window is None
    # decided by day, the package's week likewise: the service rides it free inside
    assert lower_bound(problem, time=False).total == 1736
    # the plan says so in what the bound knows
    note = planning.solved(problem.scenario).plan.baseline_notes["bound"]  # type: ignore[union-attr]
    assert "pkg weekly cards at a low charge only while one package is held (7 day(s)" in note
    assert "here from 2026-07-01" in note


def test_a_forced_window_and_charges_by_segment_together(make_scenario: Any) -> None:
    # The forcing fortnight (a weekly package of two h200 cards at 1,400 that job j forces,
    # a one-card service for 14 days that may rent a100s at 2 an hour) and people's a100
    # card 09:00-12:00 every day, which may also sit on a one-card daily package at 30.
    # Optimum: the package on days 0-6 runs j and the service; days 7-13 the service buys
    # the daily package (30 < 24 × 2); the desk rents its 3 h at 2: 1,400 + 7 × 30 +
    # 14 × 6 = 1,694. Priced by time with the daily pool at one rate (30 ÷ 24 = 1.25 a
    # card-hour), the desk pays 3.75 a day: 1,400 + 210 + 52.50 = 1,662.50. With the daily
    # pool charged by segment as well, its busy hours carry the desk's hourly 2 (3 × 2 + 21
    # other hours within the package's 30): the bound is the optimum.
    offers, jobs = planning.forcing_fortnight()
    offers.append(offer("day", daily={"price": 30, "stock": 4}))
    jobs.append(planning.reserve("desk", 1, "09:00-12:00", days=14))
    problem = build_problem(make_scenario(offers, jobs, days=14), serving=True)
    counts = {k: f.packages for k, f in forced_packages(problem).items()}
    assert lower_bound(problem, counts, by_day=False).total == Fraction(3325, 2)
    # decided by day, the daily pool's package costs its 30 on a day the desk uses 3 h of
    assert Fraction(3325, 2) < lower_bound(problem, counts).total < 1694
    bound = lower_bound(problem, counts, by_segment=True)
    assert bound.total == optimum(problem) == 1694
    assert bound.window == (("pkg", "weekly"), (0, 168)) and bound.segments is not None
    note = planning.solved(problem.scenario).plan.baseline_notes["bound"]  # type: ignore[union-attr]
    assert "pools no job forces are charged per card-hour by day segment" in note


def _one_card_week(make_scenario: Any, price: int) -> Any:
    """A one-card weekly h200 package at `price` that only job j (5 h, due by day 2) runs,
    and a one-card service for 14 days that may rent a100s at 2 an hour."""
    offers = [
        offer("pkg", card="h200-141g", weekly={"price": price, "stock": 1}),
        offer("hr", hourly={"price": 2, "stock": 4}),
    ]
    jobs = [
        planning.only_on_h200("j", 5, deadline="2026-07-03"),
        planning.service(end="2026-07-15"),
    ]
    return build_problem(make_scenario(offers, jobs, days=14), serving=True)


def test_no_service_fits_beside_a_job_that_takes_the_whole_package(make_scenario: Any) -> None:
    # The package at 1,400. Inside its week the service rides the package's card except
    # while j runs on it; then it rents: at least 1,400 + 7 × 24 × 2 outside the week +
    # 5 × 2 = 1,746. (The model keeps a service's replicas for a whole segment, so its
    # optimum rents the whole day: 1,784.)
    problem = _one_card_week(make_scenario, 1400)
    bound = lower_bound(problem)
    assert bound.total == 1746 and bound.window == (("pkg", "weekly"), (0, 168))
    assert optimum(problem) == 1784


def test_the_charge_is_refined_between_the_grid_steps(make_scenario: Any) -> None:
    # The package at 700 (4.17 a card-hour) and the service rented at 2 outside it: for a
    # charge c ≤ 2 the bound is 700 − 168 c + 336 c + 5 c = 700 + 173 c, above 2 it is
    # 1,372 − 163 c: its peak, 1,046, lies at c = 2, between the grid's steps of 4.17/8
    # (the best step, 3/8, gives 970.31). Refined: within 1 of the peak.
    assert 1045 < lower_bound(_one_card_week(make_scenario, 700)).total <= 1046


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    days=st.integers(3, 9),
    package=st.sampled_from(["daily", "weekly"]),
    price=st.integers(50, 900),
    hourly=st.integers(1, 6),
    earliest=st.integers(0, 3),
    window=st.integers(1, 4),
    hours=st.integers(1, 20),
    serve=st.data(),
    other=st.sampled_from([None, "daily", "weekly"]),
    other_price=st.integers(5, 300),
)
def test_a_bound_priced_by_time_never_exceeds_the_optimum(
    make_scenario: Any,
    days: int,
    package: str,
    price: int,
    hourly: int,
    earliest: int,
    window: int,
    hours: int,
    serve: st.DataObject,
    other: str | None,
    other_price: int,
) -> None:
    """A job only a package runs, a generated service that may use the package's cards,
    rent hourly ones or (`other`) buy packages no job forces: the bound, priced by time or
    not, by segment or not, stays at or below the optimum."""
    offers = [
        offer("pkg", card="h200-141g", **{package: {"price": price, "stock": 2}}),
        offer("hr", hourly={"price": hourly, "stock": 4}),
    ]
    if other is not None:
        offers.append(offer("more", **{other: {"price": other_price, "stock": 2}}))
    first = dt.date(2026, 7, 1)
    start = first + dt.timedelta(days=min(earliest, days - 1))
    due = start + dt.timedelta(days=window)
    forced = planning.only_on_h200(
        "j",
        hours,
        earliest_start=start.isoformat(),
        deadline=min(due, first + dt.timedelta(days=days)).isoformat(),
    )
    service = serve.draw(planning.services(days))
    try:
        problem = build_problem(make_scenario(offers, [forced, service], days=days), serving=True)
    except Infeasible:
        return
    assert_below_optimum(problem)


def test_cards_scarce_only_in_busy_hours_are_charged_there(make_scenario: Any) -> None:
    # one card 09:00-21:00 and another 12:00-14:00, at 2 an hour, beside a one-card daily
    # package at 20. Optimum: the package for the long day and the short one hourly, 24.
    # Decided by day with one charge for the whole day, a held package's card is free to
    # both, and any charge paid back over its 24 h costs more than it collects: 20. Charged
    # 2 in the two hours both want the card (their price elsewhere; the package is paid
    # back 4 of its 20), the bound is the optimum
    offers = [
        offer("o", hourly={"price": 2, "stock": 4}),
        offer("p", daily={"price": 20, "stock": 1}),
    ]
    desks = [
        planning.reserve("long", 1, "09:00-21:00"),
        planning.reserve("short", 1, "12:00-14:00"),
    ]
    problem = build_problem(make_scenario(offers, desks, days=1), serving=True)
    floors = _Floors(problem)
    pools = [("p", "daily")]
    flat, _ = purchases.search(problem, pools, {}, floors, Fraction(0), [Fraction(20, 24)])
    assert flat == 20
    found = lower_bound(problem)
    assert found.total == optimum(problem) == 24
    assert found.bought == (("p", "daily"),)


def test_a_program_too_large_for_an_exact_solve_is_solved_approximately(
    make_scenario: Any, monkeypatch: Any
) -> None:
    # the busy-hours desk above with every program "too large" for GLOP: PDLP's duals,
    # repaired and priced exactly, reach the optimum within its tolerance, never above it;
    # without `approximate` the bound stays the flat one
    problem = _busy_desk(make_scenario)
    monkeypatch.setattr(bound, "SEGMENT_COLUMNS", 0)
    exact = lower_bound(problem, by_segment=True, by_day=False)
    assert exact.total == Fraction(75, 2) and exact.segments is None
    found = lower_bound(problem, by_segment=True, by_day=False, approximate=10**6)
    assert found.segments is not None
    assert 89 < found.total <= optimum(problem) == 90


def test_a_program_beyond_the_exact_columns_allowed_is_not_priced(make_scenario: Any) -> None:
    # the busy-hours desk again: solved exactly where its columns are allowed (the optimum,
    # 90), left out below them (the flat bound), and a program smaller than GLOP's size
    # limit is never handed to PDLP instead (the measured approximate solve of one that
    # small gained nothing in twice the flat bound's time)
    problem = _busy_desk(make_scenario)
    wanted = charges.columns(problem)
    allowed = lower_bound(problem, by_segment=True, by_day=False, exact_columns=wanted)
    assert allowed.segments is not None and allowed.total == optimum(problem) == 90
    below = lower_bound(
        problem, by_segment=True, by_day=False, exact_columns=wanted - 1, approximate=10**6
    )
    assert below.segments is None and below.total == Fraction(75, 2)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed())
def test_an_approximate_program_never_exceeds_the_optimum(
    make_scenario: Any, instance: dict[str, Any]
) -> None:
    try:
        problem = build_problem(build(make_scenario, instance), serving=True)
    except Infeasible:
        return
    best = optimum(problem)
    if best is not None:
        exact, bound.SEGMENT_COLUMNS = bound.SEGMENT_COLUMNS, 0  # every program "too large"
        try:
            assert lower_bound(problem, by_segment=True, approximate=10**6).total <= best
        finally:
            bound.SEGMENT_COLUMNS = exact


def test_configs_beyond_stock_leave_the_bound(make_scenario: Any) -> None:
    # the desk (1 card 09:00-12:00 on 3 days) on hourly cards at 10 (90 in all), beside a
    # daily package at 20 a card that sells none (stock 0). The package is no option: the
    # bound without it is the optimum (priced with it, the relaxation bought it: 60)
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}),
        offer("p", daily={"price": 20, "stock": 0}),
    ]
    s = make_scenario(offers, [planning.reserve("desk", 1, "09:00-12:00", days=3)], days=3)
    problem = build_problem(s, serving=True)  # the problem is built without them
    assert {c.offer for r in problem.replica_jobs for c in r.configs} == {"o"}
    assert within_stock(problem) == problem
    assert lower_bound(problem).total == optimum(problem) == 90


def test_a_workload_beyond_stock_everywhere_keeps_its_configs(make_scenario: Any) -> None:
    # the desk's only offer sells no unit: nothing is dropped, so the explanation of why it
    # cannot run still sees the configs it would need
    offers = [offer("o", hourly={"price": 10, "stock": 0})]
    s = make_scenario(offers, [planning.reserve("desk", 1, "09:00-12:00", days=1)], days=1)
    problem = build_problem(s, serving=True)
    assert problem.replica_jobs[0].configs
    assert within_stock(problem).replica_jobs == problem.replica_jobs


def test_a_train_config_beyond_stock_leaves_the_bound_and_forces_a_package(
    make_scenario: Any,
) -> None:
    # a 10-hour job on one card: hourly at 10 a card-hour (100), which sells none (stock 0),
    # or a daily package at 150. The hourly config is no option, so the job is the package's
    # alone: forced, and the bound is the optimum, 150
    offers = [
        offer("o", hourly={"price": 10, "stock": 0}),
        offer("p", daily={"price": 150, "stock": 2}),
    ]
    s = make_scenario(offers, [job("j", 10)], days=3)
    problem = build_problem(s, serving=True)
    assert {c.offer for c in problem.jobs[0].configs} == {"p"}
    assert ("p", "daily") in forced_packages(problem)
    assert lower_bound(problem).total == optimum(problem) == 150


def _rented_only(instance: dict[str, Any]) -> dict[str, Any]:
    """`instance` with every package mode taken off its offers (an offer sold only as
    packages leaves)."""
    offers = [
        {k: v for k, v in o.items() if k not in PACKAGE_MODES}
        for o in instance["offers"]
        if any(m in o for m in ("hourly", "spot"))
    ]
    return {**instance, "offers": offers}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    planning.with_service(instances(days=2), serve=True),
    st.sampled_from(["daily", "weekly"]),
    st.integers(10, 400),
    st.lists(st.sampled_from([30, 60, 90]), min_size=1, max_size=3),
)
def test_the_bound_without_packages_never_exceeds_the_cheapest_plan_without_them(
    make_scenario: Any, instance: dict[str, Any], mode: str, price: int, setups: list[int]
) -> None:
    """A machine of the first offer's card sold by the day or the week beside the
    instance's offers, whose cards take `setups` minutes to set up: the bound over plans
    that buy no package is at least the relaxation of the same quarter with every package
    mode taken off the catalog (it adds the setups of replicas started inside a run), and
    at most its optimum."""
    offers = [
        {**o, "setup_minutes": setups[i % len(setups)]} for i, o in enumerate(instance["offers"])
    ]
    instance = {**instance, "offers": offers}
    machine = offer("machine", card=offers[0]["card"], **{mode: {"price": price}})
    machine[mode]["stock"] = 2
    with_machine = {**instance, "offers": [*offers, machine]}
    try:
        problem = build_problem(build(make_scenario, with_machine), serving=True)
    except Infeasible:
        return
    alone = bound.without_packages(problem)
    try:
        rented = build_problem(build(make_scenario, _rented_only(instance)), serving=True)
    except Infeasible:  # some workload runs only on packages: no plan without them
        assert alone is None
        return
    if alone is None:  # the machine is no option for any workload (beyond its stock)
        return
    assert lower_bound(rented).total <= alone
    best = optimum(rented)  # None: no plan without packages (stock) bounds nothing
    assert best is None or alone <= best


def test_packages_that_pay_are_proven_to_pay(make_scenario: Any) -> None:
    # the desk (1 card 09:00-12:00 on 3 days) on hourly cards at 10 a card-hour (90 in
    # all), or on daily packages at 20 (60): without packages no plan costs less than 90,
    # so the plan's packages save at least 30
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}),
        offer("p", daily={"price": 20, "stock": 1}),
    ]
    s = make_scenario(offers, [planning.reserve("desk", 1, "09:00-12:00", days=3)], days=3)
    problem = build_problem(s, serving=True)
    assert bound.without_packages(problem) == 90
    plan = planning.solved(s).plan
    assert plan is not None and plan.total_cost == 60
    assert plan.bound_without_packages == 90
    line = views.without_packages(plan)
    assert line is not None and "(p daily) save at least CNY 30.00" in line
    assert f"Without packages: {line}." in gap_words(plan)  # the report says the same


def test_each_thing_the_sentence_says_of_a_plan(make_scenario: Any) -> None:
    # a 10-hour job on hourly cards (100) beside a daily package (150): the plan buys none.
    # With bounds of 90 and 95 the sentence gives the gap among plans that buy none (5)
    # and leaves the rest (to 90) to the packages; a bound above the plan is called wrong
    offers = [offer("o", hourly={"price": 10, "stock": 4}), offer("p", daily={"price": 150})]
    plan = planning.solved(make_scenario(offers, [job("j", 10)], days=3)).plan
    assert plan is not None and plan.total_cost == 100
    shown = plan.model_copy(update={"bound": Decimal(90), "bound_without_packages": Decimal(95)})
    assert views.without_packages(shown) == (
        "no plan that buys no package costs less than CNY 95.00, and this plan buys none: "
        "among such plans at most CNY 5.00 (5.0%) could still be saved; the rest of the gap "
        "down to CNY 90.00 is what packages might save, which the relaxation cannot rule out"
    )
    wrong = plan.model_copy(update={"bound_without_packages": Decimal(101)})
    line = views.without_packages(wrong)
    assert line is not None and line.endswith(
        "this plan buys none and costs CNY 100.00: a wrong bound"
    )
    # the desk on daily packages (60) where plans without them cost at least 50: the
    # packages it buys are named, with no saving claimed
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}),
        offer("p", daily={"price": 20, "stock": 1}),
    ]
    s = make_scenario(offers, [planning.reserve("desk", 1, "09:00-12:00", days=3)], days=3)
    plan = planning.solved(s).plan
    assert plan is not None and plan.total_cost == 60
    cheaper = plan.model_copy(update={"bound_without_packages": Decimal(50)})
    assert views.without_packages(cheaper) == (
        "no plan that buys no package costs less than CNY 50.00; this plan buys packages (p daily)"
    )


def test_no_bound_without_packages_where_every_plan_buys_one(make_scenario: Any) -> None:
    # a 10-hour job that only a daily package can run (its offer sells nothing else), a
    # commitment to one such package, or no package offer at all: each leaves no question
    # to answer. With an hourly offer beside the package, the job costs 100 there
    package_only = [offer("p", daily={"price": 150, "stock": 2})]
    s = make_scenario(package_only, [job("j", 10)], days=3)
    assert bound.without_packages(build_problem(s, serving=True)) is None
    both = [offer("o", hourly={"price": 10, "stock": 4}), *package_only]
    commitment = {"name": "held", "offer": "p", "mode": "daily", "units": 1, "start": "2026-07-02"}
    s = make_scenario(both, [job("j", 10)], days=3, commitments=[commitment])
    assert bound.without_packages(build_problem(s, serving=True)) is None
    s = make_scenario(both[:1], [job("j", 10)], days=3)
    assert bound.without_packages(build_problem(s, serving=True)) is None
    s = make_scenario(both, [job("j", 10)], days=3)
    assert bound.without_packages(build_problem(s, serving=True)) == 100


def test_a_replica_started_inside_a_run_pays_its_setup(make_scenario: Any) -> None:
    # chat (one a100-80g replica carries 100 in flight) needs 100 from 00:00 and 200 from
    # 02:00 to 04:00, on hourly cards at 10 that take an hour to set up. Per segment the
    # floors count 1 replica for 2 h plus its setup (30) and 2 replicas for 2 h (40): 70.
    # The second replica starts inside the run and pays its hour too: 80, the optimum
    offers = [offer("o", hourly={"price": 10, "stock": 4}, setup_minutes=60)]
    problem = _rising_chat(make_scenario, offers)
    assert lower_bound(problem).total == 70
    floors = bound._Floors(problem)
    assert floors.replicas(0, {}) == 70
    assert _rising(problem) == optimum(problem) == 80


def test_each_day_pays_the_setups_of_replicas_started_inside_it(make_scenario: Any) -> None:
    # chat as above over two days: 100 in flight 00-02 and 200 after, until 04:00 of the
    # second day, on hourly cards at 10 with an hour's setup. Day 1: one replica from 00:00
    # (3 h with its setup: 30), two from 02:00 (440) and the second one's setup (10): 480,
    # against 470 per segment. Day 2 starts from what day 1 left: two replicas through
    # 00-04 (80), or one until 02:00 and a second set up then (20 + 10 + 40): 70, against
    # 60. The days' sum, 550, is the optimum
    offers = [offer("o", hourly={"price": 10, "stock": 4}, setup_minutes=60)]
    problem = _rising_chat(make_scenario, offers, days=2, end="2026-07-02T04:00:00")
    floors = bound._Floors(problem)
    scale, days = floors.rising_days(0, {}) or (1, [])
    assert [Fraction(x, scale) for x in days] == [480, 70]
    scale, parts = floors.parts(0, {})
    per_segment = [Fraction(0), Fraction(0)]
    for (a, _), x in zip(problem.segments, parts, strict=True):
        per_segment[problem.axis.day_of(a)] += Fraction(x, scale)
    assert per_segment == [470, 60]
    assert optimum(problem) == 550


def _rising_chat(
    make_scenario: Any, offers: list[dict[str, Any]], days: int = 1, **fields: Any
) -> Any:
    """chat alone on `offers` from 00:00 to 04:00 of one day: 100 in flight (one a100-80g
    replica) until 02:00, 200 (two) after, one card a replica, in a quarter of `days`
    days; `fields` override."""
    shape: dict[str, Any] = {
        "start": "2026-07-01T00:00:00",
        "end": "2026-07-01T04:00:00",
        "concurrency": {"00-02": 100, "02-24": 200},
        "max_cards_per_replica": 1,
    }
    chat = planning.service(**{**shape, **fields})
    return build_problem(make_scenario(offers, [chat], days=days), serving=True)


def _rising(problem: Any) -> Fraction | None:
    return bound._rising(problem, 0, {})


def _rising_by_count(problem: Any, singled: tuple[int, ...] = ()) -> Fraction | None:
    """The program with only `singled` configs counted one by one (none: rises of the
    whole count only)."""
    job, segments = problem.replica_jobs[0], problem.segments
    scale, items, paying = bound._replica_items(problem, 0, {})
    kinds = bound._Kinds.of(problem, 0)
    found = rises.least(job, segments, kinds, items, paying, {}, singled)
    return None if found is None else Fraction(found, scale)


def test_a_rise_pays_the_least_setup_of_the_configs_it_may_use(make_scenario: Any) -> None:
    # as above, on two a100 offers at 10 a card-hour: o sets up in an hour, p in two. The
    # first replica opens on o (10 for its setup); the second, started at 02:00, pays o's
    # hour too (not p's two): 2×20 + 2×10 = 80, the optimum
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}, setup_minutes=60),
        offer("p", hourly={"price": 10, "stock": 4}, setup_minutes=120),
    ]
    problem = _rising_chat(make_scenario, offers)
    assert _rising(problem) == optimum(problem) == 80
    # o dearer by the hour (11): counting only the whole count, the opening is o's 2 h and
    # setup (33), the two replicas' hours from 02:00 are p's (40), and the rise pays the
    # least setup, o's 11 (not p's 20): 84, below the optimum (88, both on o); charging the
    # dearest setup would pass it
    offers[0]["hourly"]["price"] = 11
    problem = _rising_chat(make_scenario, offers)
    assert _rising_by_count(problem) == 33 + 40 + 11 < optimum(problem) == 88 < 33 + 40 + 20
    # with p (the config the least covers use) counted one by one, a p replica started at
    # 02:00 pays its 2 h setup (20). After the opening (33): two on p 40 + 40 = 80, one on
    # p and one on o 20 + 20 + 22 = 62, two on o 44 + 11 = 55: 88, the optimum
    assert _rising(problem) == optimum(problem) == 88


def test_a_switch_between_configs_pays_the_setup_of_the_one_started(make_scenario: Any) -> None:
    # chat on hourly a100s (a replica carries 100 in flight, 10 an hour) or h200s (220, 16
    # an hour), each setting up in an hour: 100 in flight until 02:00, 150 to 04:00. The
    # least covers: one a100 opening (3 h × 10 = 30), then one h200 (2 × 16 = 32): 62, and
    # the count stays 1, so counting rises of the whole count adds nothing. The h200 was
    # started at 02:00 and pays its setup hour (16): 78, the optimum (an h200 from the
    # start: 48 + 32 = 80; two a100s from 02:00: 30 + 40 + 10 = 80)
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}, setup_minutes=60),
        offer("p", card="h200-141g", hourly={"price": 16, "stock": 4}, setup_minutes=60),
    ]
    problem = _rising_chat(make_scenario, offers, concurrency={"00-02": 100, "02-24": 150})
    assert [c.capacity for c in problem.replica_jobs[0].configs] == [100, 220]
    assert bound._Floors(problem).replicas(0, {}) == _rising_by_count(problem) == 62
    assert _rising(problem) == optimum(problem) == 78


def test_a_rise_onto_committed_cards_costs_nothing(make_scenario: Any) -> None:
    # the same chat beside one committed hourly a100 card (held all day, no setup): the
    # first replica runs there for nothing, the second rents 2 h (20) and its setup hour
    # (10) in the optimum. The floors price a replica-hour on committed cards at nothing
    # (how many there are is the pool's charge's business), and a replica started there
    # pays no setup, so the rise adds nothing: 0, as the plain floors
    offers = [offer("o", hourly={"price": 10, "stock": 4}, setup_minutes=60)]
    held = {"offer": "o", "mode": "hourly", "units": 1, "start": "2026-07-01"}
    chat = planning.service(
        start="2026-07-01T00:00:00",
        end="2026-07-01T04:00:00",
        concurrency={"00-02": 100, "02-24": 200},
        max_cards_per_replica=1,
    )
    s = make_scenario(offers, [chat], days=1, commitments=[held])
    problem = build_problem(s, serving=True)
    commitment = sum((f.cost for f in problem.fixed), Fraction(0))
    assert commitment == 240
    assert _rising(problem) == bound._Floors(problem).replicas(0, {}) == 0
    assert optimum(problem) == commitment + 30


def test_rises_beyond_the_counted_replicas_are_counted_up_to_them(make_scenario: Any) -> None:
    # chat needs 100 until 02:00 and 2,000 after (20 a100 replicas) on cards that set up
    # in an hour at 10: the whole count is followed one by one up to RISING_MOST (16), so
    # its rise from 1 to 20 pays 15 setups, not 19: 3×10 + 20×20 + 15×10 = 580. The one
    # config counted on its own is followed up to its bound (20): all 19 pay, 620, the
    # optimum
    assert rises.RISING_MOST == 16
    offers = [offer("o", hourly={"price": 10, "stock": 24}, setup_minutes=60)]
    problem = _rising_chat(make_scenario, offers, concurrency={"00-02": 100, "02-24": 2000})
    assert _rising_by_count(problem) == 580
    assert _rising(problem) == optimum(problem) == 620


def test_a_minimum_beyond_the_counted_replicas_counts_every_rise(make_scenario: Any) -> None:
    # the same rise to 2,000 in flight where the second segment's minimum is 20 replicas
    # (as a service's class may require): the count reaches the minimum, so all 19 rises
    # pay: 3×10 + 20×20 + 19×10 = 620
    offers = [offer("o", hourly={"price": 10, "stock": 24}, setup_minutes=60)]
    problem = _rising_chat(make_scenario, offers, concurrency={"00-02": 100, "02-24": 2000})
    first = problem.replica_jobs[0]
    at = problem.segments.index(next(s for s in problem.segments if s[0] >= 2))
    minimum = tuple(20 if s >= at and m else m for s, m in enumerate(first.minimum))
    problem = replace(problem, replica_jobs=(replace(first, minimum=minimum),))
    assert _rising(problem) == 620


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    planning.services(days=2),
    st.sampled_from([30, 60, 120]),
    st.sampled_from([None, "a100-80g", "h200-141g"]),
    st.sampled_from([60, 180]),
    st.sampled_from([None, 9, 14]),
)
def test_setups_inside_a_run_never_exceed_the_optimum(
    make_scenario: Any,
    chat: dict[str, Any],
    setup: int,
    second: str | None,
    other: int,
    third: int | None,
) -> None:
    """One generated service alone on one-card replicas (so that its count rises with its
    curve) on hourly a100-80g cards that take `setup` minutes to set up, sometimes a
    dearer offer beside them that sets up in `other` minutes, and sometimes an h100 offer
    at `third` an hour that sets up in two hours (configs to switch between, some counted
    one by one and some together): the floors with the setups of replicas started inside
    a run lie between the plain floors and the optimum, and counting more configs one by
    one never lowers them."""
    chat = {**chat, "max_cards_per_replica": 1}
    offers = [offer("o", hourly={"price": 10, "stock": 4}, setup_minutes=setup)]
    if second:
        dearer = offer("p", card=second, hourly={"price": 23, "stock": 2}, setup_minutes=other)
        offers.append(dearer)
    if third:
        offers.append(offer("q", card="h100-80g", hourly={"price": third}, setup_minutes=120))
    try:
        problem = build_problem(make_scenario(offers, [chat], days=2), serving=True)
    except Infeasible:
        return
    job = problem.replica_jobs[0]
    _, items, _ = bound._replica_items(problem, 0, {})
    ranked = rises.ranked(job, problem.segments, bound._Kinds.of(problem, 0), items)
    # counting more configs one by one never lowers the program's least
    chain = [_rising_by_count(problem, ranked[:k]) for k in range(len(ranked) + 1)]
    assert None not in chain and chain == sorted(chain)  # type: ignore[type-var]
    rising = _rising(problem)
    assert rising == chain[-1] and rising >= bound._Floors(problem).replicas(0, {})
    best = optimum(problem)
    assert best is None or rising <= best


def test_packages_every_plan_buys_stay_in_the_bound_without_packages(
    make_scenario: Any,
) -> None:
    # a 10-hour job that only a daily h200 package runs (150: every plan buys one), and
    # the desk of the test above, on hourly a100s (90) or daily a100 packages (60). Plans
    # that buy no package but the forced one cost at least 240; the plan buys the desk's
    # packages too and costs 210, so they save at least 30
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}),
        offer("p", card="h200-141g", daily={"price": 150, "stock": 1}),
        offer("q", daily={"price": 20, "stock": 1}),
    ]
    workloads = [planning.only_on_h200("j", 10), planning.reserve("desk", 1, days=3)]
    s = make_scenario(offers, workloads, days=3)
    problem = build_problem(s, serving=True)
    assert bound.without_packages(problem) is None  # the job runs only on packages
    assert bound.without_packages(problem, {("p", "daily"): 1}) == 240
    plan = planning.solved(s).plan
    assert plan is not None and plan.total_cost == 210
    assert plan.bound_without_packages == 240
    line = views.without_packages(plan)
    assert line is not None and line.startswith("no plan that buys no package but on p daily")
    assert "other packages this plan buys (q daily) save at least CNY 30.00" in line


def test_committed_cards_are_paid_back_only_on_the_days_they_are_held(make_scenario: Any) -> None:
    # a daily package of one card at 48 is committed for day 0, where a desk uses it
    # 09:00-10:00; a 10 h job may run only on day 1, hourly at 1 (10) or on a second
    # package (48). The optimum: 48 + 10 = 58. One charge for the whole horizon makes the
    # committed card cheap on day 1 too: at 0 the job runs free (48), and any dearer
    # charge takes more off the committed package than the job pays. Charged by segment,
    # day 0's charge is 0 and day 1's up to 2 a card-hour (48 ÷ 24, a second package's
    # price): the job pays its hourly 10, and the bound is the optimum
    offers = [
        offer("o", hourly={"price": 1, "stock": 2}),
        offer("p", daily={"price": 48, "stock": 2}),
    ]
    held = {"offer": "p", "mode": "daily", "units": 1, "start": "2026-07-01", "count": 1}
    work = job("j", 10, earliest_start="2026-07-02", deadline="2026-07-03")
    desk = planning.reserve("desk", 1, "09:00-10:00", days=1)
    s = make_scenario(offers, [work, desk], days=2, commitments=[held])
    problem = build_problem(s, serving=True)
    assert lower_bound(problem, by_day=False).total == 48
    found = lower_bound(problem, by_segment=True, by_day=False)
    assert found.total == optimum(problem) == 58
    assert found.segments is not None


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed(), st.integers(0, 2), st.integers(20, 300))
def test_the_bound_with_a_committed_package_never_exceeds_the_optimum(
    make_scenario: Any, instance: dict[str, Any], day: int, price: int
) -> None:
    """One daily package committed on a drawn day (the first offer sells them at `price`
    where it sells none): its cards paid back each segment's charge only while held."""
    offers = [dict(o) for o in instance["offers"]]
    first = offers[0]
    first.setdefault("daily", {"price": price, "stock": 2})
    held = {
        "offer": first["id"],
        "mode": "daily",
        "units": 1,
        "start": f"2026-07-{1 + day:02d}",
        "count": 1,
    }
    s = make_scenario(offers, instance["jobs"], days=3, commitments=[held])
    try:
        problem = build_problem(s, serving=True)
    except Infeasible:
        return
    best = optimum(problem)
    if best is not None:
        assert lower_bound(problem, by_segment=True, by_day=False).total <= best
        assert lower_bound(problem, by_segment=True).total <= best


def test_rises_are_priced_at_each_segments_charge(make_scenario: Any) -> None:
    # the rising chat (one replica 00-02, two 02-04) on hourly cards at 10 that take an
    # hour to set up, beside a daily package pool charged by segment. At 100 a card-hour
    # everywhere the package cards are never worth it: 2 × 10 + 10 (the first replica's
    # setup) + 2 × 2 × 10 = 70 by segment, and the rise pays its setup too: 80. Free
    # before 02:00 and 100 after, the first replica sits on package cards for nothing;
    # at 02:00 two rented replicas start, both paying their setup: 2 × (2 + 1) × 10 =
    # 60, where the segments alone see 40
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}, setup_minutes=60),
        offer("p", daily={"price": 1000, "stock": 4}),
    ]
    problem = _rising_chat(make_scenario, offers)
    pool = ("p", "daily")

    def floors(charge: Callable[[int], int]) -> tuple[Fraction, Fraction | None]:
        row = tuple(Fraction(charge(a)) for a, _ in problem.segments)
        at = bound._Floors(problem, charges.Charges({pool: row}))
        return at.replicas(0, {}), at.rising(0, {})

    assert floors(lambda hour: 100) == (70, 80)
    assert floors(lambda hour: 0 if hour < 2 else 100) == (40, 60)
    # demand 100, 200, 100, 200 over four 2-hour segments, the package cards free only in
    # the last: 30 (opening) + 2 × 20 + 10 (the rise) + 20, and two replicas free on them
    # at 06:00: 100 (90 per segment). Priced at the first 200-segment's charges, the last
    # would cost 40 + 10 more: its charges, not only its demand, name its costs
    problem = _rising_chat(
        make_scenario,
        offers,
        end="2026-07-01T08:00:00",
        concurrency={"00-02": 100, "02-04": 200, "04-06": 100, "06-24": 200},
    )
    assert floors(lambda hour: 0 if hour >= 6 else 100) == (90, 100)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_moving_between_states_pays_each_rise_at_its_axis_rate(data: st.DataObject) -> None:
    """`rises._moved` (the program's step) against every pair of states: reaching v from u
    costs u's cost plus, along each axis, the rise's rate per replica started; falling
    costs nothing. Unreachable states (inf) stay unreachable only where no state reaches."""
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    cells = math.prod(shape)
    values = data.draw(
        st.lists(st.one_of(st.integers(0, 50), st.just(-1)), min_size=cells, max_size=cells)
    )
    state = np.array([math.inf if v < 0 else float(v) for v in values]).reshape(shape)
    paid = data.draw(st.lists(st.integers(0, 6), min_size=len(shape), max_size=len(shape)))
    ramps = [
        np.arange(n, dtype=float).reshape([n if k == j else 1 for k in range(len(shape))])
        for j, n in enumerate(shape)
    ]
    moved = rises._moved(state.copy(), paid, ramps)
    for v in itertools.product(*map(range, shape)):
        least = min(
            state[u] + sum(r * max(b - a, 0) for r, a, b in zip(paid, u, v, strict=True))
            for u in itertools.product(*map(range, shape))
        )
        assert moved[v] == least
