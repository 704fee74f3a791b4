"""Small value types shared by the schemas: names, durations, times of day, weekdays, curves."""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BeforeValidator, Field, PlainSerializer, WithJsonSchema

from planner.domain.limits import MAX_HORIZON_DAYS, MAX_MINUTES, over
from planner.domain.suggest import closest, did_you_mean

SLUG_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
Slug = Annotated[str, Field(pattern=SLUG_PATTERN, max_length=64)]
"""Lowercase name of a card, model, offer or recipe: `h200-141g`, `llama-3.1-70b`."""

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
Name = Annotated[str, Field(pattern=NAME_PATTERN, max_length=80)]
"""Name of a workload or scenario: letters, digits, `.`, `_`, `-`."""

PRECISIONS = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4")
Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4"]
"""Number format of a model's weights (int4 = GPTQ/AWQ group-128, nf4 = QLoRA's NormalFloat)."""

BillingMode = Literal["hourly", "daily", "weekly", "monthly", "spot"]
BILLING_MODES: tuple[BillingMode, ...] = ("hourly", "daily", "weekly", "monthly", "spot")
PACKAGE_DAYS: dict[str, int] = {"daily": 1, "weekly": 7, "monthly": 30}

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DAY_GROUPS: dict[str, tuple[int, ...]] = {
    **{day: (i,) for i, day in enumerate(WEEKDAYS)},
    "weekdays": (0, 1, 2, 3, 4),
    "weekend": (5, 6),
    "all": tuple(range(7)),
}

# --- durations -------------------------------------------------------------------------

_DURATION = re.compile(r"^(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m(?:in)?)?$")


def parse_minutes(value: Any) -> int:
    """`30m`, `14h`, `2d`, `1h30m` → whole minutes. Bare numbers are refused as ambiguous."""
    if isinstance(value, bool) or not isinstance(value, str):
        raise ValueError(f"expected a duration such as 30m, 14h or 2d, got {value!r}")
    text = value.strip().lower()
    match = _DURATION.match(text)
    if not text or match is None or not any(match.groups()):
        raise ValueError(f"expected a duration such as 30m, 14h or 2d, got {value!r}")
    days, hours, minutes = (int(g) if g else 0 for g in match.groups())
    return days * 1440 + hours * 60 + minutes


def _within_limit(minutes: int) -> int:
    if minutes > MAX_MINUTES:
        raise ValueError(over(format_minutes(minutes), f"{MAX_HORIZON_DAYS}d"))
    return minutes


def format_minutes(minutes: int) -> str:
    days, rest = divmod(minutes, 1440)
    hours, mins = divmod(rest, 60)
    text = "".join(f"{n}{u}" for n, u in ((days, "d"), (hours, "h"), (mins, "m")) if n)
    return text or "0m"


def parse_whole_minutes(value: Any) -> int:
    """For fields named *_minutes: a whole number of minutes (0 allowed) or a duration."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"expected minutes ≥ 0, got {value}")
        return value
    return parse_minutes(value)


WholeMinutes = Annotated[
    int,
    BeforeValidator(parse_whole_minutes),
    AfterValidator(_within_limit),
    WithJsonSchema({"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}),
]
"""Minutes as a number (`10`) or a duration (`10m`, `1h`)."""

Minutes = Annotated[
    int,
    BeforeValidator(parse_minutes),
    AfterValidator(_within_limit),
    PlainSerializer(format_minutes, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^(\d+d)?(\d+h)?(\d+m)?$"}),
]
"""A duration written `30m`, `14h`, `2d`, held as whole minutes."""

# --- instants ----------------------------------------------------------------------------


def _parse_instant(value: Any) -> dt.date | dt.datetime:
    if isinstance(value, dt.datetime):
        instant: dt.date | dt.datetime = value
    elif isinstance(value, dt.date):
        return value
    elif isinstance(value, str):
        try:
            instant = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(
                f"expected an ISO date (2026-07-01) or date and hour (2026-07-01T08:00), "
                f"got {value!r}"
            ) from None
    else:
        raise ValueError(f"expected an ISO date such as 2026-07-01, got {value!r}")
    assert isinstance(instant, dt.datetime)
    if instant.tzinfo is not None:
        raise ValueError("give local times without an offset: the scenario's timezone applies")
    if instant.minute or instant.second or instant.microsecond:
        raise ValueError(f"{value!r}: the planner works in whole hours; use HH:00")
    if instant.hour == 0:
        return instant.date()
    return instant


Instant = Annotated[
    dt.date | dt.datetime,
    BeforeValidator(_parse_instant),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
"""A local date (its 00:00) or a local date and whole hour, in the scenario's timezone."""


def instant_datetime(value: dt.date | dt.datetime) -> dt.datetime:
    """The naive local datetime of an instant (a date means its 00:00)."""
    if isinstance(value, dt.datetime):
        return value
    return dt.datetime.combine(value, dt.time())


# --- times of day ------------------------------------------------------------------------


@dataclass(frozen=True)
class DailyWindow:
    """Hours of a day, `08:00-22:00`; a window may cross midnight (`22:00-06:00`)."""

    start_hour: int  # 0..23
    end_hour: int  # 1..24, exclusive; below start_hour when the window crosses midnight

    @property
    def hours(self) -> int:
        return (self.end_hour - self.start_hour) % 24 or 24

    @property
    def crosses_midnight(self) -> bool:
        return self.end_hour < self.start_hour

    def contains(self, hour_of_day: int) -> bool:
        if self.crosses_midnight:
            return hour_of_day >= self.start_hour or hour_of_day < self.end_hour
        return self.start_hour <= hour_of_day < self.end_hour

    def __str__(self) -> str:
        return f"{self.start_hour:02d}:00-{self.end_hour:02d}:00"


def one_or_list(item: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of a field written as one `item` or a list of them (the loader takes
    either)."""
    return {"anyOf": [item, {"type": "array", "items": item, "minItems": 1}]}


# hours of the day as '08:00-22:00', or as '08-22' (the form curves use)
_WINDOW = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*-\s*(\d{1,2})(?::(\d{2}))?$")


def parse_window(value: Any) -> DailyWindow:
    if isinstance(value, DailyWindow):
        return value
    match = _WINDOW.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"expected hours of the day such as '08:00-22:00', got {value!r}")
    h1, m1, h2, m2 = (int(g or 0) for g in match.groups())
    if m1 or m2:
        raise ValueError(f"{value!r}: the planner works in whole hours; use HH:00")
    if h1 > 23 or h2 > 24:
        raise ValueError(f"{value!r}: hours run from 00:00 to 24:00")
    end = h2 or 24  # '20:00-00:00' runs to midnight
    if end == h1:
        raise ValueError(f"{value!r} is empty; use '00:00-24:00' for the whole day")
    return DailyWindow(h1, end)


Window = Annotated[
    DailyWindow,
    BeforeValidator(parse_window),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^\d{1,2}(:00)?-\d{1,2}(:00)?$"}),
]

# --- weekdays ------------------------------------------------------------------------------


def parse_days(value: Any) -> tuple[int, ...]:
    """`[mon, tue]`, `weekdays`, `weekend`, `all` → sorted weekday numbers (Monday = 0)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise ValueError(f"expected a list of days such as [mon, tue] or 'weekdays', got {value!r}")
    days: set[int] = set()
    for item in items:
        key = str(item).strip().lower()
        if key not in DAY_GROUPS:
            raise ValueError(f"unknown day {item!r}; expected one of {', '.join(DAY_GROUPS)}")
        days.update(DAY_GROUPS[key])
    return tuple(sorted(days))


Days = Annotated[
    tuple[int, ...],
    BeforeValidator(parse_days),
    PlainSerializer(lambda days: [WEEKDAYS[d] for d in days], return_type=list[str]),
    WithJsonSchema(one_or_list({"enum": [*DAY_GROUPS]})),
]

# --- curves over the week ------------------------------------------------------------------

# a curve's hours as '08-20', or as '08:00-20:00' (the form windows use)
_HOUR_RANGE = re.compile(r"^(\d{1,2})(?::00)?\s*-\s*(\d{1,2})(?::00)?$")


def _parse_day_curve(value: Any, where: str) -> tuple[float, ...]:
    """A number (flat) or {"00-08": 20, "08-24": 60} → 24 hourly values."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not 0 <= value < math.inf:
            raise ValueError(f"{where}: expected a finite number ≥ 0, got {value}")
        return (float(value),) * 24
    if not isinstance(value, dict) or not value:
        raise ValueError(f"{where}: expected a number or hour ranges such as {{'00-08': 20}}")
    hours: list[float | None] = [None] * 24
    for key, level in value.items():
        match = _HOUR_RANGE.match(str(key).strip())
        if match is None:
            raise ValueError(
                f"{where}: hour range {key!r} should look like '08-20' or '08:00-20:00' "
                "(whole hours)"
            )
        lo, hi = int(match[1]), int(match[2])
        if not 0 <= lo < hi <= 24:
            raise ValueError(f"{where}: hour range {key!r} must satisfy 0 ≤ from < to ≤ 24")
        if (
            isinstance(level, bool)
            or not isinstance(level, int | float)
            or not 0 <= level < math.inf
        ):
            raise ValueError(
                f"{where}: level of {key!r} must be a finite number ≥ 0, got {level!r}"
            )
        for h in range(lo, hi):
            if hours[h] is not None:
                raise ValueError(f"{where}: hour {h:02d} is covered twice (by {key!r})")
            hours[h] = float(level)
    missing = [h for h, v in enumerate(hours) if v is None]
    if missing:
        raise ValueError(
            f"{where}: hours {', '.join(f'{h:02d}' for h in missing)} have no level; "
            "the ranges must cover 00-24"
        )
    return tuple(v for v in hours if v is not None)


def parse_week_curve(value: Any) -> tuple[tuple[float, ...], ...]:
    """A level by hour of day, optionally by weekday → 7 × 24 hourly levels (Monday first).

    Accepted shapes: `40`; `{"00-08": 20, "08-24": 60}`; or day groups as keys,
    `{weekdays: {...}, weekend: 10}`, covering every day once.
    """
    if isinstance(value, WeekCurve):
        return value.levels
    if isinstance(value, dict) and value:
        _check_day_groups(value)
    if (
        isinstance(value, dict)
        and value
        and all(str(k).strip().lower() in DAY_GROUPS for k in value)
    ):
        week: list[tuple[float, ...] | None] = [None] * 7
        for key, day_value in value.items():
            curve = _parse_day_curve(day_value, f"{key}")
            for day in DAY_GROUPS[str(key).strip().lower()]:
                if week[day] is not None:
                    raise ValueError(f"{WEEKDAYS[day]} is given twice (again by {key!r})")
                week[day] = curve
        missing = [WEEKDAYS[d] for d, v in enumerate(week) if v is None]
        if missing:
            raise ValueError(f"no levels for {', '.join(missing)}; every day needs one")
        return tuple(v for v in week if v is not None)
    return (_parse_day_curve(value, "curve"),) * 7


def _check_day_groups(value: dict[Any, Any]) -> None:
    """A curve by day group whose keys are not all day groups names its first bad key, with
    the nearest day group: a key that is no hour range either, beside a day group or spelt
    close to one (`weekned`, `tues`), is a misspelt day group, not a malformed hour range."""
    keys = [str(k).strip() for k in value]
    by_day = any(k.lower() in DAY_GROUPS for k in keys)
    for key in keys:
        if key.lower() in DAY_GROUPS:
            continue
        if _HOUR_RANGE.match(key) is not None:
            if by_day:  # hours beside day groups: they belong inside one
                raise ValueError(
                    f"{key!r} is an hour range beside day groups; give hour ranges inside "
                    f"a day group, such as {{weekdays: {{{key!r}: …}}}}"
                )
            continue
        if by_day or closest(key, DAY_GROUPS) is not None:
            other = "" if by_day else "; or hour ranges such as '08-20'"
            raise ValueError(
                f"unknown day group {key!r}{did_you_mean(key, DAY_GROUPS)} "
                f"(day groups: mon…sun, weekdays, weekend, all{other})"
            )


@dataclass(frozen=True)
class WeekCurve:
    """Levels for each hour of each weekday, Monday 00:00 first."""

    levels: tuple[tuple[float, ...], ...]

    def at(self, weekday: int, hour: int) -> float:
        return self.levels[weekday][hour]

    @property
    def peak(self) -> float:
        return max(max(day) for day in self.levels)


def _week_curve(value: Any) -> WeekCurve:
    return value if isinstance(value, WeekCurve) else WeekCurve(parse_week_curve(value))


def _curve_json(curve: WeekCurve) -> dict[str, dict[str, float]]:
    return {
        WEEKDAYS[d]: {f"{h:02d}-{h + 1:02d}": v for h, v in enumerate(day)}
        for d, day in enumerate(curve.levels)
    }


Curve = Annotated[
    WeekCurve,
    BeforeValidator(_week_curve),
    PlainSerializer(_curve_json),
    WithJsonSchema(
        {
            "oneOf": [
                {"type": "number", "minimum": 0},
                {"type": "object", "additionalProperties": {}},
            ]
        }
    ),
]
"""A level per hour of the week, written flat, by hour of day, or by weekday and hour."""


def _tuple_of(value: Any) -> Any:
    return tuple(value) if isinstance(value, list | tuple) else (value,)


Precisions = Annotated[
    tuple[Precision, ...],
    BeforeValidator(_tuple_of),
    Field(min_length=1),
    WithJsonSchema(one_or_list({"enum": [*get_args(Precision)]})),
]
"""One precision or a list of acceptable ones (`[fp8, int8]`)."""
