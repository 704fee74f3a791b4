"""`plan solve SCENARIO`: the cheapest checked plan, its rentals, workloads and costs."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from planner.cli.common import (
    JsonOption,
    MarginOption,
    ScenarioArgument,
    SpeedMarginOption,
    command_started,
    err,
    human,
    input_errors,
    load_planned,
    output_errors,
    parse_margin,
    parse_speed_margin,
    print_conflicts,
    with_margin,
    writable,
    write_json,
    write_text,
)
from planner.domain.costs import REPORTED_UNIT
from planner.domain.errors import Issue, LoadError
from planner.domain.money import money
from planner.domain.plan import Plan, WorkloadMargin, by_use
from planner.domain.scenario import Scenario
from planner.domain.timeaxis import TimeAxis
from planner.explain.conflict import plural
from planner.export.csvfiles import write_csv
from planner.margins import margins as workload_margins
from planner.parallel import Executor, Kind
from planner.report import annotate, headline_warnings
from planner.solve import PHASE, Result, SolveParams, default_time_limit, solve
from planner.views import (
    STORAGE,
    attribution,
    order_sheet,
    spend_by_workload,
    without_packages,
)


def solve_command(
    scenario: ScenarioArgument,
    time_limit: Annotated[
        float | None,
        typer.Option(
            min=0.1,
            help="Seconds for the whole command; with --deterministic, the search's "
            "deterministic time. The steps before the search (loading, the baselines, the "
            "bound: about 10 s for q3 on 2 cores) always run in full; a limit they pass "
            "ends after them, and the plan says how long they took. Default by size: 60 s "
            "up to 100 workloads, 120 s up to 300, 600 s beyond.",
            show_default=False,
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="CP-SAT workers (default: physical cores, at least 4).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Solver random seed.")] = 0,
    deterministic: Annotated[
        bool,
        typer.Option(
            help="Deterministic time budget: the same "
            "plan on every run with the same seed and workers."
        ),
    ] = False,
    lns: Annotated[
        float | None,
        typer.Option(
            "--lns",
            min=0.0,
            max=0.9,
            help="Share of the search time for a large-neighbourhood search after CP-SAT's "
            "own (default: 0.8 on a top-K restriction or a model of 50,000 variables or more; "
            "0 on a smaller one, which CP-SAT often proves). More finds cheaper plans sooner; "
            "less proves more.",
        ),
    ] = None,
    json_path: JsonOption = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Write a self-contained HTML report (charts inlined, works offline).",
            show_default=False,
        ),
    ] = None,
    csv_dir: Annotated[
        Path | None,
        typer.Option(
            "--csv",
            help="Write rentals, orders, assignments, capacity, breakdown and monthly CSVs here.",
            show_default=False,
        ),
    ] = None,
    memory_margin: MarginOption = None,
    speed_margin: SpeedMarginOption = None,
    jobs: Annotated[
        int,
        typer.Option(
            min=1,
            help="Neighbourhoods of the search (--lns) solved at once, each with --workers "
            "threads: in local processes, or with --executor ray as Ray actors.",
        ),
    ] = 1,
    executor: Annotated[
        Kind,
        typer.Option(
            help="Where --jobs neighbourhoods run: local processes, or Ray (pip install "
            "'gpuplan\\[ray]'), on this machine or a cluster (--address)."
        ),
    ] = Kind.local,
    address: Annotated[
        str | None,
        typer.Option(
            help="With --executor ray: the cluster to join (e.g. ray://head:10001 or auto).",
            show_default=False,
        ),
    ] = None,
    margins: Annotated[
        bool,
        typer.Option(
            "--margins",
            help="Also price what each workload adds: what the plan would save without it, "
            "as a range (a checked plan and a bound without it; one heuristic plan each).",
        ),
    ] = False,
) -> None:
    """Solve a scenario: the cheapest feasible plan, checked, with its costs and savings."""
    started = command_started()  # the time limit bounds the whole command
    with input_errors(json_path):
        writable(json=json_path, report=report)
        if csv_dir is not None and csv_dir.exists() and not csv_dir.is_dir():  # else: made
            message = f"{str(csv_dir)!r} is a file, not a folder for the CSV files"
            raise LoadError([Issue("--csv", None, None, (), message)])
        loaded = with_margin(
            load_planned(scenario), parse_margin(memory_margin), parse_speed_margin(speed_margin)
        )
        if time_limit is None:
            time_limit = default_time_limit(len(loaded.spec.workloads))
        if address is not None and executor is not Kind.ray:
            raise LoadError(
                [Issue("--address", None, None, (), "names a Ray cluster: give --executor ray")]
            )
        params = SolveParams(time_limit, workers, seed, deterministic, lns_share=lns)
        if jobs > 1 or executor is Kind.ray:  # each neighbourhood takes the solver's threads
            runner = Executor(executor, jobs, address, params.settings().workers)
            params = replace(params, executor=runner)
        limit = (
            f"{time_limit:g} units of deterministic time (not wall seconds)"
            if deterministic
            else f"{time_limit:g} s"
        )
        header = (
            f"solving {loaded.name} with {params.settings().workers} worker(s), limit {limit} …"
        )
        with Progress(loaded.spec.currency, header) as progress:
            result = solve(loaded, params, progress, started)
    if result.plan is None:
        print_no_plan(result)
        write_json(
            {
                "scenario": loaded.name,
                "status": result.status,
                "reasons": result.reasons,
                "conflicts": [c.as_dict() for c in result.conflicts],
            },
            json_path,
        )
        raise typer.Exit(exit_code(result))
    assert result.problem is not None and result.solution is not None
    plan = annotate(result.problem, result.solution, result.plan)  # after the check
    plan = plan.model_copy(update={"memory_margin": memory_margin, "speed_margin": speed_margin})
    if margins:
        plan = with_margins(loaded, plan)
    console = human(json_path)
    warnings = headline_warnings(loaded, plan)
    print_plan(console, plan, loaded.axis, warnings)
    write_json(plan.model_dump(), json_path)
    write_outputs(loaded.axis, plan, warnings, report, csv_dir)
    if result.inconsistency and console is not err:
        # on stderr too, where scripts look for what went wrong; the plan shown passed the
        # checker, so it is an answer (exit 0) all the same
        err.print(f"[bold red]{escape(result.inconsistency)}[/]")


def with_margins(scenario: Scenario, plan: Plan) -> Plan:
    """`plan` with each workload's margin (planner.margins), progress on stderr."""
    count = len(scenario.spec.workloads)
    seen = 0

    def told(name: str) -> None:
        nonlocal seen
        seen += 1
        err.print(f"  margin {seen}/{count}: the quarter without {name}", markup=False)

    found = [
        WorkloadMargin(
            workload=m.workload,
            at_least=money(m.at_least, plan.currency),
            at_most=money(m.at_most, plan.currency),
        )
        for m in workload_margins(scenario, plan, told)
    ]
    return plan.model_copy(update={"margins": found})


def exit_code(result: Result) -> int:
    """Without a plan: 2 proven infeasible, 3 none found (a model inconsistency with no
    checked plan to fall back on included: the model proves nothing then)."""
    return 2 if result.status == "infeasible" and not result.inconsistency else 3


def write_outputs(
    axis: TimeAxis, plan: Plan, warnings: list[str], report: Path | None, csv_dir: Path | None
) -> None:
    """The HTML report and the CSV files, where asked for; a path that cannot be written is
    one clear error (exit 1) after the plan was printed."""
    if report is not None:
        from planner.export.page import render  # plotly: only when a report is asked for

        write_text(report, render(axis, plan, warnings))
    if csv_dir is not None:
        with output_errors():
            written = write_csv(csv_dir, axis, plan)
        err.print(f"wrote {len(written)} CSV files to {csv_dir}")


def print_no_plan(result: Result) -> None:
    """Why there is no plan, on stderr: each conflict on a line, its relaxation below."""
    if not result.conflicts:
        for reason in result.reasons:
            err.print(f"[bold red]{result.status}:[/] ", end="")
            err.print(reason, markup=False)
        return
    count = len(result.conflicts)
    err.print(
        f"[bold red]infeasible:[/] no plan exists; {count} conflict{'s' if count > 1 else ''}:"
    )
    print_conflicts(result.conflicts)
    if all(c.kind != "joint" for c in result.conflicts):
        err.print(
            "  each stops every plan on its own; workloads are weighed together (a joint "
            "conflict) once none of these stands",
            markup=False,
        )


HEARTBEAT_SECONDS = 5.0  # a line at least this often while the solver searches


class Progress:
    """Search progress on stderr: a line per better plan, and a heartbeat every few seconds
    while nothing improves (elapsed, incumbent, bound, gap, what could still be saved)."""

    def __init__(
        self, currency: str, header: str, every: float = HEARTBEAT_SECONDS, label: str = ""
    ) -> None:
        self.currency, self.header, self.every = currency, header, every
        self.prefix = f"  {label:<8}" if label else "  "  # which solve, when several run
        self.incumbent: Fraction | None = None
        self.bound = Fraction(0)
        self.started = time.perf_counter()
        self.last = self.started  # when the last line was printed
        self.phase = "searching"  # set by the solve: building, baselines, searching
        self.lock = threading.Lock()
        self.done = threading.Event()

    def __enter__(self) -> Progress:
        err.print(self.header)
        threading.Thread(target=self._beat, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()

    def __call__(
        self, incumbent: Fraction | None, bound: Fraction, elapsed: float, what: str = ""
    ) -> None:
        with self.lock:
            self.bound = max(self.bound, bound)  # costs are never negative
            if what.startswith(PHASE):  # what the solve is doing, for the heartbeat
                self.phase = what[len(PHASE) :]
            elif what == "final" and incumbent is not None:
                # the plan shown and what is proven of it: the log ends where the result starts
                self.incumbent = incumbent
                self._line("final")
            elif incumbent is not None and (self.incumbent is None or incumbent < self.incumbent):
                # a search's first plans may be dearer than the checked plan it starts from
                self.incumbent = incumbent
                self._line(what)

    def _beat(self) -> None:
        while not self.done.wait(self.every / 5):
            with self.lock:
                if time.perf_counter() - self.last >= self.every:
                    self._line(self.phase)

    def _line(self, what: str) -> None:
        elapsed = time.perf_counter() - self.started
        self.last = time.perf_counter()
        if self.incumbent is None:
            err.print(f"{self.prefix}{elapsed:7.1f} s  {what}: no plan yet", highlight=False)
            return
        err.print(
            f"{self.prefix}{elapsed:7.1f} s  "
            + status_line(self.currency, self.incumbent, self.bound)
            + (f"  ({what})" if what else ""),
            highlight=False,
        )


def status_line(currency: str, incumbent: Fraction, bound: Fraction) -> str:
    """Incumbent, bound, gap, and the gap in plain words."""
    gap = float((incumbent - bound) / incumbent) if incumbent else 0.0
    saved = float(incumbent - bound)
    plain = f"at most {currency} {saved:,.2f} could still be saved" if saved > 0 else "proven"
    return (
        f"incumbent {currency} {float(incumbent):,.2f}  bound {float(bound):,.2f}  "
        f"gap {gap:.1%}: {plain}"
    )


def _saving(total: Any, baseline: Any, note: str | None) -> str:
    if baseline is None:
        return f"none: {note or 'infeasible'}"
    saved = baseline - total
    share = f" ({saved / baseline:.1%})" if baseline else ""
    return f"{baseline:,.2f}, saving {saved:,.2f}{share}"


def print_plan(
    console: Console, plan: Plan, axis: TimeAxis, warnings: list[str] | None = None
) -> None:
    c = plan.currency
    gap = f"{plan.gap:.2%}" if plan.gap is not None else "unknown"
    bound = f"{plan.bound:,.2f}" if plan.bound is not None else "unknown"
    console.print(
        f"[bold]{plan.scenario}[/]: {plan.status}, total {c} {plan.total_cost:,.2f} "
        f"(bound {bound}, gap {gap}, {plan.solve_seconds:.2f} s of search, "
        f"{plan.solver.variables if plan.solver else '?'} variables)"
    )
    if plan.inconsistency:
        console.print(
            "  [bold red]not proven, no bound:[/] the model contradicted the checker or a "
            "checked plan (below), so nothing it proved is shown"
        )
    elif plan.status != "optimal":
        if plan.bound is None:
            console.print("  not proven: the solver found no lower bound in the time limit")
        else:
            restricted = "top-K" in plan.baseline_notes.get("solver", "")
            console.print(
                f"  not proven: no plan costs less than {c} {plan.bound:,.2f}, so at most "
                f"{c} {plan.total_cost - plan.bound:,.2f} could still be saved; "
                + (
                    "the bound is the relaxation's, which the restricted search cannot close"
                    if restricted
                    else "a longer --time-limit may find it or prove this plan"
                )
            )
            if "bound" in plan.baseline_notes:
                console.print(f"  what the bound knows: {escape(plan.baseline_notes['bound'])}")
    unpackaged = without_packages(plan)
    if unpackaged is not None and not plan.inconsistency:
        console.print(f"  without packages: {escape(unpackaged)}")
    if plan.status == "optimal" and plan.solver and not plan.solver.ties_settled:
        console.print(
            "  [yellow]ties:[/] the cost is proven optimal, but the tie order (fewer cards, "
            "earlier finishes, offer ids) was not settled in the time left: "
            + (
                "the same command (--deterministic, same seed and workers) returns this plan "
                "again; another seed or worker count may return another of the same cost"
                if plan.solver.deterministic
                else "another run may return another plan of the same cost"
            )
        )
    for line in warnings or []:
        console.print(f"  [yellow]warning:[/] {escape(line)}")
    for line in plan.unverified:
        console.print(f"  [yellow]not verified:[/] {escape(line)}")
    notes = plan.baseline_notes
    if plan.inconsistency:
        console.print(f"  [bold red]{escape(plan.inconsistency)}[/]")
    elif "solver" in notes:
        console.print(f"  [yellow]warning:[/] {escape(notes['solver'])}")
    console.print(
        f"  naive plan      {_saving(plan.total_cost, plan.naive_cost, notes.get('naive'))}"
    )
    heuristic = _saving(plan.total_cost, plan.heuristic_cost, notes.get("heuristic"))
    console.print(f"  heuristic plan  {heuristic}")
    console.print(_orders(plan, axis))
    if plan.train:  # a quarter of services alone has no train jobs to list
        console.print(_workloads(plan))
    cheaper = [a for a in plan.train if a.cheaper_alone]
    if cheaper:
        console.print("[bold]Cheaper alone, not chosen[/]")
        for a in cheaper:
            alone = a.cheaper_alone
            assert alone is not None
            console.print(
                f"  • {a.workload}: {alone.config} costs {alone.cost:,.2f} on its own, "
                f"{alone.saving:,.2f} less than this job's cost in the plan; {alone.reason}",
                markup=False,
            )
    if plan.replica:
        console.print(_replicas(plan))
    console.print(_by_use(plan), markup=False)
    if plan.margins:
        console.print(_margins(plan))
    console.print(_breakdown(plan))
    console.print(_utilisation(plan))
    if plan.decisions:
        console.print("[bold]Package decisions[/]")
        for line in plan.decisions:
            console.print(f"  • {line}", markup=False)
    if plan.assumptions:
        console.print(
            "[bold]The plan rests on these assumed, low-confidence or measured figures[/]"
        )
        for line in plan.assumptions:
            console.print(f"  * {line}", markup=False)
    console.print("✓ checked: the independent checker recomputed every rule and cost line.")


def _time(value: Any, zoned: bool = False) -> str:
    """A plan time as people read it; with its UTC offset when the plan's times have more
    than one (a daylight-saving change: 02:30 may happen twice)."""
    if not zoned:
        return f"{value:%m-%d %H:%M}"
    offset = value.strftime("%z")
    return f"{value:%m-%d %H:%M} {offset[:3]}:{offset[3:]}"


def _zoned(plan: Plan) -> bool:
    """Whether the plan's times carry more than one UTC offset."""
    times = [t for r in plan.rentals for t in (r.start, r.end)]
    times += [t for a in plan.train for t in (a.start, a.end)]
    return len({t.utcoffset() for t in times}) > 1


def _orders(plan: Plan, axis: TimeAxis) -> Table:
    lines = order_sheet(axis, plan)
    table = Table(
        title=f"What to order ({plural(len(lines), 'line')} for "
        f"{plural(len(plan.rentals), 'rental')}; each rental in --json and --csv)",
        title_justify="left",
    )
    for column in ("offer", "card", "mode", "units held", "from", "to", "for", "rentals", "cost"):
        table.add_column(
            column,
            justify="right" if column in ("rentals", "cost") else "left",
            no_wrap=column == "for",  # a workload's name is never cut
        )
    zoned = _zoned(plan)
    for line in lines:
        table.add_row(
            line.offer,
            line.card,
            line.mode + (" (committed)" if line.committed else ""),
            line.pattern,
            _time(line.first, zoned),
            _time(line.last, zoned),
            line.workload or "(shared)",
            str(line.rentals) if line.mode != STORAGE else "-",
            f"{line.cost:,.2f}",
        )
    table.add_section()
    total = sum((line.cost for line in lines), Decimal(0))
    table.add_row("total", *[""] * 7, f"{total:,.2f}")
    return table


def _by_use(plan: Plan) -> str:
    """The workloads' costs (both tables above) added up to the plan's total, and how held
    cards were charged."""
    rows = spend_by_workload(plan)
    train = sum((r.cost for r in rows if r.kind == "train"), Decimal(0))
    replica = sum((r.cost for r in rows if r.kind in ("serve", "reserve")), Decimal(0))
    unused = rows[-1].cost
    total = train + replica + unused
    return (
        f"Costs: train {train:,.2f} + serving and reserved {replica:,.2f}"
        + (f" + held cards no workload uses {unused:,.2f}" if unused else "")
        + f" = total {total:,.2f}. Held cards are charged by cause: a pool that some "
        "workloads force is theirs in full (others ride on its spare cards for nothing), any "
        "other pool goes to its users by card-hours, idle hours and days past the horizon "
        "included; 'by use' prices only the card-hours each workload uses"
    )


def _workloads(plan: Plan) -> Table:
    table = Table(title="Workloads", title_justify="left")
    for column in (
        "workload",
        "cards",
        "offer",
        "mode",
        "start",
        "end",
        "hours",
        "cost",
        "share",
        "by use",
        "next best (+ over cost)",
    ):
        table.add_column(
            column,
            justify="right" if column in ("hours", "cost", "share", "by use") else "left",
            no_wrap=column == "workload",
            overflow="fold",  # a narrow column breaks a long name, never cuts it
        )
    total = plan.total_cost or 1
    zoned = _zoned(plan)
    charged = attribution(plan)
    for a in plan.train:
        nb = a.next_best
        spent = charged[a.workload]
        table.add_row(
            a.workload,
            f"{a.cards}× {a.card}",
            a.offer,
            a.mode + (" (held)" if a.held else ""),
            _time(a.start, zoned),
            _time(a.end, zoned),
            str(a.hours),
            f"{spent:,.2f}",
            f"{spent / total:.0%}",
            f"{by_use(a):,.2f}",
            (
                f"{nb.config} (a tie)"
                if not nb.extra_cost
                else f"{nb.config} (+{nb.extra_cost:,.2f})"
            )
            if nb
            else "-",
        )
    return table


def _replicas(plan: Plan) -> Table:
    table = Table(title="Serving and reserved cards", title_justify="left")
    right = ("peak replicas", "mean replicas", "cost", "share", "by use")
    for column in ("workload", "kind", *right[:2], "configs used", *right[2:]):
        table.add_column(
            column,
            justify="right" if column in right else "left",
            no_wrap=column == "workload",
            overflow="fold",
        )
    total = plan.total_cost or 1
    charged = attribution(plan)
    for a in plan.replica:
        spent = charged[a.workload]
        table.add_row(
            a.workload,
            a.kind,
            str(a.peak_replicas),
            f"{a.mean_replicas:.1f}",
            "; ".join(a.configs),
            f"{spent:,.2f}",
            f"{spent / total:.0%}",
            f"{by_use(a):,.2f}",
        )
    return table


def _margins(plan: Plan) -> Table:
    table = Table(
        title="What each workload adds: the plan without it would cost less by",
        title_justify="left",
    )
    for column in ("workload", "cost (share)", "at least", "at most"):
        table.add_column(
            column,
            justify="left" if column == "workload" else "right",
            no_wrap=column == "workload",
        )
    total = plan.total_cost or 1
    spent = attribution(plan)
    for m in plan.margins:
        share = spent.get(m.workload)
        table.add_row(
            m.workload,
            "-" if share is None else f"{share:,.2f} ({share / total:.0%})",
            f"{m.at_least:,.2f}",
            f"{m.at_most:,.2f}",
        )
    return table


def _breakdown(plan: Plan) -> Table:
    table = Table(title="Cost breakdown", title_justify="left")
    table.add_column("term")
    table.add_column("amount", justify="right")
    table.add_column(plan.currency, justify="right")
    b = plan.cost_breakdown
    if b is None:
        return table
    for term, value in b.paid.items():
        table.add_row(f"paid: {term.value.replace('_', ' ')}", "", f"{value:,.2f}")
    table.add_row("[bold]total[/]", "", f"[bold]{b.total:,.2f}[/]")
    for term, q in b.reported.items():
        amount = f"{q.amount:,.2f} {REPORTED_UNIT[term]}"
        cost = "" if q.cost is None else f"{q.cost:,.2f}"
        table.add_row(f"reported: {term.value.replace('_', ' ')}", amount, cost)
    for month, value in b.by_month.items():
        table.add_row(f"spend in {month}", "", f"{value:,.2f}")
    return table


def _utilisation(plan: Plan) -> Table:
    table = Table(title="Utilisation by card type (inside the horizon)", title_justify="left")
    for column in ("card", "held card-h", "used card-h", "used"):
        table.add_column(column, justify="left" if column == "card" else "right")
    for card, u in plan.utilisation.items():
        table.add_row(
            card,
            f"{u.held_card_hours:,}",
            f"{u.used_card_hours:,}",
            f"{u.utilisation:.0%}",
        )
    return table
