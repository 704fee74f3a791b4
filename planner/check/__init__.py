"""The independent checker: from a Scenario and a Plan alone, every broken rule of docs/rules.md
"Cost semantics" as an amount, and every money line recomputed.

It shares no arithmetic with the model: it reads the schemas (`planner.domain`), asks the
estimates (`planner.estimate`) what fits and how fast, and replays the plan hour by hour on
the one time axis: runs walked from their start, units held per offer and mode, cards used
per pool, money per rental. So it accepts any legal plan, including card counts, starts and
configs the model never enumerates, and a bug in the model's closed forms cannot pass it.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from fractions import Fraction

from planner.check.ledger import Ledger, Line, Spent
from planner.check.machines import check_machines
from planner.check.rentals import Held, book, card_hour_price, commitments, pools, read_rentals
from planner.check.rentals import stock as stock_rule
from planner.check.replicas import check_replicas
from planner.check.result import CheckResult, Violation, cost_line, rounded, stated_line
from planner.check.train import Placed, check_train
from planner.domain.costs import PAID, PRICED, REPORTED, REPORTED_UNIT, reported_amount
from planner.domain.money import apportion, from_minor
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
    _train_spent(scenario, placed, ledger)
    result.money = {t: ledger.money.get(t, Fraction(0)) for t in PAID}
    result.amounts = {t: ledger.amount.get(t, Fraction(0)) for t in REPORTED}
    result.total = sum(result.money.values(), Fraction(0))
    currency = scenario.spec.currency
    cost_line(result, "total", plan.total_cost, result.total, currency)
    figures = _figures(plan, rentals, ledger, currency)
    unused = _stated_lines(plan, rentals, ledger, figures, result, currency)
    result.breakdown = _breakdown(scenario, ledger, figures, unused, result)
    for h in rentals:
        if h.rental.billed_hours != h.billed:
            result.add(
                "cost",
                h.rental.id,
                float(h.rental.billed_hours - Decimal(h.billed.numerator) / h.billed.denominator),
                "h",
                f"billed hours {h.rental.billed_hours} should be {h.billed}",
            )
    _compare_breakdown(plan.cost_breakdown, result.breakdown, result, scenario.spec.currency)
    return result


def _train_spent(scenario: Scenario, placed: dict[str, Placed], ledger: Ledger) -> None:
    """Each train assignment's own rentals (those that carry its runs) and, on held cards,
    its package share."""
    for name, p in placed.items():
        a = p.assignment
        share = None
        if a.held:
            hours = sum(y - x for x, y in p.runs)
            share = hours * a.cards * card_hour_price(scenario.offers[a.offer], a.mode)
        ledger.spent[name] = Spent(a, p.rentals, share)


def _figures(plan: Plan, rentals: list[Held], ledger: Ledger, currency: str) -> dict[Line, int]:
    """The money rule (docs/rules.md): the plan's lines, rentals in its order and then each
    workload's storage in the order of its assignments, apportioned in minor units."""
    keys: list[Line] = [("rental", h.rental.id) for h in rentals]
    keys += dict.fromkeys(
        ("storage", a.workload) for a in plan.assignments if ("storage", a.workload) in ledger.lines
    )
    return dict(zip(keys, apportion([ledger.lines[k][2] for k in keys], currency), strict=True))


def _stated_lines(
    plan: Plan,
    rentals: list[Held],
    ledger: Ledger,
    figures: dict[Line, int],
    result: CheckResult,
    currency: str,
) -> int:
    """Each rental's cost, each workload's cost, storage and package share as the money rule
    states them (held cards' lines split in proportion to the exact shares and the rest);
    returns the minor units of held cards no package share covers."""
    for h in rentals:
        figure = from_minor(figures[("rental", h.rental.id)], currency)
        stated_line(result, h.rental.id, h.rental.cost, figure, currency)
    for name, spent in ledger.spent.items():
        a = spent.assignment
        disk = figures.get(("storage", name), 0)
        own = sum(figures[("rental", i)] for i in spent.rentals) + disk
        stated_line(result, name, a.cost, from_minor(own, currency), currency)
        stated_line(result, f"{name} storage", a.storage, from_minor(disk, currency), currency)
    order = {a.workload: i for i, a in reversed(list(enumerate(plan.assignments)))}
    users = sorted(
        (n for n, s in ledger.spent.items() if s.share is not None), key=order.__getitem__
    )
    held = [h for h in rentals if h.package or h.rental.committed]
    shares = [ledger.spent[n].share or Fraction(0) for n in users]
    money = sum(figures[("rental", h.rental.id)] for h in held)
    parts = apportion([*shares, ledger.unused], currency, money)
    for name, part in zip(users, parts[:-1], strict=True):
        stated = ledger.spent[name].assignment.package_share
        stated_line(result, f"{name} package share", stated, from_minor(part, currency), currency)
    for name, spent in ledger.spent.items():
        if spent.share is None and spent.assignment.package_share is not None:
            share = spent.assignment.package_share
            stated_line(result, f"{name} package share", share, None, currency)
    return parts[-1]


def _breakdown(
    scenario: Scenario, ledger: Ledger, figures: dict[Line, int], unused: int, result: CheckResult
) -> CostBreakdown:
    """The recomputed terms as a plan states them: paid terms and months add up the lines'
    figures, reported terms are rounded once."""
    currency = scenario.spec.currency
    paid = dict.fromkeys(PAID, 0)
    months: dict[str, int] = defaultdict(int)
    for key, figure in figures.items():
        term, month, _ = ledger.lines[key]
        paid[term] += figure
        if figure or key[0] == "rental":  # storage that states 0.00 books no month
            months[month] += figure
    reported = {}
    for term in REPORTED:
        priced = term in PRICED
        reported[term] = Quantity(
            amount=reported_amount(result.amounts[term]),
            cost=rounded(ledger.money.get(term, Fraction(0)), currency) if priced else None,
        )
    return CostBreakdown(
        total=from_minor(sum(figures.values()), currency),
        paid={t: from_minor(v, currency) for t, v in paid.items()},
        reported=reported,
        by_month={m: from_minor(v, currency) for m, v in sorted(months.items())},
        held_unused=from_minor(unused, currency),
    )


def _compare_breakdown(
    stated: CostBreakdown | None, recomputed: CostBreakdown, result: CheckResult, currency: str
) -> None:
    """Every breakdown line must be present and equal the recomputed one; each one that
    differs is a violation of the difference (a missing line counts as zero)."""
    if stated is None:
        result.add("cost", "cost_breakdown", 1, "", "the plan has no cost breakdown")
        return
    lines: list[tuple[str, object, object]] = [("total", stated.total, recomputed.total)]
    lines.append(("held_unused", stated.held_unused, recomputed.held_unused))
    lines += [(f"paid.{t}", stated.paid.get(t), v) for t, v in recomputed.paid.items()]
    months = sorted(set(stated.by_month) | set(recomputed.by_month))
    lines += [(f"by_month.{m}", stated.by_month.get(m), recomputed.by_month.get(m)) for m in months]
    for name, said, value in lines:
        if said != value:
            why = f"states {_figure(said)}, recomputed {_figure(value)}"
            off = _decimal(said) - _decimal(value)
            _off(result, f"cost_breakdown.{name}", off, currency, why)
    for t, value in recomputed.reported.items():
        said = stated.reported.get(t)
        if said != value:
            why = f"states {_figure(said)}, recomputed {_figure(value)}"
            subject = f"cost_breakdown.reported.{t}"
            hours = (said.amount if said else Decimal(0)) - value.amount
            if hours:  # the term's own hours differ
                result.add("cost", subject, float(hours), REPORTED_UNIT[t], why)
            else:  # the same hours, another cost (or a cost where none is due)
                cost = _decimal(said.cost if said else None) - _decimal(value.cost)
                _off(result, subject, cost, currency, why)


def _off(result: CheckResult, subject: str, off: Decimal, currency: str, why: str) -> None:
    """A breakdown line that differs by `off` in money; one that differs only by being there
    or not (a line of 0.00 against none) is a rule broken, counted 1 with no unit."""
    if off:
        result.add("cost", subject, float(off), currency, why)
    else:
        result.add("cost", subject, 1, "", why)


def _decimal(value: object) -> Decimal:
    """A stated or recomputed money figure; no line reads as zero."""
    return value if isinstance(value, Decimal) else Decimal(0)


def _figure(value: object) -> str:
    """A breakdown figure as a person reads it: money or an amount with its cost, or
    "no line" where one side has none."""
    if value is None:
        return "no line"
    if isinstance(value, Quantity):
        cost = "" if value.cost is None else f" costing {value.cost:,.2f}"
        return f"{value.amount:,.2f}{cost}"
    return f"{value:,.2f}" if isinstance(value, Decimal) else str(value)
