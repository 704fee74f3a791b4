"""The cost rules (docs/rules.md) as pure functions, shared by the problem, the baselines
and the checker: setup time, occupied hours, daily runs, billed hours, package lengths.

Nothing here knows about the solver. Hours are real elapsed hours from the horizon start
(planner.domain.timeaxis); local days and windows come from the time axis.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from planner.domain.catalog import HourlyBilling, Offer
from planner.domain.model_card import ModelCard
from planner.domain.timeaxis import TimeAxis
from planner.domain.values import PACKAGE_DAYS
from planner.estimate.core import IMAGE_GB

PACKAGE_MODES = tuple(PACKAGE_DAYS)  # daily, weekly, monthly


def setup_hours(
    offer: Offer, model: ModelCard | None, workload_setup_minutes: int | None
) -> Fraction:
    """Setup per start: the workload's or offer's setup_minutes, else image + 16-bit weights
    (none for reserved cards) downloaded over the offer's link: (GB × 8) ÷ Gbit/s ÷ 3600."""
    minutes = workload_setup_minutes if workload_setup_minutes is not None else offer.setup_minutes
    if minutes is not None:
        return Fraction(minutes, 60)
    gigabytes = IMAGE_GB + (model.params * 2 / 1e9 if model is not None else 0.0)
    return Fraction(gigabytes * 8 / offer.link_gbps / 3600).limit_denominator(10**6)


def occupied_hours(compute: Fraction, setup: Fraction) -> int:
    """Hours a start holds its cards: ceil(compute + setup) (rule 2)."""
    return max(1, math.ceil(compute + setup))


def billed_hours(held: int, billing: HourlyBilling) -> Decimal:
    """ceil(max(held, minimum) ÷ increment) × increment (rule 4)."""
    hours = max(Decimal(held), billing.min_hours)
    return math.ceil(hours / billing.increment_hours) * billing.increment_hours


def package_hours(mode: str) -> int:
    """A package's nominal length, 24 h for each local day it lasts: the hours its price is
    spread over (`planner.prices.card_hour_price`). Its real start and end, 23 or 25 h a day
    across a daylight-saving change, come from the time axis (`package_span`)."""
    return 24 * PACKAGE_DAYS[mode]


def package_span(axis: TimeAxis, days: int, day: int) -> tuple[int, int]:
    """Real hours [start, end) of a package of `days` local days bought on local day `day`:
    from its 00:00 to the 00:00 `days` local days later (the end may pass the horizon)."""
    return axis.after_days(day, 0), axis.after_days(day, days)


def packages_until(axis: TimeAxis, first_day: int, days: int, end: int) -> int:
    """How many packages of `days` local days, back to back from `first_day`, reach hour `end`."""
    count = 1
    while axis.after_days(first_day, count * days) < end:
        count += 1
    return count


@dataclass(frozen=True)
class DailyRuns:
    """A windowed job's runs, one per day from its first window: (offset from the first
    window's opening, length) in hours."""

    runs: tuple[tuple[int, int], ...]

    @property
    def span(self) -> int:
        """From the first run's start to the last run's end."""
        offset, length = self.runs[-1]
        return offset + length

    @property
    def hours(self) -> int:
        return sum(length for _, length in self.runs)


def daily_runs(
    compute: Fraction,
    setup: Fraction,
    windows: Iterable[tuple[int, int]],
    setup_every_day: bool,
) -> DailyRuns | None:
    """Runs in every window hour from the start until done (rule 3); on hourly and spot each
    day's run pays its own setup, on packages only the first. `windows` are the real hours
    [open, close) of the daily window on consecutive local days, the first (non-empty) one
    opening at the start; a window that falls wholly in a spring-forward gap is empty and
    holds no run. None if a day cannot progress, or the windows end before the work does."""
    # in whole units of 1/scale hours: the same sums as Fractions, without their cost (a
    # large quarter asks this for every start hour of every windowed config)
    scale = math.lcm(compute.denominator, setup.denominator)
    remaining, each = int(compute * scale), int(setup * scale)
    runs: list[tuple[int, int]] = []
    first: int | None = None
    for opens, closes in windows:
        first = opens if first is None else first
        if closes <= opens:
            continue
        this_setup = each if (setup_every_day or not runs) else 0
        useful = (closes - opens) * scale - this_setup
        if useful <= 0:
            return None
        if remaining <= useful:
            last = occupied_hours(Fraction(remaining, scale), Fraction(this_setup, scale))
            runs.append((opens - first, last))
            return DailyRuns(tuple(runs))
        runs.append((opens - first, closes - opens))
        remaining -= useful
    return None
