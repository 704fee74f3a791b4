"""The model side's one pricing: what a rental, a run shape, a replica, a package, a held
card-hour and a disk cost, exactly, in Fractions of the scenario's currency.

Everything on the model side asks here: the problem and its configs, the CP-SAT objective
and cuts, the solution's plan and breakdown, the baselines, the lower bound, the top-K
restriction, the quotes and the explanations. A cost rule changes in this module only.
The independent checker (planner/check) prices by its own arithmetic, and the two must
agree to the minor unit.

The rules, as docs/checker.md states them: an hourly or spot rental bills
ceil(max(held, minimum) ÷ increment) × increment hours per unit; a package is paid in full
per unit; a disk bills its GB-months (720 h) for every hour it is held; an hourly replica
holds its setup hours before it serves, and pays for them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from planner.domain.catalog import HourlyBilling, Offer
from planner.domain.magnitudes import HOURS_PER_MONTH
from planner.domain.workload import ReserveWorkload, ServeWorkload, TrainWorkload
from planner.rules import PACKAGE_MODES, billed_hours, package_hours

Workload = TrainWorkload | ServeWorkload | ReserveWorkload


def unit_price(offer: Offer, mode: str) -> Fraction:
    """The price of one unit on `mode`: per hour (hourly, spot), per package otherwise."""
    billing = offer.billing(mode)
    assert billing is not None, (offer.id, mode)
    return Fraction(billing.price)


def rental_money(offer: Offer, mode: str, held: int, units: int) -> tuple[Decimal, Fraction]:
    """(billed hours per unit, exact cost) of one rental of `units` held `held` real hours.
    A package is paid in full and bills its real length; hourly and spot bill
    ceil(max(held, minimum) ÷ increment) × increment hours."""
    price = unit_price(offer, mode) * units
    if mode in PACKAGE_MODES:
        return Decimal(held), price
    billing = offer.billing(mode)
    assert isinstance(billing, HourlyBilling)
    billed = billed_hours(held, billing)
    return billed, price * Fraction(billed)


def runs_money(
    offer: Offer, mode: str, units: int, runs: Sequence[tuple[int, int]]
) -> tuple[Decimal, Fraction]:
    """(billed hours per unit, exact cost) of a run shape on rented units: each run
    (offset, length) is its own rental (a windowed job rents each day's run)."""
    billed, cost = Decimal(0), Fraction(0)
    for _, length in runs:
        hours, money = rental_money(offer, mode, length, units)
        billed, cost = billed + hours, cost + money
    return billed, cost


def round_up(
    offer: Offer, mode: str, billed: Decimal | int, held: int, units: int
) -> tuple[Fraction, Fraction]:
    """(unit-hours, money) billed beyond the `held` hours of rentals that bill `billed`."""
    extra = Fraction(billed) - held
    return extra * units, extra * units * unit_price(offer, mode)


def card_hour_price(offer: Offer, mode: str) -> Fraction:
    """What one held card-hour costs: a package's price spread over its nominal length (24 h
    a day), or the hourly price of a (committed) unit, per card. Nominal, so that a job's
    share does not depend on whether its package spans a daylight-saving change."""
    hours = package_hours(mode) if mode in PACKAGE_MODES else 1
    return unit_price(offer, mode) / (hours * offer.unit_cards)


def marginal_card_hour_price(offer: Offer, mode: str) -> Fraction:
    """What using one more held card-hour adds to a plan that holds it: a package's
    card-hour price (more use needs more packages), and nothing on committed hourly units,
    which are paid for whatever runs on them. For ranking options and for bounds; shares and
    idle money use `card_hour_price`."""
    return card_hour_price(offer, mode) if mode in PACKAGE_MODES else Fraction(0)


def disk_hour(offer: Offer, workload: Workload, disks: int = 1) -> Fraction:
    """Storage per held hour of `disks` disks of the workload's `disk_gb` on the offer: its
    price per GB-month of 720 h; nothing where either is absent."""
    price = offer.disk_price_per_gb_month
    if price is None or not workload.disk_gb:
        return Fraction(0)
    return Fraction(price) * Fraction(workload.disk_gb) * disks / HOURS_PER_MONTH


def storage_money(offer: Offer, workload: Workload, hours: int) -> Fraction:
    """A train job's disk over `hours`: its whole span, since disks of stopped instances
    bill too."""
    return disk_hour(offer, workload) * hours


@dataclass(frozen=True)
class ReplicaRate:
    """The money of one replica of a config: per held hour, and per start.

    `hour` is the rental per held hour (the hourly price × units on rented replicas, 0 on
    held cards, whose packages or commitments are paid as such); `disk` the storage per
    held hour (one disk per serve replica, one per card of a reserve); `setup` the hours a
    rented replica holds (and pays for) before it serves, at every start (0 on held cards)."""

    hour: Fraction
    disk: Fraction
    setup: int
    short: Fraction = Fraction(0)  # a rental serving fewer hours pays up to these (minimum)

    @property
    def per_hour(self) -> Fraction:
        """Rental and storage of one held hour."""
        return self.hour + self.disk

    def held_hours(self, counts: Sequence[int], segments: Sequence[tuple[int, int]]) -> int:
        """Replica-hours a count of replicas per segment holds: its serving hours, plus the
        setup hours of a start for every replica the count rises by."""
        serving = sum(n * (b - a) for n, (a, b) in zip(counts, segments, strict=True))
        starts = sum(max(0, n - (counts[s - 1] if s else 0)) for s, n in enumerate(counts))
        return serving + starts * self.setup

    def series_money(
        self, counts: Sequence[int], segments: Sequence[tuple[int, int]]
    ) -> tuple[Fraction, Fraction]:
        """(rental, storage) of a count of replicas per segment: the rental its held hours
        and the minimum's round-up, the disks its held hours."""
        held = self.held_hours(counts, segments)
        return self.hour * (held + self.round_up(counts, segments)), self.disk * held

    def series(self, counts: Sequence[int], segments: Sequence[tuple[int, int]]) -> Fraction:
        """Rental and storage of a count of replicas per segment, alone."""
        rental, storage = self.series_money(counts, segments)
        return rental + storage

    @property
    def windows(self) -> tuple[tuple[int, Fraction], ...]:
        """The minimum as whole-hour windows (W, weight): a rental serving h hours pays
        Σ weight × max(0, W − h) hours on top of them, which is max(0, short − h) for
        whole h. One window when `short` is whole, two (its floor and ceiling, weighted
        by the fraction) otherwise; none when no rental can serve less than `short`."""
        if self.short <= 1:
            return ()
        low, part = divmod(self.short, 1)
        windows = [(int(low), 1 - part), (int(low) + 1, part)]
        return tuple((w, weight) for w, weight in windows if weight and w > 1)

    def round_up(self, counts: Sequence[int], segments: Sequence[tuple[int, int]]) -> Fraction:
        """Hours billed beyond those held by the rentals of a count series (minimum only:
        the increment divides the hour, so whole held hours are never rounded): each rise
        starts rentals, each fall ends the oldest, the last end at the series' end, and each
        rental serving h < short hours pays short − h more. Oldest-first is the cheapest
        way to pair starts with ends (docs/rules.md, "Minimum billing of replicas")."""
        if self.short <= 1 or not segments:
            return Fraction(0)
        extra = Fraction(0)
        open_: list[int] = []  # serving since, oldest first
        for n, (a, _) in zip(counts, segments, strict=True):
            while len(open_) > n:
                extra += max(Fraction(0), self.short - (a - open_.pop(0)))
            open_ += [a] * (n - len(open_))
        end = segments[-1][1]
        return extra + sum((max(Fraction(0), self.short - (end - a)) for a in open_), Fraction(0))


def replica_rate(
    offer: Offer, workload: Workload, units: int, cards: int, rented: bool, setup: int
) -> ReplicaRate:
    """The rate of one replica of `units` units (`cards` cards) of `offer` for `workload`:
    on its own hourly rentals where `rented`, else on held cards; `setup` is the ceil(setup
    hours) a rented start holds."""
    disks = cards if workload.kind == "reserve" else 1
    disk = disk_hour(offer, workload, disks)
    if not rented:
        return ReplicaRate(Fraction(0), disk, 0)
    billing = offer.billing("hourly")
    assert isinstance(billing, HourlyBilling)
    # held h whole hours (setup included) bill max(h, minimum rounded up to the increment)
    increment = Fraction(billing.increment_hours)
    minimum = math.ceil(Fraction(billing.min_hours) / increment) * increment
    hour = unit_price(offer, "hourly") * units
    return ReplicaRate(hour, disk, setup, max(Fraction(0), minimum - setup))
