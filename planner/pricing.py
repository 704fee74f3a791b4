"""The model's one pricing of a solution, by cost term (docs/rules.md, rules 9-10): what it
pays per term, what its money bought but did not use, and the plan's breakdown.

This is the model side, priced from the problem's closed forms (configs, pools, segments);
the checker recomputes every term by its own method, and the two must agree exactly.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

from planner.domain.costs import PAID, PRICED, REPORTED, CostTerm, reported_amount
from planner.domain.money import money
from planner.domain.plan import Assignment, CostBreakdown, Plan, Quantity, by_use
from planner.prices import card_hour_price, round_up
from planner.problem import Problem
from planner.rules import PACKAGE_MODES, setup_hours

if TYPE_CHECKING:
    from planner.solution import Solution


def paid_terms(problem: Problem, solution: Solution) -> dict[CostTerm, Fraction]:
    """Exact money per paid term; their sum is the objective."""
    terms: dict[CostTerm, Fraction] = dict.fromkeys(PAID, Fraction(0))
    for job in problem.jobs:
        config = solution.config(problem, job.index)
        if not config.held:
            terms[CostTerm(config.mode)] += config.rental_cost
        terms[CostTerm.STORAGE] += config.storage_cost
    for f in problem.fixed:
        terms[CostTerm.COMMITMENT] += f.cost
    bought = sum(
        (
            problem.pools[key].unit_price * n
            for key, days in solution.packages.items()
            for n in days.values()
        ),
        Fraction(0),
    )
    # committed packages are among the packages bought: paid once, as commitments
    terms[CostTerm.PACKAGE] += bought - problem.bought_commitments
    rental, storage = solution.replica_money(problem)
    terms[CostTerm.HOURLY] += rental
    terms[CostTerm.STORAGE] += storage
    return terms


def reported_terms(
    problem: Problem, solution: Solution
) -> dict[CostTerm, tuple[Fraction, Fraction]]:
    """(amount, money) per reported-only term."""
    terms: dict[CostTerm, tuple[Fraction, Fraction]] = dict.fromkeys(
        REPORTED, (Fraction(0), Fraction(0))
    )

    def add(term: CostTerm, amount: Fraction, cost: Fraction = Fraction(0)) -> None:
        terms[term] = (terms[term][0] + amount, terms[term][1] + cost)

    for job in problem.jobs:
        c = solution.config(problem, job.index)
        add(CostTerm.SETUP, c.setup_hours * (1 if c.held else len(c.runs)) * c.cards)
        add(CostTerm.SCALING_LOSS, c.compute_hours * c.cards * (1 - Fraction(c.efficiency)))
        add(CostTerm.SPOT_REWORK, c.compute_hours * c.cards * (1 - Fraction(c.spot_factor)))
        if not c.held:
            ran = sum(length for _, length in c.runs)
            offer = problem.offers[c.offer]
            add(CostTerm.ROUND_UP, *round_up(offer, c.mode, c.billed_hours, ran, c.units))
    setups: dict[tuple[int, str], Fraction] = {}  # per replica job and offer
    for (j, k, s), count in solution.replicas.items():
        replica_job = problem.replica_jobs[j]
        config = replica_job.configs[k]
        if config.rented:
            rise = max(0, count - solution.replicas.get((j, k, s - 1), 0))
            offer = problem.offers[config.offer]
            if (j, offer.id) not in setups:
                name = replica_job.name
                model = problem.scenario.models.get(name)
                setups[j, offer.id] = setup_hours(offer, model, _minutes(problem, name))
            add(CostTerm.SETUP, rise * setups[j, offer.id] * config.units * offer.unit_cards)
    for j, k in sorted({(j, k) for j, k, _ in solution.replicas}):
        replica_job = problem.replica_jobs[j]
        rate = problem.replica_rate(replica_job.name, replica_job.configs[k])
        hours = rate.round_up(solution.series(problem, j, k), problem.segments)
        add(CostTerm.ROUND_UP, hours * replica_job.configs[k].units, hours * rate.hour)
    for f in problem.fixed:
        if f.mode not in PACKAGE_MODES:
            offer = problem.offers[f.offer]
            add(
                CostTerm.ROUND_UP,
                *round_up(offer, f.mode, f.billed_hours, f.end - f.start, f.units),
            )
    for key, (idle, beyond) in _unused_card_hours(problem, solution).items():
        offer = problem.offers[key[0]]
        add(CostTerm.IDLE, Fraction(idle), idle * card_hour_price(offer, key[1]))
        add(CostTerm.BEYOND_HORIZON, Fraction(beyond))
    return terms


def _minutes(problem: Problem, name: str) -> int | None:
    return problem.scenario.workload(name).setup_minutes


def _add(line: dict[int, int], start: int, end: int, cards: int) -> None:
    for h in range(start, end):
        line[h] = line.get(h, 0) + cards


def unused_money(problem: Problem, solution: Solution) -> Fraction:
    """Held card-hours no workload uses, idle inside the horizon and past its end, at the
    card-hour price: what the money rule sets beside the package shares (docs/rules.md)."""
    return sum(
        (
            card_hour_price(problem.offers[key[0]], key[1]) * (idle + beyond)
            for key, (idle, beyond) in _unused_card_hours(problem, solution).items()
        ),
        Fraction(0),
    )


def _unused_card_hours(
    problem: Problem, solution: Solution
) -> dict[tuple[str, str], tuple[int, int]]:
    """Per pool, held card-hours no workload uses: idle inside the horizon, and past its end
    (where nothing runs)."""
    used = _held_use(problem, solution)
    unused = {}
    for key, line in _held(problem, solution).items():
        inside = {h: n for h, n in line.items() if 0 <= h < problem.hours}
        idle = sum(max(0, n - used[key].get(h, 0)) for h, n in inside.items())
        unused[key] = (idle, sum(n for h, n in line.items() if h >= problem.hours))
    return unused


def _held_use(problem: Problem, solution: Solution) -> dict[tuple[str, str], dict[int, int]]:
    """Cards used on held cards per pool and hour: train jobs' runs and replicas."""
    used: dict[tuple[str, str], dict[int, int]] = defaultdict(dict)
    for job in problem.jobs:
        c = solution.config(problem, job.index)
        if c.held:
            start = solution.starts[job.index]
            for offset, length in c.runs:
                _add(used[c.pool], start + offset, start + offset + length, c.cards)
    for (j, k, s), count in solution.replicas.items():
        config = problem.replica_jobs[j].configs[k]
        if not config.rented:
            a, b = problem.segments[s]
            _add(used[(config.offer, config.mode)], a, b, count * config.cards)
    return used


def _held(problem: Problem, solution: Solution) -> dict[tuple[str, str], dict[int, int]]:
    """Cards held per pool and hour: packages bought (committed ones among them) and
    committed hourly or spot rentals."""
    held: dict[tuple[str, str], dict[int, int]] = defaultdict(dict)
    for key, days in solution.packages.items():
        cards = problem.offers[key[0]].unit_cards
        for day, count in days.items():
            if count:
                start, end = problem.package(key, day)
                _add(held[key], start, end, count * cards)
    for f in problem.fixed:
        if f.mode not in PACKAGE_MODES:
            _add(
                held[(f.offer, f.mode)],
                f.start,
                f.end,
                f.units * problem.offers[f.offer].unit_cards,
            )
    return held


def breakdown(problem: Problem, solution: Solution, plan: Plan) -> CostBreakdown:
    """The plan's breakdown: its stated lines (rentals and storage) added up by paid term
    and by the month a rental (or a workload's storage) is booked, what held cards cost
    beyond the workloads' package shares, and the reported terms."""
    currency = problem.scenario.spec.currency
    paid = dict.fromkeys(PAID, money(0, currency))
    by_month: dict[str, Decimal] = defaultdict(Decimal)
    for r in plan.rentals:
        term = (
            CostTerm.COMMITMENT
            if r.committed
            else CostTerm.PACKAGE
            if r.mode in PACKAGE_MODES
            else CostTerm(r.mode)
        )
        paid[term] += r.cost
        by_month[f"{r.start:%Y-%m}"] += r.cost
    for a in plan.assignments:
        if not a.storage:
            continue
        paid[CostTerm.STORAGE] += a.storage
        if isinstance(a, Assignment):  # booked in the month the train job starts
            by_month[f"{a.start:%Y-%m}"] += a.storage
        else:  # in the month the workload starts (inside the horizon)
            start = problem.scenario.workload(a.workload).start  # type: ignore[union-attr]
            first = max(problem.axis.hour_of_local(start), 0)
            by_month[f"{problem.axis.local(first):%Y-%m}"] += a.storage
    reported = {
        term: Quantity(
            amount=reported_amount(amount),
            cost=money(cost, currency) if term in PRICED else None,
        )
        for term, (amount, cost) in reported_terms(problem, solution).items()
    }
    return CostBreakdown(
        total=plan.total_cost,
        paid=paid,
        reported=reported,
        by_month=dict(sorted(by_month.items())),
        held_unused=plan.total_cost - sum(map(by_use, plan.assignments), Decimal(0)),
    )
