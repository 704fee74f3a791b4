"""The cost breakdown of a plan (PRODUCT.md rules 9-10): money by kind, and what the money
bought but did not use. Computed by the checker from the scenario and the plan alone."""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from fractions import Fraction
from typing import Any

from planner.configs import Config
from planner.domain.plan import Assignment, Plan
from planner.problem import Problem
from planner.rules import PACKAGE_MODES, held_card_hour_price
from planner.solution import money

Placed = dict[str, tuple[Assignment, Config, list[tuple[int, int]]]]


def breakdown(
    problem: Problem,
    plan: Plan,
    placed: dict[str, tuple[Assignment, Config, list[tuple[int, int]]]],
    total: Fraction,
) -> dict[str, Any]:
    """PRODUCT.md rules 9-10: money by kind, and what the money bought but did not use."""
    currency = plan.currency
    by_mode: dict[str, Fraction] = defaultdict(Fraction)
    by_month: dict[str, Fraction] = defaultdict(Fraction)
    round_up_hours = Fraction(0)
    round_up = Fraction(0)
    beyond = 0
    held_card_hours: dict[tuple[str, str], int] = defaultdict(int)
    for r in plan.rentals:
        offer = problem.offers[r.offer]
        billing = offer.billing(r.mode)
        a = _hour(problem, r.start)
        b = _hour(problem, r.end)
        billed, exact = problem.rental_money(r.mode, r.offer, b - a, r.units, r.workload)
        if r.mode in PACKAGE_MODES:
            beyond += max(0, b - problem.hours) * r.units * offer.unit_cards
            held_card_hours[(r.offer, r.mode)] += (
                (min(b, problem.hours) - a) * r.units * offer.unit_cards
            )
        else:
            extra = Fraction(billed) - (b - a)
            round_up_hours += extra * r.units
            round_up += Fraction(billing.price) * r.units * extra
            if r.committed:
                held_card_hours[(r.offer, r.mode)] += (b - a) * r.units * offer.unit_cards
        by_mode["commitments" if r.committed else r.mode] += exact
        by_month[f"{problem.local(a):%Y-%m}"] += exact
    used_card_hours: dict[tuple[str, str], int] = defaultdict(int)
    setup = Fraction(0)
    scaling_loss = Fraction(0)
    rework = Fraction(0)
    storage = Fraction(0)
    for replica in plan.replica:
        for u in replica.uses:
            if u.held:
                hours = math.floor((u.end - u.start).total_seconds() / 3600)
                used_card_hours[(u.offer, u.mode)] += hours * u.cards * u.replicas
    for _, c, runs in placed.values():
        if c.held:
            used_card_hours[c.pool] += sum(y - x for x, y in runs) * c.cards
        starts = len(runs) if not c.held else 1
        setup += c.setup_hours * starts * c.cards
        scaling_loss += (
            c.compute_hours * c.cards * Fraction(1 - c.efficiency).limit_denominator(10**6)
        )
        if c.mode == "spot":
            rework += (
                c.compute_hours * c.cards * Fraction(1 - c.spot_factor).limit_denominator(10**6)
            )
        storage += c.storage_cost
    idle_hours = 0
    idle_cost = Fraction(0)
    for key, held in held_card_hours.items():
        offer = problem.offers[key[0]]
        idle = max(0, held - used_card_hours.get(key, 0))
        idle_hours += idle
        per_card_hour = held_card_hour_price(offer, key[1])
        idle_cost += idle * per_card_hour
    return {
        "total": money(total, currency),
        "hourly": money(by_mode["hourly"], currency),
        "spot": money(by_mode["spot"], currency),
        "packages": money(
            sum((v for m, v in by_mode.items() if m in PACKAGE_MODES), Fraction(0)), currency
        ),
        "commitments": money(by_mode["commitments"], currency),
        "storage": money(storage, currency),
        "round_up_unit_hours": float(round_up_hours),
        "round_up_cost": money(round_up, currency),
        "idle_package_card_hours": idle_hours,
        "idle_package_cost": money(idle_cost, currency),
        "setup_card_hours": round(float(setup), 2),
        "scaling_loss_card_hours": round(float(scaling_loss), 2),
        "spot_rework_card_hours": round(float(rework), 2),
        "beyond_horizon_package_card_hours": beyond,
        "by_month": {m: money(v, currency) for m, v in sorted(by_month.items())},
    }


def _hour(problem: Problem, when: dt.datetime) -> int:
    return math.floor((when.astimezone(dt.UTC) - problem.axis.instant(0)).total_seconds() / 3600)
