"""Views of a checked plan that people act on, computed from the plan alone: the order sheet
(rentals grouped into what a person orders), cards held and used hour by hour per pool, and
spend by month both as cash and by use. Tables, CSV and the HTML report all read these."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from itertools import accumulate

from planner.domain.money import apportion, from_minor, to_minor
from planner.domain.plan import Assignment, Plan, Rental, ReplicaAssignment, by_use
from planner.domain.scenario import Scenario
from planner.domain.timeaxis import TimeAxis
from planner.domain.values import PACKAGE_DAYS

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
STORAGE = "storage"  # the mode of an order line for a workload's disks


@dataclass(frozen=True)
class OrderLine:
    """Rentals of one offer and billing mode that a person orders as one line: the same
    workload's hourly or spot rentals, or an offer's packages (shared by workloads). Units
    held are `base_units` all through [first, last), and up to `peak_units` in `hours` of
    the day on `days` of the week (both empty where the count never changes)."""

    offer: str
    card: str
    mode: str
    committed: bool
    workload: str | None
    unit_cards: int
    base_units: int
    peak_units: int
    hours: str  # local hours of day when more than base_units are held, e.g. "08:00–20:00"
    days: str  # weekdays when more than base_units are held, e.g. "mon-fri"; "" every day
    usual_units: int  # the count held in most hours of [first, last)
    first: dt.datetime
    last: dt.datetime
    rentals: int
    cost: Decimal

    @property
    def pattern(self) -> str:
        """The units held as a person says it: '4 cards at 09-19 mon-fri', '2 cards all
        through + up to 3 more at 08-20'."""
        if self.mode == STORAGE:
            return "disks while its cards are held"
        at = " ".join(p for p in (f"at {self.hours}" if self.hours else "", self.days) if p)
        if self.base_units == self.peak_units:
            return _units(self.base_units, self.unit_cards) + " all through"
        if not at:  # the count varies at every hour of the day
            at = f"(most hours {self.usual_units})"
        if self.base_units == 0:
            return f"up to {_units(self.peak_units, self.unit_cards)} {at}"
        extra = self.peak_units - self.base_units
        return f"{_units(self.base_units, self.unit_cards)} all through + up to {extra} more {at}"


def _units(n: int, unit_cards: int) -> str:
    if unit_cards == 1:
        return f"{n} card{'s' if n != 1 else ''}"
    return f"{n} × {unit_cards}-card machine{'s' if n != 1 else ''}"


def _line_key(r: Rental) -> tuple[str, str, bool, str]:
    # hourly and spot rentals are started for a workload; packages are shared by all
    return (r.offer, r.mode, r.committed, "" if r.mode in PACKAGE_DAYS else (r.workload or ""))


def order_sheet(axis: TimeAxis, plan: Plan) -> list[OrderLine]:
    """The plan's rentals as order lines, by first start, then offer, mode and workload;
    then each workload's storage (its disks) as a line of mode `storage`. The lines add up
    to the plan's total."""
    groups: dict[tuple[str, str, bool, str], list[Rental]] = defaultdict(list)
    for r in plan.rentals:
        groups[_line_key(r)].append(r)
    local: dict[int, dt.datetime] = {}  # hour index → local time, shared by the lines
    lines = [_order_line(axis, rentals, local) for rentals in groups.values()]
    lines.sort(key=lambda x: (x.first.timestamp(), x.offer, x.mode, x.committed, x.workload or ""))
    return lines + [_storage_line(a) for a in plan.assignments if a.storage]


def _storage_line(a: Assignment | ReplicaAssignment) -> OrderLine:
    """A workload's disks, on the offers it runs on, from its first start to its last end."""
    if isinstance(a, Assignment):
        offers, cards, first, last = [a.offer], [a.card], a.start, a.end
    else:
        offers = sorted({u.offer for u in a.uses})
        cards = sorted({u.card for u in a.uses})
        first = min((u.start for u in a.uses), key=lambda t: t.timestamp())
        last = max((u.end for u in a.uses), key=lambda t: t.timestamp())
    return OrderLine(
        offer=", ".join(offers),
        card=", ".join(cards),
        mode=STORAGE,
        committed=False,
        workload=a.workload,
        unit_cards=0,
        base_units=0,
        peak_units=0,
        hours="",
        days="",
        usual_units=0,
        first=first,
        last=last,
        rentals=0,
        cost=a.storage,
    )


def _order_line(axis: TimeAxis, rentals: list[Rental], local: dict[int, dt.datetime]) -> OrderLine:
    first = min(axis.hour(r.start) for r in rentals)
    last = max(axis.hour(r.end) for r in rentals)
    step = [0] * (last - first + 1)
    for r in rentals:
        step[axis.hour(r.start) - first] += r.units
        step[axis.hour(r.end) - first] -= r.units
    held = list(accumulate(step))[:-1]
    base, peak = min(held), max(held)
    above = [first + i for i, n in enumerate(held) if n > base]
    # hours of day and weekdays as local wall-clock time (the time axis's one DST rule)
    for h in above:
        if h not in local:
            local[h] = axis.local(h)
    hours = sorted({local[h].hour for h in above})
    days = sorted({local[h].weekday() for h in above})
    r0 = rentals[0]
    return OrderLine(
        offer=r0.offer,
        card=r0.card,
        mode=r0.mode,
        committed=r0.committed,
        workload=None if r0.mode in PACKAGE_DAYS else r0.workload,
        unit_cards=r0.cards // r0.units,
        base_units=base,
        peak_units=peak,
        hours="" if len(hours) in (0, 24) else _hour_ranges(hours),
        days="" if len(days) in (0, 7) else _day_ranges(days),
        usual_units=Counter(held).most_common(1)[0][0],
        first=axis.instant(first),
        last=axis.instant(last),
        rentals=len(rentals),
        cost=sum((r.cost for r in rentals), Decimal(0)),
    )


def _runs(values: list[int], size: int) -> list[tuple[int, int]]:
    """Sorted values of 0 … size-1 as cyclic runs [a, b) (b may wrap past size)."""
    runs: list[list[int]] = []
    for v in values:
        if runs and runs[-1][1] == v:
            runs[-1][1] = v + 1
        else:
            runs.append([v, v + 1])
    if len(runs) > 1 and runs[0][0] == 0 and runs[-1][1] == size:  # joins across midnight
        runs[0][0] = runs.pop()[0]
        runs[0][1] += size
        runs.insert(0, runs.pop(0))
    return [(a, b) for a, b in runs]


def _hour_ranges(hours: list[int]) -> str:
    """Hours of the day as wall-clock ranges, `08:00–19:00`, one notation with every time
    gpuplan prints (a range past midnight: `21:00–10:00`)."""
    return ", ".join(f"{a:02d}:00–{b if b == 24 else b % 24:02d}:00" for a, b in _runs(hours, 24))


def _day_ranges(days: list[int]) -> str:
    parts = []
    for a, b in _runs(days, 7):
        names = [WEEKDAYS[d % 7] for d in range(a, b)]
        parts.append(names[0] if len(names) == 1 else f"{names[0]}-{names[-1]}")
    return ", ".join(parts)


# --- cards held and used, hour by hour --------------------------------------------------


@dataclass(frozen=True)
class PoolHours:
    """Cards of one card type on one billing mode, held and used at each horizon hour."""

    card: str
    mode: str
    held: list[int]
    used: list[int]


def pool_hours(axis: TimeAxis, plan: Plan) -> list[PoolHours]:
    """Held cards (from the rentals) and used cards (train runs, replicas) per pool and hour
    inside the horizon, pools sorted by card then mode."""
    size = axis.hours
    held: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * (size + 1))
    used: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * (size + 1))

    def add(table: list[int], start: dt.datetime, end: dt.datetime, cards: int) -> None:
        a, b = max(axis.hour(start), 0), min(axis.hour(end), size)
        if a < b:
            table[a] += cards
            table[b] -= cards

    for r in plan.rentals:
        add(held[(r.card, r.mode)], r.start, r.end, r.cards)
    for a in plan.train:
        for run in a.runs:
            add(used[(a.card, a.mode)], run.start, run.end, a.cards)
    for ra in plan.replica:
        for u in ra.uses:
            add(used[(u.card, u.mode)], u.start, u.end, u.replicas * u.cards)
    pools = sorted(held.keys() | used.keys())
    return [
        PoolHours(
            card,
            mode,
            list(accumulate(held[(card, mode)]))[:-1],
            list(accumulate(used[(card, mode)]))[:-1],
        )
        for card, mode in pools
    ]


# --- use of a held pool ------------------------------------------------------------------


def instant_hours(a: dt.datetime, b: dt.datetime) -> Fraction:
    """Hours between two aware times, by the instant (wall-clock subtraction of one zone's
    times is wrong across a clock change)."""
    return Fraction(int(b.timestamp() - a.timestamp()), 3600)


@dataclass(frozen=True)
class PoolUse:
    """Card-hours of one offer's billing mode held and used inside the horizon."""

    offer: str
    mode: str
    held_card_hours: Fraction
    used_card_hours: Fraction

    @property
    def utilisation(self) -> float:
        return float(self.used_card_hours / self.held_card_hours) if self.held_card_hours else 0.0


def pool_use(scenario: Scenario, plan: Plan, offer: str, mode: str) -> PoolUse:
    """Held cards of `offer`'s `mode` (its packages and commitments) and the work on them."""
    end = scenario.axis.instant(scenario.axis.hours)
    held = Fraction(0)
    for r in plan.rentals:
        if r.offer == offer and r.mode == mode and (r.committed or mode in PACKAGE_DAYS):
            held += instant_hours(r.start, min(r.end, end, key=lambda t: t.timestamp())) * r.cards
    used = sum(
        (
            instant_hours(w.start, w.end) * w.cards
            for w in held_work(plan)
            if w.pool == (offer, mode)
        ),
        Fraction(0),
    )
    return PoolUse(offer, mode, held, used)


@dataclass(frozen=True)
class HeldWork:
    """Work on held cards (packages, commitments): a train run, or a run of a constant
    replica count, with the cards it uses."""

    workload: str
    pool: tuple[str, str]  # offer, mode
    start: dt.datetime
    end: dt.datetime
    cards: int


def held_work(plan: Plan) -> list[HeldWork]:
    """Every train run and replica use of the plan on held cards."""
    out = [
        HeldWork(a.workload, (a.offer, a.mode), run.start, run.end, a.cards)
        for a in plan.train
        if a.held
        for run in a.runs
    ]
    out += [
        HeldWork(ra.workload, (u.offer, u.mode), u.start, u.end, u.replicas * u.cards)
        for ra in plan.replica
        for u in ra.uses
        if u.held
    ]
    return out


# --- spend by month ------------------------------------------------------------------------


def spend_by_use(axis: TimeAxis, plan: Plan) -> dict[str, Decimal]:
    """Spend per calendar month by use: each rental's cost spread evenly over the hours it is
    held (a package past the horizon end books its tail in the months it covers); money no
    rental carries (storage) where the cash view books it. The months add up to the cash
    view's, exactly: the exact months are apportioned (`apportion`; ties: the earlier
    month)."""
    assert plan.cost_breakdown is not None
    cash = plan.cost_breakdown.by_month
    exact: dict[str, Fraction] = defaultdict(Fraction)
    for month, value in cash.items():
        exact[month] += Fraction(value)
    for r in plan.rentals:
        exact[f"{r.start:%Y-%m}"] -= Fraction(r.cost)  # as the cash view booked it
        a, b = axis.hour(r.start), axis.hour(r.end)
        per_hour = Fraction(r.cost) / (b - a)
        for month, hours in _hours_by_month(axis, a, b).items():
            exact[month] += per_hour * hours
    months = sorted(m for m, v in exact.items() if v or m in cash)
    parts = apportion([exact[m] for m in months], plan.currency)
    return {m: from_minor(part, plan.currency) for m, part in zip(months, parts, strict=True)}


def _hours_by_month(axis: TimeAxis, a: int, b: int) -> dict[str, int]:
    """Hours of [a, b) per local calendar month."""
    out: dict[str, int] = defaultdict(int)
    h = a
    while h < b:
        month = axis.local(h)
        # 00:00 of the next month's first day, as an hour index
        nxt = (month.replace(day=28) + dt.timedelta(days=4)).replace(day=1).date()
        edge = min(axis.hour_of_local(nxt), b)
        out[f"{month:%Y-%m}"] += edge - h
        h = edge
    return dict(out)


# --- spend by workload -------------------------------------------------------------------

UNUSED = "(held cards no workload uses)"


@dataclass(frozen=True)
class WorkloadSpend:
    """What one workload costs the plan, in the one attribution every view shares (`cost`):
    its own hourly and spot rentals, its storage, and `held`, its part of the held cards'
    money (packages, commitments) charged by cause. Beside it, `by_use`: the same with its
    package share (its card-hours on held cards at their price) instead of `held`. The last
    row (`UNUSED`, kind `unused`) is held money no workload causes (a commitment nothing
    runs on)."""

    workload: str
    kind: str
    rentals: Decimal
    storage: Decimal
    package_share: Decimal
    held: Decimal = Decimal(0)

    @property
    def by_use(self) -> Decimal:
        return self.rentals + self.storage + self.package_share

    @property
    def cost(self) -> Decimal:
        """What the plan charges it: its own lines and the held money it causes."""
        return self.rentals + self.storage + self.held


def spend_by_workload(plan: Plan) -> list[WorkloadSpend]:
    """Each workload's cost in the plan's order, then held money no workload causes; the rows
    add up to the plan's total to the minor unit.

    A pool of held cards (an offer's packages or commitments of one mode) costs its money
    whether used or not, and each held rental is charged to the work on its pool while it
    is held. The packages that some workloads force (they run nowhere else: `plan.forced`,
    up to its count and price, earliest first) are theirs, idle hours and days past the
    horizon included, and the workloads that use their spare cards are charged nothing for
    them (they ride on what was bought anyway). Any other package is charged to the work on
    its pool while it is held, by card-hours, its idle money with it. Commitments, signed
    before the plan, are caused by no workload: their users pay the part they use; their
    idle part stays in the last row, as does a package nothing runs on. The exact parts are
    apportioned (`apportion`) to the minor unit over the held rentals' stated money, so the
    rows add up to the total exactly."""
    c = plan.currency
    none = from_minor(0, c)  # a workload without a package share: 0.00 like every amount
    rows = [
        WorkloadSpend(a.workload, a.kind, a.cost - a.storage, a.storage, a.package_share or none)
        for a in plan.assignments
    ]
    held_money = plan.total_cost - sum((r.rentals + r.storage for r in rows), Decimal(0))
    exact = _held(plan)
    weights = [exact.get(r.workload, Fraction(0)) for r in rows] + [exact.get(UNUSED, Fraction(0))]
    minor = to_minor(held_money, c)
    parts = apportion(weights, c, minor) if sum(weights) else [0] * len(rows) + [minor]
    rows = [replace(r, held=from_minor(p, c)) for r, p in zip(rows, parts, strict=False)]
    zero = Decimal(0).quantize(plan.total_cost)
    unused = plan.total_cost - sum(map(by_use, plan.assignments), Decimal(0))
    return [*rows, WorkloadSpend(UNUSED, "unused", zero, zero, unused, from_minor(parts[-1], c))]


def attribution(plan: Plan) -> dict[str, Decimal]:
    """Each workload's cost as every view states it (`spend_by_workload`), and `UNUSED`
    where held money has no cause."""
    rows = spend_by_workload(plan)
    return {r.workload: r.cost for r in rows if r.kind != "unused" or r.cost}


def _held(plan: Plan) -> dict[str, Fraction]:
    """Each workload's exact part of the held cards' money by cause (and `UNUSED`), rental
    by rental: a held rental is charged to the work on its pool while it is held."""
    spans: dict[tuple[str, str], list[HeldWork]] = defaultdict(list)
    for w in held_work(plan):
        spans[w.pool].append(w)
    forced = {(f.offer, f.mode): (set(f.workloads), Fraction(f.cost)) for f in plan.forced}
    left = {pool: cost for pool, (_, cost) in forced.items()}  # forced money not yet charged
    out: dict[str, Fraction] = defaultdict(Fraction)

    def charge(money: Fraction, to: dict[str, Fraction]) -> None:
        weight = sum(to.values(), Fraction(0))
        if not weight:
            out[UNUSED] += money
            return
        for name, hours in to.items():
            out[name] += money * hours / weight

    held = [r for r in plan.rentals if r.committed or r.mode in PACKAGE_DAYS]
    for r in sorted(held, key=lambda r: (r.start.timestamp(), r.id)):
        pool, money = (r.offer, r.mode), Fraction(r.cost)
        users: dict[str, Fraction] = defaultdict(Fraction)
        for w in spans.get(pool, []):
            start = max(r.start, w.start, key=lambda t: t.timestamp())
            end = min(r.end, w.end, key=lambda t: t.timestamp())
            if end.timestamp() > start.timestamp():
                users[w.workload] += instant_hours(start, end) * w.cards
        if r.committed:  # signed before the plan: its users pay the part they use
            capacity = instant_hours(r.start, r.end) * r.cards
            used = sum(users.values(), Fraction(0))
            share = min(used / capacity, Fraction(1)) if capacity else Fraction(0)
            charge(money * share, users)
            out[UNUSED] += money * (1 - share)
            continue
        names = forced.get(pool, (set(), Fraction(0)))[0]
        forcers = {n: h for n, h in users.items() if n in names}
        part = min(money, left.get(pool, Fraction(0))) if forcers else Fraction(0)
        if part:
            left[pool] -= part
            charge(part, forcers)  # a package they force, idle days included
        charge(money - part, users)  # any other package: its users, by card-hours
    return dict(out)


def without_packages(plan: Plan) -> str | None:
    """What the bound over plans that buy no optional package (`Plan.bound_without_packages`:
    none but on the pools every plan buys from, those some workload forces or commitments
    buy on) says of this plan, in one sentence; None where there is no such bound."""
    alone = plan.bound_without_packages
    if alone is None:
        return None
    c, total = plan.currency, plan.total_cost
    every = {(f.offer, f.mode) for f in plan.forced}
    every |= {(r.offer, r.mode) for r in plan.rentals if r.mode in PACKAGE_DAYS and r.committed}
    bought = sorted(
        {
            f"{r.offer} {r.mode}"
            for r in plan.rentals
            if r.mode in PACKAGE_DAYS and (r.offer, r.mode) not in every
        }
    )
    but = f" but on {', '.join(f'{o} {m}' for o, m in sorted(every))}" if every else ""
    head = f"no plan that buys no package{but} costs less than {c} {alone:,.2f}"
    other = "other " if every else ""
    if bought and alone > total:
        return (
            f"{head}, so the {other}packages this plan buys ({', '.join(bought)}) save at "
            f"least {c} {alone - total:,.2f}"
        )
    if bought:
        return f"{head}; this plan buys {other}packages ({', '.join(bought)})"
    none = "no other" if every else "none"
    if alone > total:  # the solve refuses such a bound (a model inconsistency): never shown
        return f"{head}, yet this plan buys {none} and costs {c} {total:,.2f}: a wrong bound"
    rest = "" if plan.bound is None else f" down to {c} {plan.bound:,.2f}"
    return (
        f"{head}, and this plan buys {none}: among such plans at most {c} {total - alone:,.2f} "
        f"({(total - alone) / total:.1%}) could still be saved; the rest of the gap{rest} is "
        f"what {other}packages might save, which the relaxation cannot rule out"
    )
