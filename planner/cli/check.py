"""`plan check SCENARIO PLAN.json`: re-verify a saved plan; exit 1 listing violations."""

from __future__ import annotations

from decimal import Decimal

import typer
from rich.markup import escape

from planner.check import check_plan
from planner.check.result import CheckResult
from planner.cli.common import (
    JsonOption,
    MarginOption,
    PlanArgument,
    ScenarioArgument,
    SpeedMarginOption,
    err,
    human,
    input_errors,
    load_planned,
    read_plan,
    with_plan_margins,
    write_json,
)
from planner.domain.plan import Plan
from planner.views import attribution


def check_command(
    scenario: ScenarioArgument,
    plan_file: PlanArgument,
    json_path: JsonOption = None,
    memory_margin: MarginOption = None,
    speed_margin: SpeedMarginOption = None,
) -> None:
    """Recompute every rule and cost line of a saved plan against its scenario, with the
    margins the plan was made with (`plan solve` records them in the plan)."""
    with input_errors(json_path):
        plan = read_plan(plan_file)
        loaded = with_plan_margins(load_planned(scenario), plan, memory_margin, speed_margin)
    result = check_plan(loaded, plan)  # needs no solvable scenario: it only reads the plan
    if result.ok:
        _check_attribution(plan, result)
    console = human(json_path)
    payload = {
        "scenario": loaded.name,
        "currency": plan.currency,
        "ok": result.ok,
        "violations": [vars(v) for v in result.violations],  # each with its amount's unit
        "undecided": result.undecided,
    }
    if result.ok:
        console.print(
            f"✓ {plan_file} is a valid plan for {loaded.name}: "
            f"{plan.currency} {plan.total_cost:,.2f}"
        )
        for line in result.undecided:
            console.print(f"  [yellow]not verified:[/] {escape(line)}")
        write_json(payload, json_path)
        return
    err.print(f"[bold red]{len(result.violations)} violation(s)[/] in {plan_file}:")
    for v in result.violations:
        err.print(f"  • {v}", markup=False)
    write_json(payload, json_path)
    raise typer.Exit(1)


def _check_attribution(plan: Plan, result: CheckResult) -> None:
    """The plan's `attribution` is each workload's cost as every view states it, worked out
    from its lines (checked above) by the one attribution rule (planner.views): a figure
    that differs is a `[cost]` violation, as a stated line would be."""
    if not plan.attribution:
        return
    expected = attribution(plan)
    for name in sorted(set(plan.attribution) | set(expected)):
        stated, worked = plan.attribution.get(name), expected.get(name)
        if stated != worked:
            result.add(
                "cost",
                f"attribution {name}",
                float((stated or 0) - (worked or 0)),
                plan.currency,
                _attribution_said(name, stated, worked),
            )


def _attribution_said(name: str, stated: Decimal | None, worked: Decimal | None) -> str:
    """What is wrong with a workload's attribution: a figure, a name too many or one left out."""
    if worked is None:
        return f"attribution names {name}, a workload the plan has no lines for"
    if stated is None:
        return f"attribution leaves out {name}, whose lines give {worked}"
    return f"attribution of {name} states {stated}, its lines give {worked}"
