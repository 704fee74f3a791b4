"""The one time axis (planner/domain/timeaxis.py) across daylight-saving changes: hour
indices are real elapsed hours; days, windows and text follow local wall-clock time."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest

from planner.domain.timeaxis import TimeAxis, TimeAxisError
from planner.domain.values import parse_window

BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")

# (zone, first day of a 3-day horizon, its day 1 is the change, real hours of that day)
CHANGES = [
    (BERLIN, dt.date(2026, 10, 24), 25),  # 03:00 CEST → 02:00 CET on Sunday 25 October
    (BERLIN, dt.date(2026, 3, 28), 23),  # 02:00 CET → 03:00 CEST on Sunday 29 March
    (NEW_YORK, dt.date(2026, 10, 31), 25),  # 02:00 EDT → 01:00 EST on Sunday 1 November
    (NEW_YORK, dt.date(2026, 3, 7), 23),  # 02:00 EST → 03:00 EDT on Sunday 8 March
]
IDS = ["berlin-autumn", "berlin-spring", "new-york-autumn", "new-york-spring"]


@pytest.mark.parametrize(("tz", "first", "length"), CHANGES, ids=IDS)
def test_the_change_day_has_23_or_25_real_hours(
    tz: zoneinfo.ZoneInfo, first: dt.date, length: int
) -> None:
    axis = TimeAxis(first, 3, tz)
    assert [axis.day_hours(d) for d in range(3)] == [24, length, 24]
    assert axis.hours == 48 + length
    assert [axis.day_start(d) for d in range(4)] == [0, 24, 24 + length, 48 + length]
    assert axis.day_of(24 + length - 1) == 1 and axis.day_of(24 + length) == 2


@pytest.mark.parametrize(("tz", "first", "length"), CHANGES, ids=IDS)
def test_every_hour_reads_back_to_itself(
    tz: zoneinfo.ZoneInfo, first: dt.date, length: int
) -> None:
    axis = TimeAxis(first, 3, tz)
    for h in range(-30, axis.hours + 30):
        when = axis.instant(h)
        assert axis.hour(when) == h
        # as written to JSON and read back: a fixed offset, not the zone
        assert axis.hour(dt.datetime.fromisoformat(when.isoformat())) == h
        assert axis.hour(dt.datetime.strptime(axis.text(h), "%Y-%m-%d %H:%M %z")) == h


def _exists(naive: dt.datetime, tz: zoneinfo.ZoneInfo) -> bool:
    """A local wall-clock time exists when it survives a round trip through UTC."""
    aware = naive.replace(tzinfo=tz)
    return aware.astimezone(dt.UTC).astimezone(tz).replace(tzinfo=None) == naive


@pytest.mark.parametrize(("tz", "first", "length"), CHANGES, ids=IDS)
def test_text_never_shows_a_nonexistent_local_time(
    tz: zoneinfo.ZoneInfo, first: dt.date, length: int
) -> None:
    axis = TimeAxis(first, 3, tz)
    texts = [axis.text(h) for h in range(axis.hours)]
    assert len(set(texts)) == axis.hours  # a repeated hour differs by its offset
    for h in range(axis.hours):
        assert _exists(axis.local(h), tz)


def test_a_nonexistent_local_time_is_the_first_instant_after_the_gap() -> None:
    axis = TimeAxis(dt.date(2026, 3, 28), 3, BERLIN)
    two = axis.hour_of_local(dt.datetime(2026, 3, 29, 2))
    three = axis.hour_of_local(dt.datetime(2026, 3, 29, 3))
    assert two == three == 24 + 2  # 00:00, 01:00, then 03:00 CEST
    assert axis.text(two) == "2026-03-29 03:00 +02:00"
    axis = TimeAxis(dt.date(2026, 3, 7), 3, NEW_YORK)
    assert axis.hour_of_local(dt.datetime(2026, 3, 8, 2)) == 24 + 2
    assert axis.text(24 + 2) == "2026-03-08 03:00 -04:00"


def test_an_ambiguous_local_time_is_its_first_occurrence() -> None:
    axis = TimeAxis(dt.date(2026, 10, 24), 3, BERLIN)
    first = axis.hour_of_local(dt.datetime(2026, 10, 25, 2))
    assert first == 24 + 2
    assert axis.text(first) == "2026-10-25 02:00 +02:00"
    assert axis.text(first + 1) == "2026-10-25 02:00 +01:00"  # the repeated hour
    assert axis.hour_of_local(dt.datetime(2026, 10, 25, 3)) == 24 + 4
    axis = TimeAxis(dt.date(2026, 10, 31), 3, NEW_YORK)
    assert axis.hour_of_local(dt.datetime(2026, 11, 1, 1)) == 24 + 1
    assert axis.text(24 + 2) == "2026-11-01 01:00 -05:00"


@pytest.mark.parametrize(("tz", "first", "length"), CHANGES, ids=IDS)
def test_a_window_on_the_change_day_has_its_real_hours(
    tz: zoneinfo.ZoneInfo, first: dt.date, length: int
) -> None:
    axis = TimeAxis(first, 3, tz)
    night = parse_window("00:00-06:00")
    assert axis.window(0, night) == (0, 6)
    opens, closes = axis.window(1, night)
    assert (opens, closes - opens) == (24, 6 + length - 24)  # 7 or 5 real hours
    assert axis.window(2, night) == (24 + length, 30 + length)
    whole = parse_window("00:00-24:00")
    assert axis.window(1, whole) == (24, 24 + length)
    # a window across midnight belongs to the day it opens, whatever its real length
    late = parse_window("22:00-06:00")
    opens, closes = axis.window(0, late)
    assert (opens, closes - opens) == (22, 8 + length - 24)
    assert axis.in_window(24 + 3, late) == 0 and axis.in_window(12, late) is None
    assert axis.in_window(24 + 3, night) == 1


def test_a_half_hour_change_is_refused() -> None:
    lord_howe = zoneinfo.ZoneInfo("Australia/Lord_Howe")  # 02:00 → 01:30 on 5 April 2026
    with pytest.raises(TimeAxisError, match="fraction of an hour"):
        TimeAxis(dt.date(2026, 4, 4), 3, lord_howe)
    assert TimeAxis(dt.date(2026, 5, 1), 30, lord_howe).hours == 30 * 24  # no change inside


def test_after_days_passes_the_horizon_on_local_midnights() -> None:
    axis = TimeAxis(dt.date(2026, 10, 20), 3, BERLIN)
    assert axis.after_days(0, 3) == axis.hours == 72
    assert axis.after_days(0, 7) == 7 * 24 + 1  # 27 October 00:00 CET, past the change
    assert axis.text(axis.after_days(2, 5)) == "2026-10-27 00:00 +01:00"
