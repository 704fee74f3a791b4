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
holds its setup hours before it serves, and pays for them; its rentals are paired with the
falls of its count series so that they bill the least.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from ortools.graph.python import min_cost_flow

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
    """The money of one replica of a config: per held hour, per start, and what billing
    adds to a rental's held hours.

    `hour` is the rental per held hour (the hourly price × units on rented replicas, 0 on
    held cards, whose packages or commitments are paid as such); `disk` the storage per
    held hour (one disk per serve replica, one per card of a reserve); `setup` the hours a
    rented replica holds (and pays for) before it serves, at every start (0 on held cards).
    A rental held h whole hours bills max(setup + short, ceil(h ÷ step) × step) hours:
    `short` is the minimum (rounded up to the step) less the setup, `step` the increment."""

    hour: Fraction
    disk: Fraction
    setup: int
    short: Fraction = Fraction(0)  # a rental serving fewer hours pays up to these (minimum)
    step: Fraction = Fraction(1)  # billing increment, hours

    @property
    def per_hour(self) -> Fraction:
        """Rental and storage of one held hour."""
        return self.hour + self.disk

    @property
    def phases(self) -> int:
        """How many residues of a rental's length its bill depends on past the minimum: the
        step's numerator (1 when the step divides the hour, 2 for a 2 h step, 3 for 0.75 h)."""
        return self.step.numerator

    @property
    def stepped(self) -> bool:
        """Billed in steps that do not divide the hour: a rental's bill depends on its
        length modulo `phases`, so which rental ends at a fall matters."""
        return self.phases > 1

    def extra(self, serving: int) -> Fraction:
        """Hours billed beyond those held by one rental that serves `serving` whole hours."""
        held = self.setup + serving
        stepped = math.ceil(Fraction(held) / self.step) * self.step
        return max(self.setup + self.short, stepped) - held

    def settled(self, serving: int) -> Fraction:
        """`extra` of a rental longer than `short` whose length is `serving` modulo
        `phases`: past the minimum, the bill's round-up depends on that residue only."""
        floor = math.floor(self.short)
        return self.extra(floor + 1 + (serving - floor - 1) % self.phases)

    def joins(self, segments: Sequence[tuple[int, int]], u: int) -> int:
        """The first segment whose end a rental started at segment u would serve past the
        minimum to (len(segments) when none): from there its round-up depends only on its
        start phase (planner.cpsat.steps)."""
        a = segments[u][0]
        late = (s for s in range(u, len(segments)) if segments[s][1] - a > self.short)
        return next(late, len(segments))

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
        and the billing's round-up, the disks its held hours."""
        held = self.held_hours(counts, segments)
        return self.hour * (held + self.round_up(counts, segments)), self.disk * held

    def series(self, counts: Sequence[int], segments: Sequence[tuple[int, int]]) -> Fraction:
        """Rental and storage of a count of replicas per segment, alone."""
        rental, storage = self.series_money(counts, segments)
        return rental + storage

    @property
    def windows(self) -> tuple[tuple[int, Fraction], ...]:
        """The minimum as whole-hour windows (W, weight), for steps that divide the hour: a
        rental serving h hours pays Σ weight × max(0, W − h) hours on top of them, which is
        max(0, short − h) for whole h. One window when `short` is whole, two (its floor and
        ceiling, weighted by the fraction) otherwise; none when no rental can serve less
        than `short`, or when the rate is `stepped` (planner.cpsat.steps bills those)."""
        if self.short <= 1 or self.stepped:
            return ()
        low, part = divmod(self.short, 1)
        windows = [(int(low), 1 - part), (int(low) + 1, part)]
        return tuple((w, weight) for w, weight in windows if weight and w > 1)

    def round_up(self, counts: Sequence[int], segments: Sequence[tuple[int, int]]) -> Fraction:
        """Hours billed beyond those held by the cheapest rentals of a count series."""
        if (self.short <= 1 and not self.stepped) or not segments:
            return Fraction(0)
        return sum((self.extra(b - a) for a, b in self.rentals(counts, segments)), Fraction(0))

    def rentals(
        self, counts: Sequence[int], segments: Sequence[tuple[int, int]]
    ) -> list[tuple[int, int]]:
        """The rentals (serving from, to) of a count series that bill the least: each rise
        starts rentals and each fall ends some, the last at the series' end; in the order
        they end. Where the step divides the hour, ending the oldest first is cheapest
        (docs/rules.md, "Minimum billing of replicas"); otherwise a min-cost flow pairs
        them (`_cheapest_rentals`)."""
        if self.stepped:
            return list(_cheapest_rentals(self, tuple(counts), tuple(segments)))
        done: list[tuple[int, int]] = []
        open_: list[int] = []  # serving since, oldest first
        for n, (a, _) in zip(counts, segments, strict=True):
            while len(open_) > n:
                done.append((open_.pop(0), a))
            open_ += [a] * (n - len(open_))
        end = segments[-1][1] if segments else 0
        return done + [(a, end) for a in reversed(open_)]


@functools.lru_cache(maxsize=1024)
def _cheapest_rentals(
    rate: ReplicaRate, counts: tuple[int, ...], segments: tuple[tuple[int, int], ...]
) -> tuple[tuple[int, int], ...]:
    """The cheapest pairing of a count series' starts with its ends under a stepped rate,
    as a min-cost flow (OR-Tools' network simplex): each start hour's rentals end at a
    later fall directly while they are within the minimum (`extra` of their exact length),
    or join the pool of their start phase (start hour modulo `phases`), whose ends cost
    `settled` of their residue. Ends in a pool are paired oldest first, which costs the
    same (docs/rules.md, "Billing steps of replicas")."""
    end = segments[-1][1] if segments else 0
    rises: list[tuple[int, int]] = []  # (hour, rentals started)
    falls: dict[int, int] = {}  # hour → rentals ended
    before = 0
    for n, (a, _) in zip(counts, segments, strict=True):
        if n > before:
            rises.append((a, n - before))
        elif n < before:
            falls[a] = before - n
        before = n
    if before:
        falls[end] = falls.get(end, 0) + before
    if not rises:
        return ()
    scale = rate.step.denominator  # every `extra` is a whole multiple of 1/scale hours
    flow = min_cost_flow.SimpleMinCostFlow()
    nodes: dict[tuple[int, ...], int] = {}  # (0, t): ends at t; (1, φ, t): pool; (2, a): starts
    total = sum(n for _, n in rises)

    def arc(tail: tuple[int, ...], head: tuple[int, ...], hours: Fraction) -> int:
        ids = [nodes.setdefault(key, len(nodes)) for key in (tail, head)]
        return int(flow.add_arc_with_capacity_and_unit_cost(*ids, total, int(hours * scale)))

    times = sorted(falls)
    direct: list[tuple[int, int, int]] = []  # (arc, start, end) within the minimum
    joining: list[tuple[int, int, int, int]] = []  # (arc, start, phase, hour it joins)
    pool_ends: list[tuple[int, int, int]] = []  # (arc, phase, end)
    first: dict[int, int] = {}  # phase → the hour its first rentals start
    for a, _ in rises:
        first.setdefault(a % rate.phases, a)
    settled: dict[int, Fraction] = {}  # residue → round-up past the minimum
    for phase, since in first.items():  # a pool per phase some rental starts in
        later = [t for t in times if t > since]
        for t in later:
            residue = (t - phase) % rate.phases
            hours = settled.setdefault(residue, rate.settled(residue))
            pool_ends.append((arc((1, phase, t), (0, t), hours), phase, t))
        for t, u in itertools.pairwise(later):
            arc((1, phase, t), (1, phase, u), Fraction(0))
    for a, _ in rises:
        for t in (t for t in times if t > a):
            if t - a > rate.short:  # past the minimum: into the pool of its phase
                phase = a % rate.phases
                joining.append((arc((2, a), (1, phase, t), Fraction(0)), a, phase, t))
                break
            direct.append((arc((2, a), (0, t), rate.extra(t - a)), a, t))
    for a, n in rises:
        flow.set_node_supply(nodes[(2, a)], n)
    for t, n in falls.items():
        flow.set_node_supply(nodes[(0, t)], -n)
    status = flow.solve()
    assert status == flow.OPTIMAL, status  # ending the oldest first is a pairing: one exists
    done = [(a, t) for i, a, t in direct for _ in range(flow.flow(i))]
    pooled: dict[tuple[int, int], list[int]] = {}  # (phase, hour it joins) → start hours
    for i, a, phase, t in joining:
        pooled.setdefault((phase, t), []).extend([a] * flow.flow(i))
    waiting: dict[int, list[int]] = {phase: [] for phase in first}  # oldest first
    for i, phase, t in sorted(pool_ends, key=lambda e: e[2]):
        waiting[phase] += pooled.pop((phase, t), [])
        ending = flow.flow(i)
        done += [(a, t) for a in waiting[phase][:ending]]
        del waiting[phase][:ending]
    return tuple(sorted(done, key=lambda r: (r[1], r[0])))


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
    # held h whole hours (setup included) bill max(minimum, h) rounded up to the increment
    increment = Fraction(billing.increment_hours)
    minimum = math.ceil(Fraction(billing.min_hours) / increment) * increment
    hour = unit_price(offer, "hourly") * units
    return ReplicaRate(hour, disk, setup, max(Fraction(0), minimum - setup), increment)
