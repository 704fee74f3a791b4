"""Rentals (what the plan orders): each legal, billed and priced by rules 4, 5 and 8, held in
the ledger hour by hour; commitments present exactly as the scenario fixes them."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from planner.check.contract import billed, package_days
from planner.check.ledger import Ledger, worst
from planner.check.result import CheckResult, no_offer
from planner.domain.catalog import HourlyBilling, Offer
from planner.domain.costs import CostTerm
from planner.domain.plan import Rental
from planner.domain.scenario import Scenario
from planner.domain.timeaxis import TimeAxisError


@dataclass(frozen=True)
class Held:
    """A rental read onto the axis: [start, end) real hours, and its exact money."""

    rental: Rental
    offer: Offer
    start: int
    end: int
    billed: Fraction  # per unit
    money: Fraction

    @property
    def key(self) -> tuple[str, str]:
        return (self.rental.offer, self.rental.mode)

    @property
    def cards(self) -> int:
        return self.rental.units * self.offer.unit_cards

    @property
    def package(self) -> bool:
        return package_days(self.rental.mode) is not None


def hour_of(scenario: Scenario, result: CheckResult, when: dt.datetime, subject: str) -> int | None:
    """An aware plan time as an hour index, or a violation when it is off the hour grid."""
    try:
        return scenario.axis.hour(when)
    except TimeAxisError as exc:
        result.add("time", subject, 1, "", str(exc))
        return None


def read_rentals(scenario: Scenario, plan_rentals: list[Rental], result: CheckResult) -> list[Held]:
    """Every rental that names a real offer and mode, on the hour grid, with its money."""
    seen: set[str] = set()
    held = []
    for r in plan_rentals:
        if r.id in seen:
            result.add("rental", r.id, 1, "", "rental id used twice")
            continue
        seen.add(r.id)
        offer = scenario.offers.get(r.offer)
        if offer is None or r.mode not in offer.modes:
            why = no_offer(r.offer) if offer is None else f"offer {r.offer} does not sell {r.mode}"
            result.add("rental", r.id, 1, "", why)
            continue
        if offer.card != r.card or r.units < 1 or r.cards != r.units * offer.unit_cards:
            result.add(
                "rental",
                r.id,
                1,
                "",
                f"{r.units} unit(s) of {r.offer} are {r.units * offer.unit_cards}× "
                f"{offer.card}, not {r.cards}× {r.card}",
            )
            continue
        start = hour_of(scenario, result, r.start, r.id)
        end = hour_of(scenario, result, r.end, r.id)
        if start is None or end is None:
            continue
        if end <= start:
            result.add("rental", r.id, start - end, "h", "ends before it starts")
            continue
        item = _priced(scenario, result, r, offer, start, end)
        if item is not None:
            held.append(item)
    return held


def _priced(
    scenario: Scenario, result: CheckResult, r: Rental, offer: Offer, start: int, end: int
) -> Held | None:
    """Rule 5: a package starts at local 00:00 and lasts its days, paid in full; rule 4:
    hourly and spot are billed per started increment with a minimum, per unit."""
    billing = offer.billing(r.mode)
    price = Fraction(billing.price)
    days = package_days(r.mode)
    if days is not None:
        axis = scenario.axis
        day = axis.day_of(start)
        if not (0 <= day < axis.days and axis.day_start(day) == start):
            result.add("package", r.id, 1, "", f"a {r.mode} package starts at 00:00 local time")
            return None
        length = axis.after_days(day, days) - start
        if end - start != length:
            result.add(
                "package",
                r.id,
                end - start - length,
                "h",
                f"a {r.mode} package from {axis.text(start)} lasts {length} h, not {end - start} h",
            )
            return None
        return Held(r, offer, start, end, Fraction(length), price * r.units)
    assert isinstance(billing, HourlyBilling)
    hours = billed(Fraction(end - start), billing)
    return Held(r, offer, start, end, hours, price * r.units * hours)


def commitments(scenario: Scenario, held: list[Held], result: CheckResult) -> None:
    """Rule 8: every committed rental the scenario fixes is in the plan as committed, and
    nothing else is marked committed."""
    axis = scenario.axis
    wanted: Counter[tuple[str, str, int, int, int]] = Counter()
    for c in scenario.spec.commitments:
        start = axis.hour_of_local(c.start)
        days = package_days(c.mode)
        if days is None:
            end = axis.hour_of_local(c.end) if c.end is not None else axis.hours
            wanted[(c.offer, c.mode, c.units, start, end)] += 1
            continue
        day = axis.day_of(start)
        count = c.count
        if count is None:  # enough packages to reach the horizon end
            count = 0
            while axis.after_days(day, count * days) < axis.hours:
                count += 1
        for k in range(count):
            begin = axis.after_days(day, k * days)
            wanted[(c.offer, c.mode, c.units, begin, axis.after_days(day, (k + 1) * days))] += 1
    stated: Counter[tuple[str, str, int, int, int]] = Counter(
        (h.rental.offer, h.rental.mode, h.rental.units, h.start, h.end)
        for h in held
        if h.rental.committed
    )
    for (offer, mode, units, start, end), n in (wanted - stated).items():
        result.add(
            "commitment",
            offer,
            units * n,
            "units",
            f"{n}× {units} unit(s) of {offer} {mode} from {axis.text(start)} to "
            f"{axis.text(end)} are committed but not in the plan",
        )
    for (offer, mode, units, start, _), n in (stated - wanted).items():
        result.add(
            "commitment",
            offer,
            units * n,
            "units",
            f"{n}× {units} unit(s) of {offer} {mode} from {axis.text(start)} are marked "
            "committed but no commitment fixes them",
        )


def book(scenario: Scenario, held: list[Held], ledger: Ledger) -> None:
    """Each rental's units held, its cards in their pool, its money by term and month, its
    round-up and its package hours past the horizon."""
    axis = scenario.axis
    for h in held:
        r = h.rental
        ledger.hold(h.key, h.start, h.end, r.units)
        month = f"{axis.local(h.start):%Y-%m}"
        if r.committed:
            term = CostTerm.COMMITMENT
        elif h.package:
            term = CostTerm.PACKAGE
        else:
            term = CostTerm(r.mode)
        ledger.pay(("rental", r.id), term, h.money, month)
        if h.package or r.committed:
            inside = max(0, min(h.end, axis.hours) - max(h.start, 0))
            ledger.pool(h.key, max(h.start, 0), min(h.end, axis.hours), h.cards)
            beyond = (h.end - h.start - inside) * h.cards
            ledger.report(CostTerm.BEYOND_HORIZON, Fraction(beyond))
            ledger.unused += beyond * card_hour_price(h.offer, r.mode)
        if not h.package:
            extra = h.billed - (h.end - h.start)
            price = Fraction(h.offer.billing(r.mode).price)
            ledger.report(CostTerm.ROUND_UP, extra * r.units, extra * r.units * price)


def stock(scenario: Scenario, ledger: Ledger, result: CheckResult) -> None:
    """Rule 7: units held of an offer and mode ≤ that mode's stock at every hour, and all
    modes together ≤ the offer-wide cap."""
    axis = scenario.axis
    totals: dict[str, dict[int, int]] = {}
    for (offer_id, mode), line in sorted(ledger.held_units.items()):
        offer = scenario.offers[offer_id]
        limit = offer.billing(mode).stock
        hour, most = worst(line)
        if limit is not None and most > limit:
            result.add(
                "stock",
                f"{offer_id} {mode}",
                most - limit,
                "units",
                f"stock over by {most - limit} unit(s) at {axis.text(hour)}",
            )
        total = totals.setdefault(offer_id, {})
        for h, units in line.items():
            total[h] = total.get(h, 0) + units
    for offer_id, line in sorted(totals.items()):
        cap = scenario.offers[offer_id].max_units
        hour, most = worst(line)
        if cap is not None and most > cap:
            result.add(
                "stock",
                offer_id,
                most - cap,
                "units",
                f"offer-wide cap over by {most - cap} unit(s) at {axis.text(hour)}",
            )


def pools(scenario: Scenario, ledger: Ledger, result: CheckResult) -> None:
    """Rule 5: at every hour, cards used on a pool ≤ cards held in it (packages and
    committed rentals of that offer and mode); held but unused card-hours are idle."""
    axis = scenario.axis
    for key in sorted(set(ledger.used_cards) | set(ledger.pool_cards)):
        used, held = ledger.used_cards.get(key, {}), ledger.pool_cards.get(key, {})
        over = sorted(h for h, cards in used.items() if cards > held.get(h, 0))
        if over:
            h = over[0]
            result.add(
                "package",
                f"{key[0]} {key[1]}",
                used[h] - held.get(h, 0),
                "cards",
                f"{used[h]} card(s) used but {held.get(h, 0)} held at {axis.text(h)}"
                + (f" (and {len(over) - 1} more hour(s))" if len(over) > 1 else ""),
            )
        offer = scenario.offers[key[0]]
        idle = sum(max(0, cards - used.get(h, 0)) for h, cards in held.items())
        ledger.report(CostTerm.IDLE, Fraction(idle), idle * card_hour_price(offer, key[1]))
        ledger.unused += idle * card_hour_price(offer, key[1])


def card_hour_price(offer: Offer, mode: str) -> Fraction:
    """One held card-hour: a package's price spread over its nominal 24 h days, or an
    hourly or spot price per card of its unit."""
    days = package_days(mode) or Fraction(1, 24)
    return Fraction(offer.billing(mode).price) / (24 * days * offer.unit_cards)
