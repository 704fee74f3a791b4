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
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
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
    hold: int = 0  # a rental serves at least these hours (min_hold_hours) ...
    until: int = 0  # ... unless it ends at or after this hour (its workload's end)

    @property
    def per_hour(self) -> Fraction:
        """Rental and storage of one held hour."""
        return self.hour + self.disk

    def opening(self, gap: int | None) -> int:
        """The held hours a replica serving the first segment of a run of demand pays at
        least before it: its setup if started there (0 on held cards), or the `gap` hours
        since the last run if held through them (None: no run before)."""
        return self.setup if gap is None else min(self.setup, gap)

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

    @property
    def young(self) -> Fraction:
        """Serving this long or less, a rental's bill depends on its exact length (the
        minimum) or it may not end yet (the hold): past it, only on its length's residue."""
        return max(self.short, Fraction(self.hold - 1))

    def may_end(self, start: int, end: int) -> bool:
        """Whether a rental serving from `start` may end at `end` under the min hold."""
        return end - start >= self.hold or end >= self.until

    def joins(self, segments: Sequence[tuple[int, int]], u: int) -> int:
        """The first segment whose end a rental started at segment u would serve past
        `young` to (len(segments) when none): from there its round-up depends only on its
        start phase (planner.cpsat.steps)."""
        a = segments[u][0]
        late = (s for s in range(u, len(segments)) if segments[s][1] - a > self.young)
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
        (docs/rules.md, "Minimum billing of replicas") and keeps every min hold a series
        keeps; otherwise a min-cost flow pairs them, each rental held its `hold`
        (`_cheapest_rentals`)."""
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
    as a min-cost flow (OR-Tools' network simplex): each start's rentals end at a later
    fall directly while `young` (at the `extra` of their exact length, where the hold lets
    them), or join the pool of their start phase (start hour modulo `phases`), whose ends
    cost `settled` of their residue. Ends in a pool are paired oldest first, which costs
    the same (docs/rules.md, "Billing steps of replicas"). Arcs are built as arrays, so a
    quarter's series with hundreds of phases prices in seconds."""
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
    times = np.array(sorted(falls), dtype=np.int64)  # end node i is times[i]
    total = sum(n for _, n in rises)
    young = math.floor(rate.young)
    scale = rate.step.denominator  # every round-up is a whole multiple of 1/scale hours
    flow = min_cost_flow.SimpleMinCostFlow()

    def arcs(tails: Any, heads: Any, costs: Any) -> Any:
        size = len(tails)
        capacity = np.full(size, total, dtype=np.int64)
        return flow.add_arcs_with_capacity_and_unit_cost(tails, heads, capacity, costs)

    # pools: a chain of nodes per phase two or more starts share, one per later fall (a
    # phase of one start ends straight from it: the same costs, fewer nodes)
    shared = Counter(a % rate.phases for a, _ in rises)
    pools: dict[int, tuple[int, int, Any]] = {}  # phase → (first node, first fall, end arcs)
    node = len(times) + len(rises)  # ends, then starts, then pools
    for a, _ in rises:
        phase = a % rate.phases
        if phase in pools or shared[phase] == 1:
            continue
        first = int(np.searchsorted(times, a, side="right"))
        chain = node + np.arange(len(times) - first, dtype=np.int64)
        node += len(chain)
        if not len(chain):
            continue  # no fall after it: nothing of this phase can join
        residues = (times[first:] - phase) % rate.phases
        ends = arcs(chain, np.arange(first, len(times)), _in_steps(rate.settled, scale, residues))
        arcs(chain[:-1], chain[1:], np.zeros(len(chain) - 1, dtype=np.int64))
        pools[phase] = (int(chain[0]), first, ends)
    # starts: to each later fall while young, then into the pool of their phase
    tails, heads, starts, stops = [], [], [], []  # the direct arcs, start by start
    joining: list[tuple[int, int, int, int]] = []  # (start, arc, phase, fall index)
    for r, (a, _) in enumerate(rises):
        first = int(np.searchsorted(times, a, side="right"))
        later = times[first:]
        old = int(np.searchsorted(later - a, young, side="right"))  # first past `young`
        if shared[a % rate.phases] == 1:
            old = len(later)  # past `young`, `extra` is `settled` and every end is allowed
        allowed = (later[:old] - a >= rate.hold) | (later[:old] >= rate.until)
        stops.append(later[:old][allowed])
        heads.append(first + np.nonzero(allowed)[0])
        tails.append(np.full(len(heads[-1]), len(times) + r))
        starts.append(np.full(len(heads[-1]), a))
        if old < len(later):
            phase = a % rate.phases
            pool, since, _ = pools[phase]
            tail, head = np.array([len(times) + r]), np.array([pool + first + old - since])
            join = arcs(tail, head, np.zeros(1, dtype=np.int64))
            joining.append((a, int(join[0]), phase, first + old))
    begun, ended = np.concatenate(starts), np.concatenate(stops)
    cost = _in_steps(rate.extra, scale, ended - begun)  # one table for every length
    direct = arcs(np.concatenate(tails), np.concatenate(heads), cost)
    flow.set_nodes_supplies(
        np.arange(len(times) + len(rises)),
        np.array([-falls[int(t)] for t in times] + [n for _, n in rises], dtype=np.int64),
    )
    status = flow.solve()
    # ending the oldest first is a pairing that keeps every hold the counts keep
    assert status == flow.OPTIMAL, f"no pairing of {counts}: status {status}"
    carried = flow.flows(direct)
    done = [
        (int(begun[i]), int(ended[i])) for i in np.nonzero(carried)[0] for _ in range(carried[i])
    ]
    pooled: dict[tuple[int, int], list[int]] = {}  # (phase, fall index it joins) → starts
    for a, arc, phase, fall in joining:
        pooled.setdefault((phase, fall), []).extend([a] * int(flow.flow(arc)))
    for phase, (_, since, ends) in pools.items():
        waiting: list[int] = []  # start hours, oldest first
        for i, ending in enumerate(flow.flows(ends)):
            waiting += pooled.get((phase, since + i), [])
            done += [(a, int(times[since + i])) for a in waiting[: int(ending)]]
            del waiting[: int(ending)]
    return tuple(sorted(done, key=lambda r: (r[1], r[0])))


def _in_steps(hours_of: Callable[[int], Fraction], scale: int, serving: Any) -> Any:
    """`hours_of` (a rate's `extra` or `settled`) of an array of serving lengths, as whole
    multiples of 1/`scale` hours: worked out once per distinct length, so the flow's arcs
    are priced by the rate's own rule."""
    distinct, where = np.unique(serving, return_inverse=True)
    table = [hours_of(int(x)) * scale for x in distinct]
    assert all(x.denominator == 1 for x in table), table
    return np.array([int(x) for x in table], dtype=np.int64)[where]


def replica_rate(
    offer: Offer,
    workload: Workload,
    units: int,
    cards: int,
    rented: bool,
    setup: int,
    hold: tuple[int, int] = (0, 0),
) -> ReplicaRate:
    """The rate of one replica of `units` units (`cards` cards) of `offer` for `workload`:
    on its own hourly rentals where `rented`, else on held cards; `setup` is the ceil(setup
    hours) a rented start holds; `hold` its min hold hours and the hour it binds until."""
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
    short = max(Fraction(0), minimum - setup)
    return ReplicaRate(hour, disk, setup, short, increment, *hold)
