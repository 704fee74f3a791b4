"""Durations, hours of the day, weekdays, curves and money: parsing and invariants."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.domain.money import from_minor, to_minor
from planner.domain.values import (
    format_minutes,
    parse_days,
    parse_minutes,
    parse_week_curve,
    parse_window,
)


@pytest.mark.parametrize(
    ("text", "minutes"), [("30m", 30), ("14h", 840), ("2d", 2880), ("1h30m", 90), ("90min", 90)]
)
def test_durations(text: str, minutes: int) -> None:
    assert parse_minutes(text) == minutes


@pytest.mark.parametrize("bad", ["", "30", "h", "1.5h", "-1h", 30, True, "30 minutes"])
def test_bad_durations_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="expected a duration"):
        parse_minutes(bad)


@given(st.integers(min_value=0, max_value=10**6))
def test_duration_format_round_trips(minutes: int) -> None:
    assert parse_minutes(format_minutes(minutes)) == minutes


def test_windows() -> None:
    day = parse_window("08:00-22:00")
    assert (day.start_hour, day.end_hour, day.hours) == (8, 22, 14)
    night = parse_window("22:00-06:00")
    assert night.crosses_midnight and night.hours == 8
    assert night.contains(23) and night.contains(0) and not night.contains(6)
    assert parse_window("00:00-24:00").hours == 24
    assert parse_window("20:00-00:00").end_hour == 24


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("08:30-22:00", "whole hours"),
        ("8 to 22", "hours of the day"),  # "8-22", a curve's form, is read as 08:00-22:00
        ("10:00-10:00", "empty"),
        ("25:00-26:00", "00:00 to 24:00"),
    ],
)
def test_bad_windows(bad: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_window(bad)


def test_days() -> None:
    assert parse_days("weekdays") == (0, 1, 2, 3, 4)
    assert parse_days(["sat", "mon"]) == (0, 5)
    with pytest.raises(ValueError, match="unknown day 'monday'"):
        parse_days(["monday"])


def test_curve_by_hour_and_weekday() -> None:
    week = parse_week_curve({"weekdays": {"00-08": 2, "08-24": 10}, "weekend": 1})
    assert week[0][7] == 2 and week[0][8] == 10 and week[6][12] == 1


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ({"00-08": 1, "09-24": 2}, "hours 08 have no level"),
        ({"00-12": 1, "10-24": 2}, "hour 10 is covered twice"),
        ({"mon": 1}, "no levels for tue"),
        ({"weekdays": 1, "fri": 2, "weekend": 3}, "fri is given twice"),
        ({"00-24": -1}, "≥ 0"),
        ({"8 to 12": 1}, "should look like"),
        ({"weekdays": 1, "weekned": 2}, "unknown day group 'weekned'; did you mean weekend?"),
        ({"weeknd": 1}, "unknown day group 'weeknd'; did you mean weekend?"),
        ({"weekdays": 1, "00-24": 2}, "'00-24' is an hour range beside day groups"),
    ],
)
def test_bad_curves(bad: object, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_week_curve(bad)


@given(
    st.lists(st.integers(min_value=1, max_value=23), unique=True, max_size=6).map(sorted),
    st.data(),
)
def test_any_partition_of_the_day_is_one_level_per_hour(
    cuts: list[int], data: st.DataObject
) -> None:
    bounds = [0, *cuts, 24]
    levels = data.draw(
        st.lists(st.integers(0, 500), min_size=len(bounds) - 1, max_size=len(bounds) - 1)
    )
    spans = list(zip(bounds[:-1], bounds[1:], levels, strict=True))
    week = parse_week_curve({f"{a:02d}-{b:02d}": v for a, b, v in spans})
    assert len(week) == 7 and all(len(day) == 24 for day in week)
    for a, b, v in spans:
        assert all(week[3][h] == v for h in range(a, b))


def test_money_rounds_once_half_even() -> None:
    assert to_minor(Decimal("2.005"), "CNY") == 200  # half to even
    assert to_minor(Decimal("2.015"), "CNY") == 202
    assert to_minor(Fraction(10036, 720) * 410, "CNY") == 571494  # 5714.944… → 5714.94
    assert to_minor(Decimal("1234.5"), "JPY") == 1234
    assert from_minor(571494, "CNY") == Decimal("5714.94")


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_minor_units_round_trip(minor: int) -> None:
    assert to_minor(from_minor(minor, "CNY"), "CNY") == minor


@given(st.fractions(), st.fractions())
def test_rounding_is_monotone(a: Fraction, b: Fraction) -> None:
    low, high = sorted((a, b))
    assert to_minor(low, "USD") <= to_minor(high, "USD")
    assert abs(Fraction(to_minor(a, "USD"), 100) - a) <= Fraction(1, 200)
