"""`plan reprice SCENARIO PLAN.json [--patch P] [flags]`: what an existing plan costs under a
(patched) scenario, where it no longer works, and what re-planning would save."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from planner.check import check_plan
from planner.check.result import no_offer
from planner.cli.common import (
    JsonOption,
    PlanArgument,
    ScenarioArgument,
    err,
    human,
    input_errors,
    load_planned,
    read_plan,
    with_plan_margins,
    write_json,
)
from planner.cli.variant import (
    RANGE,
    Change,
    CommitOption,
    DropOption,
    PatchOption,
    PriceOption,
    ScaleOption,
    SetOption,
    ShiftOption,
    StockOption,
    params_for,
    solve_side,
)
from planner.domain.errors import Issue, LoadError
from planner.domain.money import money
from planner.whatif.compare import Side
from planner.whatif.kept import kept_plan
from planner.whatif.report import summary


def reprice_command(
    scenario: ScenarioArgument,
    plan_file: PlanArgument,
    patch: PatchOption = None,
    price: PriceOption = None,
    commit: CommitOption = None,
    stock: StockOption = None,
    shift: ShiftOption = None,
    drop: DropOption = None,
    scale_demand: ScaleOption = None,
    set_: SetOption = None,
    replan: Annotated[
        bool, typer.Option(help="Also solve the variant, to say what re-planning saves.")
    ] = True,
    time_limit: Annotated[
        float | None,
        typer.Option(min=0.1, help="Seconds for the re-planning solve.", show_default=False),
    ] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Solver threads.")] = None,
    seed: Annotated[int, typer.Option(help="Solver random seed.")] = 0,
    deterministic: Annotated[bool, typer.Option(help="Deterministic time budget.")] = False,
    json_path: JsonOption = None,
) -> None:
    """Price a saved plan under the scenario with a change; say where it breaks."""
    with input_errors(json_path):
        for text in commit or []:
            if RANGE.match(text):
                message = (
                    "a range A..B sweeps the commitment level, which `plan whatif` does; "
                    "reprice prices one plan: give one level, N:MODE"
                )
                raise LoadError([Issue(f"--commit {text}", None, None, (), message)])
        base = load_planned(scenario)
        change = Change.of(
            patch,
            price=price,
            commit=commit,
            stock=stock,
            shift=shift,
            drop=drop,
            scale_demand=scale_demand,
            set=set_,
        )
        variant, described = change.applied(scenario, base)
        plan = read_plan(plan_file)
        if plan.scenario != variant.name or plan.currency != variant.spec.currency:
            raise LoadError(
                [
                    Issue(
                        str(plan_file),
                        None,
                        None,
                        ("scenario",),
                        f"the plan is for scenario {plan.scenario!r} in {plan.currency}, not "
                        f"{variant.name!r} in {variant.spec.currency}",
                    )
                ]
            )
        # checked, and re-planned, with the margins the plan was made with
        variant = with_plan_margins(variant, plan)
    # the plan kept: without the work of a workload the change drops (its packages stay)
    kept = kept_plan(base, variant, plan)
    check = check_plan(variant, kept.plan)
    currency = variant.spec.currency
    # a line on an offer the change removed says so (the checker: "there is no offer")
    removed = {no_offer(o): o for o in base.offers.keys() - variant.offers.keys()}
    because = f"is removed by the change ({' '.join(described)})"
    breaks = [
        replace(v, message=f"offer {removed[v.message]} {because}") if v.message in removed else v
        for v in check.violations
        if v.rule != "cost"
    ]
    report: dict[str, Any] = {
        "scenario": variant.name,
        "currency": currency,
        "change": described,
        "stated_total": plan.total_cost,
        "repriced_total": money(check.total, currency),
        "feasible": not breaks,
        "violations": [vars(v) for v in breaks],
        # what left the plan with the workloads the change drops
        "dropped": {"workloads": kept.workloads, "rentals": kept.rentals},
        # a commitment the change adds: the plan's packages now committed, and the committed
        # rentals added idle where it holds none to mark (by id)
        "committed": {"marked": kept.marked, "added": kept.added},
    }
    if replan:
        side = solve_side(
            "replan", variant, params_for(variant, time_limit, workers, seed, deterministic)
        )
        report["replan"] = summary(side, currency)
        if side.total is not None and not breaks:
            report["saving"] = saving(check.total, side, currency)
    print_reprice(human(json_path), report)
    write_json(report, json_path)
    if breaks:  # a failed check, as `plan check` exits
        raise typer.Exit(1)
    if replan and side.inconsistency:  # the replan shown is a checked one: an answer all the same
        err.print(f"[bold red]replan: {escape(side.inconsistency)}[/]")


def saving(kept: Fraction, side: Side, currency: str) -> dict[str, Any]:
    """What re-planning saves against keeping the plan (`kept`: its repriced total): found,
    and at most (down to the replan's bound where it is not proven). Differences of the
    figures shown, each rounded once to the currency's minor unit, so that they reconcile
    as printed, as `plan solve`'s do."""
    assert side.total is not None
    lowest = side.total if side.optimal else side.bound or Fraction(0)
    shown = money(kept, currency)
    return {
        "found": shown - money(side.total, currency),
        "at_most": shown - money(lowest, currency),
        "exact": side.optimal,
    }


def print_reprice(console: Console, report: dict[str, Any]) -> None:
    c = report["currency"]
    change = escape(" ".join(report["change"]) or "no change")
    stated, repriced = report["stated_total"], report["repriced_total"]
    if report["feasible"]:
        said = f"the plan costs {c} {repriced:,.2f} (it states {stated:,.2f}; "
        said += f"{repriced - stated:+,.2f})"
    else:  # its lines priced where they still can be: no price of a plan that breaks
        said = f"the plan breaks (it states {c} {stated:,.2f}; its lines that can still "
        said += f"be priced come to {repriced:,.2f})"
    console.print(f"[bold]{report['scenario']}[/] ({change}): {said}")
    dropped = report["dropped"]
    if dropped["workloads"]:
        n = len(dropped["rentals"])
        left = (
            f"the {n} hourly or spot rental(s) that carried it leave" if n else "no rental leaves"
        )
        console.print(
            f"  kept without the work the change drops ({', '.join(dropped['workloads'])}): "
            f"{left}; packages and committed rentals stay, paid in full",
            markup=False,
        )
    committed = report["committed"]
    if committed["marked"] or committed["added"]:
        held: list[str] = []
        if committed["marked"]:
            held.append(f"its package(s) {', '.join(committed['marked'])} now committed")
        if committed["added"]:
            held.append(
                f"committed rental(s) {', '.join(committed['added'])} added, idle (the plan "
                "does not use them; paid in full, and counted against stock)"
            )
        console.print(
            f"  kept with the commitment the change adds: {'; '.join(held)}", markup=False
        )
    if report["feasible"]:
        console.print("  ✓ it still works: every rule holds under the changed scenario")
    else:
        console.print(
            f"  [bold red]it no longer works[/]: {len(report['violations'])} rule(s) broken"
        )
        for v in report["violations"]:
            console.print(f"    • [{v['rule']}] {v['subject']}: {v['message']}", markup=False)
    replanned = report.get("replan")
    if replanned is None:
        return
    if replanned["total_cost"] is None:
        console.print(f"  re-planning: {replanned['status']} ({'; '.join(replanned['reasons'])})")
        return
    console.print(f"  re-planned: {c} {replanned['total_cost']:,.2f} ({replanned['status']})")
    saving = report.get("saving")
    if saving is not None:
        how = "exactly" if saving["exact"] else f"at most {saving['at_most']:,.2f}; found"
        console.print(
            f"  re-planning saves {how} {c} {saving['found']:,.2f} against keeping the plan"
        )
