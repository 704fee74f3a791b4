"""Exact money: decimals at the edges, integer minor units inside, one half-even rounding."""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Annotated

from pydantic import AfterValidator, Field

from planner.domain.limits import MAX_BILLED_HOURS, MAX_PRICE, at_most, over

# ISO 4217 minor-unit digits of the currencies a GPU price list is likely to use.
MINOR_DIGITS: dict[str, int] = {
    "CNY": 2,
    "USD": 2,
    "EUR": 2,
    "GBP": 2,
    "HKD": 2,
    "SGD": 2,
    "TWD": 2,
    "AUD": 2,
    "CAD": 2,
    "CHF": 2,
    "INR": 2,
    "JPY": 0,
    "KRW": 0,
}

# Prices may carry more digits than the minor unit (¥0.0035 per GB-month); six is plenty.
MAX_PRICE_DECIMALS = 6


def _check_decimals(value: Decimal) -> Decimal:
    """A finite decimal with at most MAX_PRICE_DECIMALS places, written without an exponent
    (1E+2 becomes 100)."""
    if not value.is_finite():
        raise ValueError("expected a finite number")
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    if -exponent > MAX_PRICE_DECIMALS:
        raise ValueError(f"expected at most {MAX_PRICE_DECIMALS} decimal places, got {value}")
    return Decimal(int(value)) if value == value.to_integral_value() else value


def _check_price(value: Decimal) -> Decimal:
    if value.is_finite() and value > MAX_PRICE:
        raise ValueError(over(value, MAX_PRICE))
    return _check_decimals(value)


Price = Annotated[Decimal, Field(ge=0), AfterValidator(_check_price)]
"""A non-negative amount in the scenario's currency, exact as written, at most 10^9."""

BilledHours = Annotated[
    Decimal, Field(gt=0), AfterValidator(_check_decimals), at_most(MAX_BILLED_HOURS, "h")
]
"""A billing minimum or increment in hours: exact, like prices, since it multiplies them."""


def to_minor(amount: Decimal | Fraction | int, currency: str) -> int:
    """Round an exact amount once, half-even, to integer minor units of `currency`."""
    exact = Fraction(amount) * Fraction(10) ** MINOR_DIGITS[currency]
    quotient, remainder = divmod(exact.numerator, exact.denominator)
    twice = 2 * remainder  # compare the remainder with half the denominator, in integers
    if twice > exact.denominator or (twice == exact.denominator and quotient % 2 == 1):
        quotient += 1
    return quotient


def from_minor(minor: int, currency: str) -> Decimal:
    """Integer minor units back to a decimal amount with the currency's digits."""
    digits = MINOR_DIGITS[currency]
    return Decimal(minor).scaleb(-digits).quantize(Decimal(1).scaleb(-digits))


def money(amount: Decimal | Fraction | int, currency: str) -> Decimal:
    """An exact amount rounded once, half-even, to the currency's minor unit."""
    return from_minor(to_minor(amount, currency), currency)


def money_down(amount: Decimal | Fraction | int, currency: str) -> Decimal:
    """An exact amount rounded down to the currency's minor unit: of the prices one can
    write, the highest at or below it (a break-even of 13.9388… is 13.93: at 13.94 the
    commitment no longer pays)."""
    return from_minor(math.floor(Fraction(amount) * 10 ** MINOR_DIGITS[currency]), currency)


def apportion(
    parts: Sequence[Decimal | Fraction | int], currency: str, total: int | None = None
) -> list[int]:
    """Exact parts of an amount as integer minor units that add up to the amount rounded once,
    half-even (`to_minor`): each part is cut down to the minor unit, and the minor units the
    rounded amount has beyond the cuts go one each to the parts with the largest remainders
    (ties: the earlier part). A part that is whole in minor units is never changed; any
    other is within one minor unit of exact. Given a `total` in minor units instead, the
    parts are first scaled in proportion to add up to it (they must not add up to 0)."""
    scale = 10 ** MINOR_DIGITS[currency]
    exact = [Fraction(p) * scale for p in parts]
    whole = sum(exact, Fraction(0))
    if total is None:
        total = to_minor(whole / scale, currency)
    elif whole != total:
        exact = [x * total / whole for x in exact]
    cut = [math.floor(x) for x in exact]
    left = total - sum(cut)
    for i in sorted(range(len(cut)), key=lambda i: (cut[i] - exact[i], i))[:left]:
        cut[i] += 1
    return cut
