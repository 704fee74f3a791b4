"""The one time axis: hour indices ↔ local time, with one rule for daylight-saving changes.

The rule (docs/planning.md, "Time"):
- An hour index counts **real elapsed hours** from 00:00 local time of the horizon's first
  day. Billing, stock and durations are in real hours, as providers bill them.
- Days, daily windows, packages' 00:00, demand curves and reports follow **local wall-clock
  time**: a local day lasts 23, 24 or 25 real hours across a change.
- A local time that does not exist (clocks spring forward) is read as the first instant
  after the gap (02:30 → 03:00 in Berlin on the last Sunday of March); an ambiguous one
  (clocks fall back) as its first occurrence.
- Times are written as aware datetimes with the offset in force at that instant, so a
  nonexistent local time is never written and every written time reads back to one index.

Nobody else does datetime arithmetic on hour indices: the model, the checker, the reports
and the CLI all ask this object.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass, field

from planner.domain.values import DailyWindow

HOUR = dt.timedelta(hours=1)
UTC = dt.UTC


class TimeAxisError(ValueError):
    """A time that is not on the axis (not a whole hour from the horizon start)."""


@dataclass(frozen=True)
class TimeAxis:
    """Hour indices of one horizon in one timezone."""

    first_day: dt.date
    days: int  # local days in the horizon (end exclusive)
    tz: zoneinfo.ZoneInfo
    _day_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _origin: dt.datetime = field(init=False, repr=False, compare=False)
    # hour indices of local 00:00 past the horizon's end, as asked (packages run past it)
    _beyond: dict[int, int] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        origin = _to_utc(dt.datetime.combine(self.first_day, dt.time()), self.tz)
        object.__setattr__(self, "_origin", origin)
        starts = []
        for d in range(self.days + 1):
            midnight = dt.datetime.combine(self.first_day + dt.timedelta(days=d), dt.time())
            seconds = (_to_utc(midnight, self.tz) - origin).total_seconds()
            if seconds % 3600:
                raise TimeAxisError(
                    f"timezone {self.tz.key}: a clock change of a fraction of an hour falls "
                    f"inside the horizon (before {midnight:%Y-%m-%d}); the planner's step is "
                    "one whole hour"
                )
            starts.append(int(seconds // 3600))
        object.__setattr__(self, "_day_starts", tuple(starts))

    # --- the horizon -------------------------------------------------------------------
    @property
    def hours(self) -> int:
        """Real hours in the horizon."""
        return self._day_starts[-1]

    def day_start(self, day: int) -> int:
        """The hour index of local 00:00 of day `day` (0 … days; `days` is the horizon end)."""
        return self._day_starts[day]

    def day_hours(self, day: int) -> int:
        """Real hours in local day `day` (23, 24 or 25)."""
        return self._day_starts[day + 1] - self._day_starts[day]

    def day_of(self, hour: int) -> int:
        """The local day containing hour index `hour` (days before or after the horizon are
        counted on from its ends, at 24 h each)."""
        if hour < 0:
            return -((-hour + 23) // 24)
        if hour >= self.hours:
            return self.days + (hour - self.hours) // 24
        lo, hi = 0, self.days - 1
        while lo < hi:  # the last day whose 00:00 is at or before `hour`
            mid = (lo + hi + 1) // 2
            if self._day_starts[mid] <= hour:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def date(self, day: int) -> dt.date:
        return self.first_day + dt.timedelta(days=day)

    def after_days(self, day: int, length: int) -> int:
        """Hour index of 00:00 `length` local days after day `day` (may pass the horizon)."""
        end = day + length
        if end <= self.days:
            return self._day_starts[end]
        if end not in self._beyond:
            self._beyond[end] = self.hour_of_local(dt.datetime.combine(self.date(end), dt.time()))
        return self._beyond[end]

    # --- conversions -------------------------------------------------------------------
    def instant(self, hour: int) -> dt.datetime:
        """The aware local datetime of an hour index (offset in force at that instant)."""
        return (self._origin + hour * HOUR).astimezone(self.tz)

    def local(self, hour: int) -> dt.datetime:
        """The naive local wall-clock time of an hour index (for curves and windows)."""
        return self.instant(hour).replace(tzinfo=None)

    def hour(self, when: dt.datetime) -> int:
        """The hour index of an aware datetime; raises TimeAxisError off the hour grid."""
        if when.tzinfo is None:
            raise TimeAxisError(f"{when.isoformat()} has no UTC offset")
        seconds = (when - self._origin).total_seconds()
        if seconds % 3600:
            raise TimeAxisError(f"{when.isoformat()} is not a whole hour from the horizon start")
        return int(seconds // 3600)

    def hour_of_local(self, when: dt.date | dt.datetime) -> int:
        """The hour index of a naive local time (a date: its 00:00), by the rule above."""
        if not isinstance(when, dt.datetime):
            when = dt.datetime.combine(when, dt.time())
        seconds = (_to_utc(when, self.tz) - self._origin).total_seconds()
        return int(seconds // 3600)

    def window(self, day: int, window: DailyWindow) -> tuple[int, int]:
        """Real hour indices [open, close) of `window` opened on local day `day`; a window
        that crosses midnight belongs to the day it opens."""
        date = self.date(day)
        opens = dt.datetime.combine(date, dt.time(window.start_hour))
        closes_on = date + dt.timedelta(days=1) if window.crosses_midnight else date
        if window.end_hour == 24:
            closes = dt.datetime.combine(date + dt.timedelta(days=1), dt.time())
        else:
            closes = dt.datetime.combine(closes_on, dt.time(window.end_hour))
        return self.hour_of_local(opens), self.hour_of_local(closes)

    def in_window(self, hour: int, window: DailyWindow) -> int | None:
        """The local day whose `window` contains hour `hour`, or None."""
        day = self.day_of(hour)
        for d in (day - 1, day):
            opens, closes = self.window(d, window)
            if opens <= hour < closes:
                return d
        return None

    def text(self, hour: int) -> str:
        """An hour index as people read it: '2026-10-25 02:00 +01:00'."""
        when = self.instant(hour)
        offset = when.strftime("%z")
        return f"{when:%Y-%m-%d %H:%M} {offset[:3]}:{offset[3:]}"


def _to_utc(naive: dt.datetime, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    """A naive local time as a UTC instant. fold=0 reads an ambiguous time as its first
    occurrence, and a nonexistent whole hour at the offset before the gap, which is the
    first instant after it (02:00 in a 02:00→03:00 gap is 03:00)."""
    return naive.replace(tzinfo=tz, fold=0).astimezone(UTC)
