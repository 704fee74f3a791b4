"""Plans across daylight-saving changes: billed on real hours, windows and packages on local
wall-clock time (planner/domain/timeaxis.py). Each case is asserted on the model alone
(CP-SAT, decoded to a plan, no checker), then round-tripped through JSON and the checker
by `solve`. Horizons are three local days; day 1 (the second) is the change."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal
from typing import Any

import pytest

from planner.check import check_plan
from planner.cpsat.model import CpModel, SolverSettings
from planner.domain.costs import CostTerm
from planner.domain.plan import Plan
from planner.problem import build_problem
from planner.solution import to_plan
from tests.planning import job, offer, solved

SETTINGS = SolverSettings(time_limit=20, workers=2, seed=0, deterministic=True)
HOURLY = {"price": 10, "stock": 4}

# (zone, first day of the horizon, the change day, real hours of the change day)
CHANGES = [
    ("Europe/Berlin", "2026-10-24", "2026-10-25", 25),
    ("Europe/Berlin", "2026-03-28", "2026-03-29", 23),
    ("America/New_York", "2026-10-31", "2026-11-01", 25),
    ("America/New_York", "2026-03-07", "2026-03-08", 23),
]
IDS = ["berlin-autumn", "berlin-spring", "new-york-autumn", "new-york-spring"]


def planned(s: Any) -> Plan:
    """The optimal plan of the model alone, decoded (no checker involved)."""
    problem = build_problem(s, serving=True)
    outcome = CpModel(problem).solve(SETTINGS)
    assert outcome.status == "optimal" and outcome.solution is not None
    return to_plan(problem, outcome.solution, outcome.status)


def round_trip(s: Any) -> Plan:
    """solve → JSON → Plan → check: the checker accepts it and its total is the solver's."""
    result = solved(s)
    assert result.plan is not None, result.reasons
    plan = Plan.model_validate_json(result.plan.model_dump_json())
    check = check_plan(s, plan)
    assert check.ok, check.violations
    assert check.total == result.objective
    return plan


def local(value: dt.datetime) -> str:
    """A plan time as wall clock and offset: '2026-10-25T04:00+01:00'."""
    return value.isoformat(timespec="minutes")


def offset(zone: str, day: str, hour: int) -> str:
    """The UTC offset in force at `day` `hour`:00 local time, as '+01:00'."""
    when = dt.datetime.fromisoformat(f"{day}T{hour:02d}:00").replace(tzinfo=zoneinfo.ZoneInfo(zone))
    return when.isoformat()[-6:]


# --- (a) an hourly job whose run crosses the change is billed its real hours ---------------


def hourly_case(make_scenario: Any, zone: str, first: str, change: str, length: int) -> Any:
    # 5 real hours from 00:00 on the change day end at 04:00 (autumn) or 06:00 (spring)
    # local time; the deadline, read at local time, allows exactly that.
    end = 4 if length == 25 else 6
    work = job("j", 5, earliest_start=f"{change}T00:00", deadline=f"{change}T{end:02d}:00")
    s = make_scenario([offer("o", hourly=HOURLY)], [work], days=3, timezone=zone, start=first)
    return s, end


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_an_hourly_run_across_the_change_bills_its_real_hours(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    s, end = hourly_case(make_scenario, zone, first, change, length)
    plan = planned(s)
    [rental] = plan.rentals
    assert local(rental.start) == f"{change}T00:00{offset(zone, change, 0)}"
    assert local(rental.end) == f"{change}T{end:02d}:00{offset(zone, change, end)}"
    assert rental.billed_hours == 5 and plan.total_cost == Decimal("50.00")
    assert plan.train[0].hours == 5


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_an_hourly_run_across_the_change_round_trips(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    s, _ = hourly_case(make_scenario, zone, first, change, length)
    assert round_trip(s).total_cost == Decimal("50.00")


# --- (b) a daily window on the change day has its real length ------------------------------


def window_case(make_scenario: Any, zone: str, first: str, change: str, length: int) -> Any:
    # 00:00-06:00 on the change day is 7 (autumn) or 5 (spring) real hours: a job of exactly
    # that much work runs in one window.
    hours = 6 + length - 24
    work = job("j", hours, daily_hours="00:00-06:00", earliest_start=change)
    s = make_scenario([offer("o", hourly=HOURLY)], [work], days=3, timezone=zone, start=first)
    return s, hours


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_a_window_on_the_change_day_runs_its_real_hours(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    s, hours = window_case(make_scenario, zone, first, change, length)
    plan = planned(s)
    [rental] = plan.rentals
    assert local(rental.start) == f"{change}T00:00{offset(zone, change, 0)}"
    assert local(rental.end) == f"{change}T06:00{offset(zone, change, 6)}"
    assert rental.billed_hours == hours and plan.total_cost == 10 * hours


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_a_window_on_the_change_day_round_trips(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    s, hours = window_case(make_scenario, zone, first, change, length)
    assert round_trip(s).total_cost == 10 * hours


def after_case(make_scenario: Any, zone: str, first: str, change: str) -> Any:
    # a 6 h job in 00:00-06:00 windows from the day after the change: its start, 00:00
    # local, is 23 or 25 h after a midnight a whole number of days before it, not 24 × n
    following = (dt.date.fromisoformat(change) + dt.timedelta(days=1)).isoformat()
    work = job("j", 6, daily_hours="00:00-06:00", earliest_start=following)
    s = make_scenario([offer("o", hourly=HOURLY)], [work], days=3, timezone=zone, start=first)
    return s, following


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_a_window_after_the_change_opens_at_local_midnight(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    s, following = after_case(make_scenario, zone, first, change)
    [rental] = planned(s).rentals
    assert local(rental.start) == f"{following}T00:00{offset(zone, following, 0)}"
    assert local(rental.end) == f"{following}T06:00{offset(zone, following, 6)}"


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_a_window_after_the_change_round_trips(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    s, _ = after_case(make_scenario, zone, first, change)
    assert round_trip(s).total_cost == 60


def test_a_windowed_config_splits_by_the_shape_of_its_runs(make_scenario: Any) -> None:
    # 12 h of work in 00:00-06:00 windows, Berlin, 24-27 October: started on the 24th or
    # the 26th it runs 6 + 6 h a day later; started on the 25th (a 7 h window) 7 + 5 h, the
    # second run 25 real hours after the first. One config per shape, each with its starts
    # (the openings at real hours 0, 24 and 49 here; starts inside a window make more shapes).
    work = job("j", 12, daily_hours="00:00-06:00")
    s = make_scenario(
        [offer("o", hourly=HOURLY)], [work], days=4, timezone="Europe/Berlin", start="2026-10-24"
    )
    [j] = build_problem(s).jobs
    openings = {0, 24, 49}
    shapes = {c.runs: tuple(h for h in j.start_range(c) if h in openings) for c in j.configs}
    assert {k: v for k, v in shapes.items() if v} == {
        ((0, 6), (24, 6)): (0, 49),
        ((0, 7), (25, 5)): (24,),
    }
    # started at 01:00 on the 24th: 5 h that night (01-06), then the 25th's 7-hour window
    # (opening 23 h after the start) holds the other 7 h
    assert ((0, 5), (23, 7)) in shapes
    assert {c.billed_hours for c in j.configs} == {12}
    plan = round_trip(s)
    assert [r.billed_hours for r in plan.rentals] == [6, 6]  # the earliest finish wins
    # from the 25th on, the 7 + 5 h shape finishes first; its second run starts 00:00 CET
    work["earliest_start"] = "2026-10-25"
    s = make_scenario(
        [offer("o", hourly=HOURLY)], [work], days=4, timezone="Europe/Berlin", start="2026-10-24"
    )
    plan = round_trip(s)
    assert [r.billed_hours for r in plan.rentals] == [7, 5]
    assert local(plan.rentals[1].start) == "2026-10-26T00:00+01:00"


# --- (c) a daily package on the change day covers 23 or 25 real hours -----------------------


def package_case(make_scenario: Any, zone: str, first: str, change: str) -> Any:
    # only a daily package sells the card: the 5 h job on the change day buys one
    daily = {"price": 240, "stock": 1}
    work = job("j", 5, earliest_start=change, deadline=f"{change}T12:00")
    return make_scenario([offer("o", daily=daily)], [work], days=3, timezone=zone, start=first)


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_a_package_on_the_change_day_holds_its_real_hours(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    plan = planned(package_case(make_scenario, zone, first, change))
    [package] = plan.rentals
    following = (dt.date.fromisoformat(change) + dt.timedelta(days=1)).isoformat()
    assert local(package.start) == f"{change}T00:00{offset(zone, change, 0)}"
    assert local(package.end) == f"{following}T00:00{offset(zone, following, 0)}"
    assert package.billed_hours == length and package.cost == 240
    assert plan.total_cost == 240 and plan.train[0].held


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York"])
def test_a_job_keeps_its_machine_through_a_window_lost_to_the_spring_change(
    make_scenario: Any, zone: str
) -> None:
    # 3 h of work in 02:00-03:00 windows over four days from the day before the change: that
    # window does not exist on the change day, so the job runs on days 1, 3 and 4. On daily
    # packages of one card at 100 it keeps its unit from the first run to the last (rule
    # 5), so the change day is held too: 4 x 100 = 400.00. The packages of its run days
    # alone (300.00) would leave it no machine on the change day: no plan passed the
    # checker (exit 4) and none was shown.
    change = {"Europe/Berlin": "2026-03-29", "America/New_York": "2026-03-08"}[zone]
    first = (dt.date.fromisoformat(change) - dt.timedelta(days=1)).isoformat()
    work = job("j", 3, daily_hours="02:00-03:00")
    daily = offer("o", daily={"price": 100})
    result = solved(make_scenario([daily], [work], days=4, timezone=zone, start=first))
    assert result.status == "optimal" and result.plan is not None
    assert result.plan.total_cost == Decimal("400.00")
    runs = result.plan.train[0].runs
    assert [(r.end - r.start).total_seconds() for r in runs] == [3600] * 3


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_a_package_on_the_change_day_round_trips_with_idle_on_real_hours(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    plan = round_trip(package_case(make_scenario, zone, first, change))
    assert plan.total_cost == 240
    assert plan.cost_breakdown.reported[CostTerm.IDLE].amount == length - 5


# --- (d) reserved cards follow an hourly curve across the change ----------------------------


def reserve_case(make_scenario: Any, zone: str, first: str, change: str) -> Any:
    # 2 cards 01:00-04:00 local every day: 3 real hours, but 4 on an autumn change day (one
    # hour repeats) and 2 in spring (one hour is skipped).
    people = {
        "name": "devs",
        "kind": "reserve",
        "card": "a100-80g",
        "cards": 2,
        "hours": "01:00-04:00",
        "start": first,
        "end": (dt.date.fromisoformat(first) + dt.timedelta(days=3)).isoformat(),
    }
    return make_scenario([offer("o", hourly=HOURLY)], [people], days=3, timezone=zone, start=first)


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_reserved_cards_follow_local_hours_across_the_change(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    plan = planned(reserve_case(make_scenario, zone, first, change))
    change_hours = 3 + length - 24  # 4 or 2
    assert plan.total_cost == 10 * 2 * (3 + change_hours + 3)
    on_change = [r for r in plan.rentals if r.start.date().isoformat() == change]
    assert sum(r.billed_hours * r.units for r in on_change) == 2 * change_hours
    assert {r.start.hour for r in plan.rentals} == {1}
    assert {r.end.hour for r in plan.rentals} == {4}


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_reserved_cards_across_the_change_round_trip(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    plan = round_trip(reserve_case(make_scenario, zone, first, change))
    assert plan.total_cost == 10 * 2 * (3 + (3 + length - 24) + 3)


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_a_package_used_in_every_hour_of_the_change_day_leaves_nothing_unused(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    # one card all day for three days on daily packages at 24.00 (hourly at 10.00 would cost
    # 10 × 24 = 240.00 a day): 3 × 24.00 = 72.00. Shares are priced on nominal 24 h days,
    # so the 25 h day's user would be charged 25.00 for its 24.00 package: the shares are
    # scaled down to what the packages cost, and nothing is "held cards no workload uses"
    people = {
        "name": "devs", "kind": "reserve", "card": "a100-80g", "cards": 1,
        "hours": "00:00-24:00", "start": first,
        "end": (dt.date.fromisoformat(first) + dt.timedelta(days=3)).isoformat(),
    }  # fmt: skip
    daily = {"price": 24, "stock": 2}
    s = make_scenario([offer("o", hourly=HOURLY, daily=daily)], [people], days=3, timezone=zone,
                      start=first)  # fmt: skip
    plan = round_trip(s)
    assert plan.total_cost == 72
    [devs] = plan.assignments
    assert devs.package_share == 72
    assert plan.cost_breakdown.held_unused == 0
    assert plan.cost_breakdown.reported[CostTerm.IDLE].amount == 0


# --- serving demand read at local wall-clock time --------------------------------------------


def serve_case(make_scenario: Any, zone: str, first: str, length: int) -> Any:
    # one replica's worth of requests in flight in one local hour every day: the hour that
    # happens twice on an autumn change day (02:00 in Berlin, 01:00 in New York), or the
    # one that never happens on a spring one (02:00)
    from planner.configs import replica_configs

    hour = 1 if (zone, length) == ("America/New_York", 25) else 2

    service = {
        "name": "chat",
        "kind": "serve",
        "model": "llama-3.1-8b",
        "start": first,
        "end": (dt.date.fromisoformat(first) + dt.timedelta(days=3)).isoformat(),
        "context_tokens": 4096,
        "min_tokens_per_s": 20,
        "concurrency": 1,
        "min_replicas": 0,
        "setup_minutes": 0,
    }
    offers = [offer("o", hourly=HOURLY)]
    probe = make_scenario(offers, [service], days=3, timezone=zone, start=first)
    capacity = min(c.capacity for c in replica_configs(probe, probe.workload("chat")))
    service["concurrency"] = {
        f"00-{hour:02d}": 0,
        f"{hour:02d}-{hour + 1:02d}": capacity,
        f"{hour + 1:02d}-24": 0,
    }
    return make_scenario(offers, [service], days=3, timezone=zone, start=first)


@pytest.mark.parametrize(("zone", "first", "change", "length"), CHANGES, ids=IDS)
def test_a_serving_curve_is_read_at_local_time_across_the_change(
    make_scenario: Any, zone: str, first: str, change: str, length: int
) -> None:
    s = serve_case(make_scenario, zone, first, length)
    hours = 1 + (length - 23) + 1  # 1 + {2 or 0} + 1 real hours of demand
    plan = planned(s)
    assert plan.total_cost == 10 * hours
    assert round_trip(s).total_cost == 10 * hours


# --- the command line ----------------------------------------------------------------------


def test_plan_tables_show_offsets_across_a_change(make_scenario: Any, cli: Any) -> None:
    s, _ = hourly_case(make_scenario, *CHANGES[0])
    result = cli("solve", s.path, "--workers", "2", "--deterministic")
    assert result.exit_code == 0, result.output
    assert "10-25 00:00 +02:00" in result.stdout and "10-25 04:00 +01:00" in result.stdout


def test_a_half_hour_change_in_the_horizon_is_an_input_problem(
    make_scenario: Any, cli: Any
) -> None:
    s = make_scenario(
        [offer("o", hourly=HOURLY)],
        [job("j", 5)],
        days=3,
        timezone="Australia/Lord_Howe",
        start="2026-04-04",  # 02:00 → 01:30 on 5 April
    )
    for command in (("validate", s.path), ("solve", s.path), ("quote", s.path, "j")):
        result = cli(*command)
        assert result.exit_code == 1 and "fraction of an hour" in result.stderr


def test_a_package_reason_counts_the_real_length_of_a_day_the_clocks_go_back(
    make_scenario: Any,
) -> None:
    # New York, from Sunday 11-01 (25 h) for a week; one card all day; hourly 10, daily 245
    # (24.5 h), weekly 1,684 (168.4 h). The plan buys the weekly package (169 h of hourly
    # would be 1,690). The daily package is not dearer than its whole length of hourly on
    # 11-01 (25 h = 250), so that is not the reason given, and each says its real hours.
    from tests.planning import reserve

    o = offer("o", hourly={"price": 10}, daily={"price": 245}, weekly={"price": 1684})
    desk = reserve("desk", 1, "00:00-24:00", days=7, start="2026-11-01", end="2026-11-08")
    s = make_scenario([o], [desk], days=7, timezone="America/New_York", start="2026-11-01")
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("1684.00")
    daily = next(line for line in plan.decisions if line.startswith("o daily"))
    weekly = next(line for line in plan.decisions if line.startswith("o weekly"))
    assert "(of its 24-25 h by the clock)" in daily
    assert "costs at least its whole length" not in daily
    assert "(of its 168-169 h by the clock)" in weekly
