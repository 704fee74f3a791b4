"""The independent checker: from a Scenario and a Plan alone, every broken rule of docs/rules.md
"Cost semantics" as an amount, and every money line recomputed.

It shares no arithmetic with the model: it reads the schemas (`planner.domain`), asks the
estimates (`planner.estimate`) what fits and how fast, and replays the plan hour by hour on
the one time axis: runs walked from their start, units held per offer and mode, cards used
per pool, money per rental. So it accepts any legal plan, including card counts, starts and
configs the model never enumerates, and a bug in the model's closed forms cannot pass it.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from planner.check.ledger import Ledger
from planner.check.machines import check_machines
from planner.check.rentals import Held, book, card_hour_price, commitments, pools, read_rentals
from planner.check.rentals import stock as stock_rule
from planner.check.replicas import check_replicas
from planner.check.result import CheckResult, Violation, cost_line, rounded
from planner.check.train import Placed, check_train
from planner.domain.costs import PAID, PRICED, REPORTED, reported_amount
from planner.domain.plan import CostBreakdown, Plan, Quantity
from planner.domain.scenario import Scenario

__all__ = ["CheckResult", "Violation", "check_plan"]


def check_plan(scenario: Scenario, plan: Plan) -> CheckResult:
    """Every violation of `plan` against `scenario`, its exact total and its breakdown."""
    result = CheckResult()
    if plan.scenario != scenario.name:
        result.add(
            "scenario",
            plan.scenario,
            1,
            "",
            f"the plan is for scenario {plan.scenario!r}, not {scenario.name!r}",
        )
        return result
    if plan.currency != scenario.spec.currency:
        result.add("scenario", plan.currency, 1, "", f"money is in {scenario.spec.currency}")
        return result
    ledger = Ledger()
    rentals = read_rentals(scenario, plan.rentals, result)
    commitments(scenario, rentals, result)
    book(scenario, rentals, ledger)
    held = {h.rental.id: h for h in rentals}
    used: dict[str, str] = {}  # rental id → the workload whose run or replica it carries
    placed = check_train(scenario, plan, held, used, ledger, result)
    check_replicas(scenario, plan, held, used, ledger, result)
    for h in rentals:
        r = h.rental
        if not (r.committed or h.package or r.id in used):
            result.add("rental", r.id, 1, "", f"{r.mode} rental that no workload run uses")
    stock_rule(scenario, ledger, result)
    pools(scenario, ledger, result)
    if not any(v.rule == "package" for v in result.violations):  # cards first, then machines
        check_machines(scenario, plan, rentals, placed, result)
    _train_lines(scenario, placed, held, result)
    result.money = {t: ledger.money.get(t, Fraction(0)) for t in PAID}
    result.amounts = {t: ledger.amount.get(t, Fraction(0)) for t in REPORTED}
    result.total = sum(result.money.values(), Fraction(0))
    result.breakdown = _breakdown(scenario, ledger, result)
    currency = scenario.spec.currency
    cost_line(result, "total", plan.total_cost, result.total, currency)
    for h in rentals:
        cost_line(result, h.rental.id, h.rental.cost, h.money, currency)
        if h.rental.billed_hours != h.billed:
            result.add(
                "cost",
                h.rental.id,
                float(h.rental.billed_hours - Decimal(h.billed.numerator) / h.billed.denominator),
                "h",
                f"billed hours {h.rental.billed_hours} should be {h.billed}",
            )
    _compare_breakdown(plan.cost_breakdown, result.breakdown, result)
    return result


def _train_lines(
    scenario: Scenario, placed: dict[str, Placed], held: dict[str, Held], result: CheckResult
) -> None:
    """Each train assignment's own money (the rentals that carry its runs, and storage) and
    its package share."""
    currency = scenario.spec.currency
    for name, p in placed.items():
        a = p.assignment
        own = sum((held[i].money for i in p.rentals), Fraction(0))
        cost_line(result, name, a.cost, own + p.storage, currency)
        if a.held:
            offer = scenario.offers[a.offer]
            hours = sum(y - x for x, y in p.runs)
            share = hours * a.cards * card_hour_price(offer, a.mode)
            cost_line(result, f"{name} package share", a.package_share, share, currency)


def _breakdown(scenario: Scenario, ledger: Ledger, result: CheckResult) -> CostBreakdown:
    """The recomputed terms rounded as a plan states them."""
    currency = scenario.spec.currency
    reported = {}
    for term in REPORTED:
        priced = term in PRICED
        reported[term] = Quantity(
            amount=reported_amount(result.amounts[term]),
            cost=rounded(ledger.money.get(term, Fraction(0)), currency) if priced else None,
        )
    return CostBreakdown(
        total=rounded(result.total, currency),
        paid={t: rounded(v, currency) for t, v in result.money.items()},
        reported=reported,
        by_month={m: rounded(v, currency) for m, v in sorted(ledger.by_month.items())},
    )


def _compare_breakdown(
    stated: CostBreakdown | None, recomputed: CostBreakdown, result: CheckResult
) -> None:
    """Every breakdown line must be present and equal the recomputed one."""
    if stated is None:
        result.add("cost", "cost_breakdown", 1, "", "the plan has no cost breakdown")
        return
    lines: list[tuple[str, object, object]] = [("total", stated.total, recomputed.total)]
    lines += [(f"paid.{t}", stated.paid.get(t), v) for t, v in recomputed.paid.items()]
    lines += [(f"reported.{t}", stated.reported.get(t), v) for t, v in recomputed.reported.items()]
    months = sorted(set(stated.by_month) | set(recomputed.by_month))
    lines += [(f"by_month.{m}", stated.by_month.get(m), recomputed.by_month.get(m)) for m in months]
    for name, said, value in lines:
        if said != value:
            result.add(
                "cost", f"cost_breakdown.{name}", 1, "", f"states {said}, recomputed {value}"
            )
