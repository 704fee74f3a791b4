"""Limits that span fields (planner/domain/limits.py says why): a service's peak demand, and
the largest bill a horizon can express at the solver's money scale."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from planner.domain.catalog import HourlyBilling, Offer
from planner.domain.errors import Issue
from planner.domain.limits import (
    HOURS_PAST_HORIZON,
    LIMITS_DOC,
    MAX_COUNT,
    MAX_DEMAND,
    MAX_SCALED_MONEY,
    SERVE_COUNTS,
    TRAIN_COUNTS,
    over,
    show,
)
from planner.domain.scenario import Scenario
from planner.domain.values import PACKAGE_DAYS, instant_datetime
from planner.domain.workload import ReserveWorkload, ServeWorkload, TrainWorkload
from planner.domain.yaml_source import Source

HOURS_PER_MONTH = 720  # storage is priced per GB-month of 720 h


def magnitude_issues(scenario: Scenario, source: Source) -> list[Issue]:
    """Peak demand of every service, and the scenario's largest bill at the money scale."""
    issues = []
    for i, w in enumerate(scenario.spec.workloads):
        if not isinstance(w, ServeWorkload):
            continue
        try:  # each request class is a service of its own (a bad class: reported at loading)
            parts = [(w, "")] + [(c, c.name) for c in w.per_class()]
        except ValueError:
            parts = [(w, "")]
        for part, name in parts:
            peak = peak_demand(part)
            if math.ceil(peak - 1e-9) > MAX_DEMAND:  # demand.py's rounding of a level
                field = "concurrency" if part.concurrency is not None else "requests_per_s"
                where = ("workloads", i, "classes") if name else ("workloads", i, field)
                issues.append(
                    source.issue(
                        where,
                        f"{name + ': ' if name else ''}peak demand "
                        f"{over(peak, MAX_DEMAND, 'requests in flight')}; it "
                        "counts growth, month scales and, for requests_per_s, output_tokens "
                        "÷ min_tokens_per_s seconds per request",
                    )
                )
    bill = largest_bill(scenario)
    if bill.scaled > MAX_SCALED_MONEY:
        currency = scenario.spec.currency
        issues.append(
            source.issue(
                ("catalog",),
                f"the largest bill this horizon can express, {show(float(bill.money))} "
                f"{currency}, is {math.ceil(bill.scaled):,} at the solver's money scale of "
                f"{bill.scale:,} per {currency}, over the limit of 2^53 = "
                f"{MAX_SCALED_MONEY:,} ({LIMITS_DOC}); its largest part is {bill.largest}; "
                "check prices and stock for a misplaced exponent, or drop decimals a price "
                "does not need",
            )
        )
    return issues


def peak_demand(w: ServeWorkload) -> float:
    """Requests in flight at the service's busiest hour, an upper bound of demand.py's."""
    curve = w.concurrency if w.concurrency is not None else w.requests_per_s
    assert curve is not None
    level = curve.peak
    if w.concurrency is None:
        assert w.output_tokens is not None
        level *= w.output_tokens / w.min_tokens_per_s  # Little's law
    level *= w.demand_share
    first = instant_datetime(w.start)
    last = instant_datetime(w.end) - dt.timedelta(hours=1)
    months = (last.year - first.year) * 12 + last.month - first.month
    factor = 0.0
    for m in range(months + 1):
        year, month = divmod(first.month - 1 + m, 12)
        scale = w.month_scale.get(f"{first.year + year:04d}-{month + 1:02d}", 1.0)
        try:
            factor = max(factor, (1 + w.growth_per_month) ** m * scale)
        except OverflowError:
            return math.inf
    return level * factor


@dataclass(frozen=True)
class Bill:
    money: Fraction  # in the currency
    scale: int  # the solver's integers per unit of the currency (an upper bound)
    largest: str  # the largest part, said for people

    @property
    def scaled(self) -> Fraction:
        return self.money * self.scale


def cards_at_once(scenario: Scenario) -> int:
    """The most cards any plan holds at one time, whatever the offers: every train job on
    its most cards, every service's most replicas (one request each at its peak, or its
    min_replicas) on their most cards, every reserve's cards."""
    total = 0
    for w in scenario.spec.workloads:
        if isinstance(w, TrainWorkload):
            total += w.max_cards or TRAIN_COUNTS[-1]
        elif isinstance(w, ServeWorkload):
            replicas = max(math.ceil(min(peak_demand(w), MAX_DEMAND)), w.min_replicas)
            total += replicas * (w.max_cards_per_replica or SERVE_COUNTS[-1])
        elif isinstance(w, ReserveWorkload):
            total += w.cards
    return total


def largest_bill(scenario: Scenario) -> Bill:
    """Every priced mode of every offer at the most units a plan could hold (its stock, but
    never more than the workloads could use at once plus its commitments) in every hour
    (hourly, spot) or every day (packages) of the horizon and 30 days past it, plus the
    largest disk of any workload on every card; and the money scale, a multiple of the
    solver's (the least common multiple of every price's denominator)."""
    days = scenario.spec.horizon.days
    wanted = cards_at_once(scenario)
    committed: dict[str, int] = {}
    for c in scenario.spec.commitments:
        committed[c.offer] = committed.get(c.offer, 0) + c.units
    hours = days * 24 + 1 + HOURS_PAST_HORIZON  # + 1: a fall-back change
    disk_gb = max((w.disk_gb for w in scenario.spec.workloads), default=0)
    parts: list[tuple[Fraction, str]] = []
    denominators: list[int] = [1]
    for offer in scenario.offers.values():
        for mode, billing in offer.modes.items():
            units = _units(offer, billing.stock, wanted, committed.get(offer.id, 0))
            price = Fraction(billing.price)
            if isinstance(billing, HourlyBilling):
                slots, unit = hours, "h"
                steps = Fraction(billing.increment_hours), Fraction(billing.min_hours)
                denominators.append(price.denominator * math.prod(s.denominator for s in steps))
            else:
                slots, unit = days + PACKAGE_DAYS["monthly"], "days of purchases"
                denominators.append(price.denominator)
            parts.append(
                (
                    price * units * slots,
                    f"offer {offer.id} {mode}: price {billing.price} × {units:,} units × "
                    f"{slots:,} {unit}",
                )
            )
        if offer.disk_price_per_gb_month is not None and disk_gb:
            disk = Fraction(offer.disk_price_per_gb_month)
            cards = _units(offer, None, wanted, committed.get(offer.id, 0)) * offer.unit_cards
            parts.append(
                (
                    disk * disk_gb * cards * hours / HOURS_PER_MONTH,
                    f"offer {offer.id} storage: {offer.disk_price_per_gb_month} per GB-month × "
                    f"{disk_gb:,} GB × {cards:,} cards × {hours:,} h",
                )
            )
            denominators.append(disk.denominator * HOURS_PER_MONTH)
    money = sum((p for p, _ in parts), Fraction(0))
    largest = max(parts, default=(Fraction(0), "none"), key=lambda p: p[0])[1]
    return Bill(money, math.lcm(*denominators), largest)


def _units(offer: Offer, stock: int | None, cards: int, committed: int) -> int:
    """Most units of `offer` a plan could hold at once: its stock and caps, and no more than
    `cards` wanted at once need, plus its commitments."""
    needed = -(-cards // offer.unit_cards) + committed
    caps: Iterable[int | None] = (stock, offer.max_units, MAX_COUNT, needed)
    return min(c for c in caps if c is not None)
