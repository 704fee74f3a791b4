"""The largest inputs gpuplan accepts (docs/scenarios.md "Limits of input"), in one place.

Past these, input is refused when it is read (exit 1, at the field, with its value and the
limit; `plan validate` reports it too), not by the solver, which counts in 64-bit integers
(below 2^63 ≈ 9.2 × 10^18), and not by building a plan whose size grows with the number.
Why each figure:

- Horizon: at most 366 days, a year (a quarter is 92). The time axis then has at most
  8,785 hours (one fall-back change), and a package bought on its last day runs 30 days
  past it: under 10^4 hours in all. Its days lie in 1970-2199, where the time-zone rules
  are defined and a year's dates, offsets and packages never leave Python's calendar.
- Counts (cards, units, stock, replicas, a micro-batch): at most 10,000. The largest rented
  fleets are a few thousand cards; a plan has a row per reserved card, and a reserve of
  10,000 cards builds and prints in about 8 s past the solver's limit on the development
  machine (100,000 would take over a minute). Packages in a row: at most 366.
- Prices: at most 10^9 per unit (unit-hour, package or GB-month) in the currency: a month of
  an 8-card machine in won is about 3 × 10^8.
- Money at the solver's scale: the solver counts money in units of the least common
  multiple of the price denominators (the money scale, 100 for prices in fen). The largest
  bill a plan could run up, every priced mode at the most units a plan could hold (its
  stock, capped by what the workloads could use at once plus its commitments; the model's
  package counts are capped alike) in every hour or every day of it plus 30 days, times
  that scale, must stay under 2^53 ≈ 9.0 × 10^15: a factor of 2^10 inside 2^63 for the
  sums of many configs and the bounds the solver forms. q3.yaml's is 1.6 × 10^10. Each
  price at most 10^9 with 6 decimals alone cannot promise this (10^9 × 10^4 units × 10^4 h
  × 10^6 is 10^23), so the product is checked as such.
- Tokens: 1 to 10^15 per train workload (Llama 3 was pre-trained on 1.5 × 10^13); a
  sequence, a context or an output at most 10^7 tokens (the longest context windows).
- Demand: at most 10^6 requests in flight at the peak hour, after growth, month scales and
  Little's law (the capacity of a replica is at least one request, so that many replicas
  at most; the solver's replica counts stay small integers).
- Durations (setup, restart, checkpoint interval) at most 366 days; a billing minimum or
  increment at most 8,784 h with at most 6 decimals (like prices: they multiply prices).
- Storage: at most 10^6 GB (a petabyte) per workload, in whole GB, so the money scale
  takes no binary fraction of a float.
- Download links: at least 0.01 Gbit/s, so a setup time stays hours, not centuries.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic import AfterValidator, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

MAX_HORIZON_DAYS = 366
FIRST_DAY = dt.date(1970, 1, 1)
LAST_DAY = dt.date(2199, 12, 31)
MAX_COUNT = 10_000
# The most cards one train job or one serving replica may take (the counts gpuplan plans).
TRAIN_COUNTS = (1, 2, 4, 8, 16, 32)
SERVE_COUNTS = (1, 2, 4, 8)
MAX_PACKAGES = 366
MAX_PRICE = Decimal(10**9)
MAX_SCALED_MONEY = 2**53
MAX_TOKENS = 10**15
MAX_SEQUENCE_TOKENS = 10**7
MAX_DEMAND = 10**6
MAX_MINUTES = MAX_HORIZON_DAYS * 1440
MAX_BILLED_HOURS = Decimal(MAX_HORIZON_DAYS * 24)
MAX_DISK_GB = 10**6
MIN_LINK_GBPS = 0.01
HOURS_PAST_HORIZON = 30 * 24  # a monthly package bought on the horizon's last day
LIMITS_DOC = 'docs/scenarios.md "Limits of input"'


def show(value: Any) -> str:
    """A number as the messages print it: 1,000,000 or 1e+30, never a float's noise."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if abs(float(value)) >= 1e15:
        return f"{value:.6g}"
    if isinstance(value, float) and value.is_integer():
        return f"{int(value):,}"
    return f"{value:,}"


def over(value: Any, limit: Any, unit: str = "") -> str:
    unit = f" {unit}" if unit else ""
    return f"{show(value)}{unit} is over the limit of {show(limit)}{unit} ({LIMITS_DOC})"


@dataclass(frozen=True)
class _Bounded(AfterValidator):
    """An after-validator that also states its bound in the JSON Schema (`plan schema`), so
    the published schema refuses what validation refuses."""

    keyword: str = "maximum"
    limit: int | float = 0

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        found = handler(schema)
        target = found
        if "anyOf" in found:  # an optional value: the bound on its non-null member
            target = next((m for m in found["anyOf"] if m.get("type") != "null"), found)
        target[self.keyword] = self.limit
        return found


def at_most(limit: int | float | Decimal, unit: str) -> AfterValidator:
    """A validator: the value is at most `limit` (None passes)."""

    def check(value: Any) -> Any:
        if value is not None and value > limit:
            raise ValueError(over(value, limit, unit))
        return value

    return _Bounded(check, "maximum", limit if isinstance(limit, int) else float(limit))


def at_least(limit: float, unit: str) -> AfterValidator:
    def check(value: Any) -> Any:
        if value is not None and value < limit:
            raise ValueError(
                f"{show(value)} {unit} is under the limit of {show(limit)} {unit} ({LIMITS_DOC})"
            )
        return value

    return _Bounded(check, "minimum", float(limit))
