"""`plan simulate SCENARIO PLAN.json`: the spread of a plan's cost and finish times on spot."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.progress import Progress
from rich.table import Table

from planner.check import check_plan
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
from planner.simulate import simulate, summary


def simulate_command(
    scenario: ScenarioArgument,
    plan_file: PlanArgument,
    runs: Annotated[int, typer.Option(min=1, max=1_000_000, help="Simulated quarters.")] = 1000,
    seed: Annotated[int, typer.Option(help="Random seed (the same seed, the same draws).")] = 0,
    json_path: JsonOption = None,
) -> None:
    """Replay the plan's spot work with random preemptions: P50/P95 cost, deadline risk."""
    with input_errors(json_path):
        plan = read_plan(plan_file)
        loaded = with_plan_margins(load_planned(scenario), plan)  # replayed as it was made
    checked = check_plan(loaded, plan)
    if not checked.ok:
        err.print(
            f"[bold red]{plan_file} is not a valid plan for {loaded.name}[/] "
            f"({len(checked.violations)} violation(s); see plan check): nothing to simulate"
        )
        raise typer.Exit(1)
    with Progress(console=err, transient=True, disable=json_path == "-") as progress:
        task = progress.add_task(f"simulating {runs} runs", total=None)
        result = simulate(
            loaded,
            plan,
            runs,
            seed,
            lambda done, of: progress.update(task, completed=done, total=of),
        )
    data = summary(result, plan.currency)
    console = human(json_path)
    _print(console, data)
    write_json({"scenario": loaded.name, **data}, json_path)


def _print(console: Any, data: dict[str, Any]) -> None:
    c, cost = data["currency"], data["cost"]
    console.print(
        f"{data['runs']} runs (seed {data['seed']}): planned {c} {data['planned_cost']:,.2f}; "
        f"P50 {cost['p50']:,.2f}, P95 {cost['p95']:,.2f}, mean {cost['mean']:,.2f}, "
        f"worst {cost['max']:,.2f}"
    )
    if not data["spot_workloads"]:
        console.print("No workload runs on spot: the plan's cost and times have no spread.")
        return
    table = Table(title="Spot workloads", title_justify="left")
    for column in (
        "workload",
        "offer",
        "λ/h",
        "planned h",
        "h P50",
        "h P95",
        "finish P95",
        "deadline",
        "P(miss)",
        f"extra {c} P95",
    ):
        table.add_column(
            column,
            justify="left" if column in ("workload", "offer") else "right",
            no_wrap=column == "workload",
        )
    for r in data["spot_workloads"]:
        table.add_row(
            r["workload"],
            r["offer"],
            f"{r['preemptions_per_hour']:g}",
            f"{r['planned_compute_hours']:,.1f}",
            f"{r['compute_hours']['p50']:,.1f}",
            f"{r['compute_hours']['p95']:,.1f}",
            r["finish_p95"][:16].replace("T", " "),
            r["deadline"][:16].replace("T", " "),
            f"{r['miss_probability']:.1%}",
            f"{r['extra_cost_p95']:,.2f}",
        )
    console.print(table)
    for r in data["spot_workloads"]:
        for later in r["successors"]:
            if later["delay_probability"] > 0:
                start = later["planned_start"][:16].replace("T", " ")
                console.print(
                    f"{r['workload']} finishes after {later['workload']}'s planned start "
                    f"({start}) in {later['delay_probability']:.1%} of runs: that start "
                    "would slip (not replayed here)",
                    markup=False,
                )
    console.print(
        "Preemptions: a Poisson process at each offer's rate over the useful hours; each loses "
        "the work since the last checkpoint (uniform) and the restart time, the model behind "
        "the plan's expected rework. Extra hours extend the last rental; stock is not checked.",
        markup=False,
    )
