"""Serve and reserve assignments (rule 6): legal replicas whose capacity, recomputed from
the estimates, covers demand and the minimum at every hour; hourly replicas on rentals of
their own workload, ready after setup; replicas on held cards counted in their pool; a
serve workload's replicas held their `min_hold_hours`."""

from __future__ import annotations

import math
from collections import defaultdict, deque
from decimal import Decimal
from fractions import Fraction

from planner.check.contract import (
    held_cards_rule,
    reserve_card_fits,
    reserve_demand,
    serve_capacity,
    serve_demand,
    setup_hours,
    units_for,
)
from planner.check.ledger import Ledger, Spent
from planner.check.rentals import Held, card_hour_price, hour_of
from planner.check.result import CheckResult, no_offer
from planner.domain.costs import CostTerm
from planner.domain.plan import Plan, ReplicaAssignment, ReplicaUse
from planner.domain.scenario import Scenario
from planner.domain.workload import ReserveWorkload, ServeWorkload
from planner.estimate.precision import supports

ConfigKey = tuple[str, str, bool, str, int, str]  # offer, mode, held, card, cards, precision


def _capacity(
    scenario: Scenario,
    w: ServeWorkload | ReserveWorkload,
    u: ReplicaUse,
    result: CheckResult,
    known: dict[tuple[ConfigKey, int], tuple[int | None, str | None]],
) -> int | None:
    """What one replica of this use carries, or None (and why, once per use) if it is not a
    legal replica. `known`: the answers for the workload's configs seen so far (a plan
    repeats each config over many uses)."""
    key = ((u.offer, u.mode, u.held, u.card, u.cards, u.precision), u.capacity)
    if key not in known:
        known[key] = _carries(scenario, w, u)
    capacity, why = known[key]
    if capacity is None:
        result.add("config", w.name, 1, "", why or "not a replica")
    return capacity


def _carries(
    scenario: Scenario, w: ServeWorkload | ReserveWorkload, u: ReplicaUse
) -> tuple[int | None, str | None]:
    """What one replica of this use carries, or None and why it is not a legal replica."""
    offer = scenario.offers.get(u.offer)
    why = None
    if offer is None:
        why = no_offer(u.offer)
    elif offer.card != u.card or u.mode not in offer.modes or u.mode == "spot":
        why = f"offer {u.offer} does not rent {u.card} {u.mode} for serving (never spot)"
    elif u.cards < 1 or u.cards > offer.node_cards:  # a network or not: serving's estimate
        why = f"{u.cards} card(s) do not fit one {offer.node_cards}-card node of {u.offer}"
    elif held_why := held_cards_rule(scenario, u.offer, u.mode, u.held):
        why = held_why
    if why is None and isinstance(w, ReserveWorkload):
        if not reserve_card_fits(scenario, w, scenario.cards[u.card]):
            why = f"{u.card} is not the card it reserves"
        else:
            return u.cards, None
    if why is None and isinstance(w, ServeWorkload):
        model = scenario.models[w.name]
        if w.max_cards_per_replica is not None and u.cards > w.max_cards_per_replica:
            why = f"{u.cards} cards per replica, max_cards_per_replica {w.max_cards_per_replica}"
        elif u.precision not in w.precision or not supports(scenario.cards[u.card], u.precision):
            why = f"precision {u.precision} is not listed or not supported by {u.card}"
        elif model.heads % u.cards or (model.kv_heads % u.cards and u.cards % model.kv_heads):
            why = f"{u.cards}-way tensor parallel does not split {model.heads} heads evenly"
        else:
            capacity = serve_capacity(scenario, w, scenario.cards[u.card], u.cards, u.precision)
            if capacity < 1:
                why = f"{u.cards}× {u.card} cannot carry one request"
            elif u.capacity > capacity:
                why = f"states {u.capacity} requests per replica; it carries {capacity}"
            else:
                return capacity, None
    return None, why


def check_replicas(
    scenario: Scenario,
    plan: Plan,
    held: dict[str, Held],
    used_rentals: dict[str, str],
    ledger: Ledger,
    result: CheckResult,
) -> None:
    """Every serve and reserve workload assigned once and covered at every hour."""
    workloads = {
        w.name: w for w in scenario.spec.workloads if isinstance(w, ServeWorkload | ReserveWorkload)
    }
    seen: set[str] = set()
    for a in plan.replica:
        w = workloads.get(a.workload)
        if w is None or a.workload in seen or a.kind != w.kind:
            result.add("workload", a.workload, 1, "", "no such serve/reserve workload, or twice")
            continue
        seen.add(a.workload)
        _check_one(scenario, a, w, held, used_rentals, ledger, result)
    for name in workloads:
        if name not in seen:
            result.add("workload", name, 1, "", "not done: no assignment")


def _check_one(
    scenario: Scenario,
    a: ReplicaAssignment,
    w: ServeWorkload | ReserveWorkload,
    held: dict[str, Held],
    used_rentals: dict[str, str],
    ledger: Ledger,
    result: CheckResult,
) -> None:
    axis = scenario.axis
    if isinstance(w, ServeWorkload):
        demand, minimum = serve_demand(scenario, w)
    else:
        demand, minimum = reserve_demand(scenario, w), [0] * axis.hours
    carried, running = [0] * axis.hours, [0] * axis.hours
    hourly: dict[str, dict[int, int]] = defaultdict(dict)  # offer → hour → units needed
    counts: dict[ConfigKey, list[int]] = defaultdict(lambda: [0] * axis.hours)  # replicas
    share, storage = Fraction(0), Fraction(0)
    known: dict[tuple[ConfigKey, int], tuple[int | None, str | None]] = {}
    for u in a.uses:
        capacity = _capacity(scenario, w, u, result, known)
        start, end = (
            hour_of(scenario, result, u.start, w.name),
            hour_of(scenario, result, u.end, w.name),
        )
        if capacity is None or start is None or end is None:
            continue
        if end <= start or u.replicas < 0:
            # else its hours, package share and disks would count negative
            result.add(
                "config",
                w.name,
                max(start - end, -u.replicas, 0),
                "h or replicas",
                f"a use of {u.replicas} replica(s) from {axis.text(start)} to "
                f"{axis.text(end)}: it must end after it starts, with replicas ≥ 0",
            )
            continue
        offer = scenario.offers[u.offer]
        for h in range(max(start, 0), min(end, axis.hours)):
            carried[h] += u.replicas * capacity
            running[h] += u.replicas
            counts[(u.offer, u.mode, u.held, u.card, u.cards, u.precision)][h] += u.replicas
        if u.held:
            ledger.use((u.offer, u.mode), start, end, u.replicas * u.cards)
            share += u.replicas * u.cards * (end - start) * card_hour_price(offer, u.mode)
            if offer.disk_price_per_gb_month is not None and w.disk_gb:
                disks = u.replicas * (u.cards if isinstance(w, ReserveWorkload) else 1)
                storage += _disk(offer.disk_price_per_gb_month, w.disk_gb, disks * (end - start))
        else:
            line = hourly[u.offer]
            for h in range(start, end):
                line[h] = line.get(h, 0) + u.replicas * units_for(offer, u.cards)
    _coverage(scenario, w.name, demand, minimum, carried, running, result)
    own = _own_rentals(scenario, w.name, hourly, held, used_rentals, ledger, result)
    if isinstance(w, ServeWorkload) and w.min_hold_hours:
        # a hold binds until the workload's end, or the horizon's if sooner
        end = min(axis.hour_of_local(w.end), axis.hours)
        _min_hold(scenario, w.name, w.min_hold_hours, end, counts, result)
        _rental_holds(scenario, w.name, w.min_hold_hours, end, own, result)
    _listed(w.name, a.rentals, [r.rental.id for r in own], result)
    for rental in own:
        price = rental.offer.disk_price_per_gb_month
        if price is not None and w.disk_gb:
            disks = rental.cards if isinstance(w, ReserveWorkload) else 1
            storage += _disk(price, w.disk_gb, disks * (rental.end - rental.start))
    if storage:
        # booked in the month the workload starts (inside the horizon)
        month = f"{axis.local(max(axis.hour_of_local(w.start), 0)):%Y-%m}"
        ledger.pay(("storage", w.name), CostTerm.STORAGE, storage, month)
    stated = share or a.package_share is not None
    ledger.spent[w.name] = Spent(a, [r.rental.id for r in own], share if stated else None)


def _min_hold(
    scenario: Scenario,
    name: str,
    hold: int,
    end: int,
    counts: dict[ConfigKey, list[int]],
    result: CheckResult,
) -> None:
    """A replica of a config, once started, serves `hold` hours or until `end`.

    Replayed per config, releasing the oldest replicas first: that order keeps every hold
    any order keeps, so a fall at hour t is early exactly when the count n(t) is below the
    replicas started in the last `hold` hours, Σ over (t − hold, t] of max(0, n(u) − n(u−1))."""
    axis = scenario.axis
    for key, n in sorted(counts.items()):
        alive: deque[list[int]] = deque()  # [start hour, replicas] serving, oldest first
        serving = 0
        for t in range(axis.hours + 1):
            level = n[t] if t < axis.hours else 0
            if level > serving:
                alive.append([t, level - serving])
            released, early, latest = max(serving - level, 0), 0, 0
            while released:
                batch = alive[0]
                taken = min(batch[1], released)
                if t < min(batch[0] + hold, end):
                    early, latest = early + taken, batch[0]
                batch[1] -= taken
                released -= taken
                if not batch[1]:
                    alive.popleft()
            serving = level
            if early:
                result.add(
                    "hold",
                    name,
                    early,
                    "replicas",
                    f"{early} replica(s) of {key[4]}× {key[3]} on {key[0]} {key[1]} released at "
                    f"{axis.text(t)}, up to {min(latest + hold, end) - t} h before their "
                    f"min_hold_hours {hold} end (started {axis.text(latest)})",
                )


def _rental_holds(
    scenario: Scenario, name: str, hold: int, end: int, own: list[Held], result: CheckResult
) -> None:
    """Each hourly rental of the workload, a replica of its own, serves `hold` hours after
    its setup, or ends at or after `end`."""
    axis = scenario.axis
    for h in own:
        serving = h.start + math.ceil(setup_hours(scenario, h.offer, name))
        if h.end - serving < hold and h.end < end:
            result.add(
                "hold",
                h.rental.id,
                hold - (h.end - serving),
                "h",
                f"rental of {name} serves {h.end - serving} h ({axis.text(serving)} to "
                f"{axis.text(h.end)}), under its min_hold_hours {hold}, and ends before "
                f"the workload does ({axis.text(end)})",
            )


def _listed(name: str, listed: list[str], own: list[str], result: CheckResult) -> None:
    """The assignment lists exactly the rentals started for it, each once (its cost is
    theirs)."""
    for rental_id in sorted(set(listed) | set(own)):
        off = listed.count(rental_id) - own.count(rental_id)
        if off:
            result.add(
                "rental",
                name,
                abs(off),
                "rentals",
                f"lists rental {rental_id} {listed.count(rental_id)} time(s); "
                f"{own.count(rental_id)} of its own rentals has that id",
            )


def _disk(price: Decimal, gigabytes: float, hours: int) -> Fraction:
    return Fraction(price) * Fraction(gigabytes) * hours / 720


def _coverage(
    scenario: Scenario,
    name: str,
    demand: list[int],
    minimum: list[int],
    carried: list[int],
    running: list[int],
    result: CheckResult,
) -> None:
    short = [h for h in range(len(demand)) if carried[h] < demand[h]]
    if short:
        h = short[0]
        result.add(
            "demand",
            name,
            demand[h] - carried[h],
            "requests or cards",
            f"short by {demand[h] - carried[h]} at {scenario.axis.text(h)} "
            f"({len(short)} hour(s) short)",
        )
    few = [h for h in range(len(minimum)) if running[h] < minimum[h]]
    if few:
        h = few[0]
        result.add(
            "demand",
            name,
            minimum[h] - running[h],
            "replicas",
            f"{running[h]} replica(s) below the minimum {minimum[h]} at {scenario.axis.text(h)}",
        )


def _own_rentals(
    scenario: Scenario,
    name: str,
    hourly: dict[str, dict[int, int]],
    held: dict[str, Held],
    used_rentals: dict[str, str],
    ledger: Ledger,
    result: CheckResult,
) -> list[Held]:
    """Rule 6: hourly replicas run on rentals started for this workload; a rental serves
    from the first whole hour after its setup (setup is held, billed and in stock)."""
    own = [
        h
        for h in held.values()
        if h.rental.workload == name and not h.rental.committed and h.rental.mode == "hourly"
    ]
    for offer_id in sorted({h.rental.offer for h in own} | set(hourly)):
        offer = scenario.offers[offer_id]
        ready = math.ceil(setup_hours(scenario, offer, name))
        supply: dict[int, int] = {}
        need = hourly.get(offer_id, {})
        for h in own:
            if h.rental.offer != offer_id:
                continue
            ledger.report(CostTerm.SETUP, setup_hours(scenario, offer, name) * h.cards)
            for x in range(h.start + ready, h.end):
                supply[x] = supply.get(x, 0) + h.rental.units
            # a rental carries a replica if its workload runs hourly replicas here in some
            # hour it is set up; one that never could is a rental no workload uses (rule 4)
            if any(need.get(x, 0) for x in range(h.start + ready, h.end)):
                used_rentals[h.rental.id] = name
        lacking = sorted(x for x, units in need.items() if units > supply.get(x, 0))
        if lacking:
            x = lacking[0]
            result.add(
                "rental",
                name,
                need[x] - supply.get(x, 0),
                "units",
                f"{need[x]} unit(s) of {offer_id} serve at {scenario.axis.text(x)} but "
                f"{supply.get(x, 0)} rented and set up ({len(lacking)} hour(s) short)",
            )
    return own
