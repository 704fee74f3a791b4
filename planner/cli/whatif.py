"""`plan whatif SCENARIO [--patch P] [flags]`: solve the scenario and its variant with the
same settings and print what the change costs or saves, how exactly, and what moved; with
`--commit OFFER=A..B:MODE`, the total and saving at each commitment level."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from planner.cli.common import (
    JsonOption,
    ScenarioArgument,
    err,
    human,
    input_errors,
    load_planned,
    writable,
    write_json,
    write_text,
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
    crossed,
    params_for,
    solve_sides,
)
from planner.domain.errors import Issue, LoadError
from planner.domain.money import MINOR_DIGITS
from planner.domain.scenario import Scenario
from planner.parallel import Executor, Kind
from planner.whatif.report import compare, sweep_report

MAX_LEVELS = 50  # each level is a solve


def whatif_command(
    scenario: ScenarioArgument,
    patch: PatchOption = None,
    price: PriceOption = None,
    commit: CommitOption = None,
    stock: StockOption = None,
    shift: ShiftOption = None,
    drop: DropOption = None,
    scale_demand: ScaleOption = None,
    set_: SetOption = None,
    time_limit: Annotated[
        float | None,
        typer.Option(
            min=0.1, help="Seconds per solve (default by size, as plan solve).", show_default=False
        ),
    ] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Solver threads per solve.")] = None,
    seed: Annotated[int, typer.Option(help="Solver random seed.")] = 0,
    deterministic: Annotated[
        bool, typer.Option(help="Deterministic time budget: the same answer on every run.")
    ] = False,
    jobs: Annotated[
        int, typer.Option(min=1, help="Scenarios solved at once, each in its own process.")
    ] = 2,
    executor: Annotated[
        Kind,
        typer.Option(
            help="Where the solves run: local processes, or Ray tasks (pip install "
            "'gpuplan\\[ray]'); a sweep of many levels can spread over a cluster."
        ),
    ] = Kind.local,
    address: Annotated[
        str | None,
        typer.Option(
            help="With --executor ray: the cluster to join (e.g. ray://head:10001 or auto); "
            "default: a Ray instance on this machine with --jobs CPUs. Scenario, patch and "
            "catalog files must be at the same paths on every node.",
            show_default=False,
        ),
    ] = None,
    json_path: JsonOption = None,
    report_path: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Write an offline HTML page: the delta, then base and variant side by side.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Solve a scenario and a variant of it; print the difference, exact or as an interval."""
    with input_errors(json_path):
        writable(json=json_path, report=report_path)
        base = load_planned(scenario)
        ranges = [m for c in commit or [] if (m := RANGE.match(c))]
        flags = dict(price=price, stock=stock, shift=shift, drop=drop, set=set_)
        change = Change.of(
            patch,
            commit=[c for c in commit or [] if not RANGE.match(c)],
            scale_demand=scale_demand,
            **flags,
        )
        if len(ranges) > 1:
            raise _usage("sweep one commitment at a time: only one --commit may give A..B")
        if ranges and report_path is not None:
            raise _usage("--report shows one variant against its base, not a commitment sweep")
        if change.empty and not ranges:
            raise _usage("give a change: --patch FILE or a flag such as --price or --commit")
        variant, described = change.applied(scenario, base)
        params = params_for(base, time_limit, workers, seed, deterministic)
        if address is not None and executor is not Kind.ray:
            raise _usage("--address names a Ray cluster: give --executor ray too")
        runner = Executor(executor, jobs, address, params.settings().workers)
        runner.check()  # Ray not installed: bad input (exit 1), said before any solve
        if ranges:
            levels = _levels(ranges[0], scenario, base, change)
            recipes = [("none", scenario, change)]
            recipes += [(f"{n} units", scenario, c) for n, c, _ in levels]
        else:
            recipes = [("base", scenario, Change()), ("variant", scenario, change)]
            # a commitment's break-even is priced against the change without it: where the
            # change does more than commit, that is a third scenario, solved beside them
            uncommitted = change.uncommitted(base)
            without = uncommitted.apply(scenario, base)
            if (without.spec, without.catalogs) != (base.spec, base.catalogs):
                recipes.append(("without", scenario, uncommitted))
    with input_errors(json_path):  # where they run: no Ray cluster at --address is bad input
        solved = solve_sides(recipes, params, runner)
    if ranges:
        # the sweep's base is the scenario with every other change: levels add the commitment
        sides = solved
        report = sweep_report(variant, [s for _, _, s in levels], sides)
    else:
        pair = crossed(base, variant, solved[:2])
        reference = (without, solved[2]) if len(solved) > 2 else None
        report = compare(base, variant, pair[0], pair[1], described, reference)
        sides = pair
        if reference is not None and reference[1].inconsistency:
            err.print(f"[bold red]without: {escape(reference[1].inconsistency)}[/]")
    console = human(json_path)
    (print_sweep if ranges else print_report)(console, report)
    write_json(report, json_path)
    missing = [s for s in sides if s.plan is None]
    if report_path is not None and missing:
        err.print(f"no report written to {report_path}: a side has no plan")
    elif report_path is not None:
        _write_page(report_path, report, [(base, sides[0]), (variant, sides[1])])
    for side in sides:
        if side.inconsistency:
            err.print(f"[bold red]{side.label}: {escape(side.inconsistency)}[/]")
    # a sweep answers at every level it has a plan for: it fails only where its base has none
    failed = [sides[0]] if ranges and sides[0].plan is None else [] if ranges else missing
    if failed:
        raise typer.Exit(2 if any(s.status == "infeasible" for s in failed) else 3)


def _write_page(path: Path, report: dict[str, Any], sides: list[tuple[Scenario, Any]]) -> None:
    """The what-if as one offline HTML page (planner.export.page)."""
    from planner.export.page import render_whatif  # plotly: only when a page is asked for
    from planner.report import headline_warnings

    proven = report["base"]["status"] == report["variant"]["status"] == "optimal"
    delta = Text.from_markup(
        _delta_line(report["delta"], report["currency"], report.get("direction", 0), proven)
    ).plain
    rows = [
        (title, [(r[key], _money(r["base"]), _money(r["variant"]), _signed(r["delta"]))
                 for r in report[field] if r["base"] or r["variant"]])
        for title, key, field in (("Money by card", "card", "by_card"),
                                  ("Money by mode", "mode", "by_mode"))
    ]  # fmt: skip
    pages = [
        (side.label, scenario.axis, side.plan, headline_warnings(scenario, side.plan))
        for scenario, side in sides
    ]
    write_text(path, render_whatif(report["change"], delta, pages, rows))


def _usage(message: str) -> LoadError:
    return LoadError([Issue("plan whatif", None, None, (), message)])


def _levels(
    found: re.Match[str], path: Path, base: Scenario, change: Change
) -> list[tuple[int, Change, Scenario]]:
    """Each level of a commitment sweep: its units, its change, its scenario."""
    low, high = int(found["low"]), int(found["high"])
    if not 1 <= low <= high or high - low >= MAX_LEVELS:
        raise _usage(
            f"--commit {found[0]}: expected a range A..B with 1 ≤ A ≤ B and at most "
            f"{MAX_LEVELS} levels"
        )
    levels = []
    for n in range(low, high + 1):
        text = f"--commit {found['offer']}={n}{found['rest']}"
        level = change.plus("commit", text.removeprefix("--commit "))
        try:
            levels.append((n, level, level.apply(path, base)))
        except LoadError as exc:  # said as the flag written, at the level that failed
            raise LoadError(
                [
                    replace(i, file=f"--commit {found[0]}", message=f"at {n} units: {i.message}")
                    if i.file == text
                    else i
                    for i in exc.issues
                ]
            ) from None
    return levels


# --- printing ------------------------------------------------------------------------------


def _signed(value: Any) -> str:
    return f"{value:+,.2f}"


def _money(value: Any) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _status(summary: dict[str, Any]) -> str:
    status = str(summary["status"])
    if summary["total_cost"] is None:
        return status
    gap = summary["gap"]
    return status + ("" if summary["status"] == "optimal" or gap is None else f", gap {gap:.1%}")


def _delta_line(d: dict[str, Any], currency: str, direction: int = 0, proven: bool = False) -> str:
    if proven:
        return f"delta {currency} {_signed(d['found'])}: exact (both plans proven optimal)"
    line = (
        f"delta {currency} {_signed(d['found'])} between the plans found; the optimum's "
        f"difference lies in [{_signed(d['low'])}, {_signed(d['high'])}] (each side's bound "
        "and plan; a side's plan is the other side's, carried over, where that is cheaper)"
    )
    if direction:
        line += "\n  the sign is known whatever the gaps: the change only " + (
            "relaxes the problem (lower prices, more stock, new offers or modes, fewer "
            "workloads), so the optimum cannot rise"
            if direction < 0
            else "tightens it (higher prices, less stock, offers or modes removed, more "
            "workloads), so the optimum cannot fall"
        )
    if d["sign_unknown"]:
        line += (
            "\n  [yellow]warning:[/] the interval holds zero: these solves cannot say whether "
            "the change saves money or costs it (a longer --time-limit narrows it)"
        )
    return line


def _rows_table(title: str, key: str, rows: list[dict[str, Any]]) -> Table:
    t = Table(title=title, title_justify="left")
    t.add_column(key)
    for column in ("base", "variant", "delta"):
        t.add_column(column, justify="right")
    for row in rows:
        if row["base"] or row["variant"]:
            t.add_row(
                str(row[key]), _money(row["base"]), _money(row["variant"]), _signed(row["delta"])
            )
    return t


def print_report(console: Console, report: dict[str, Any]) -> None:
    c = report["currency"]
    base, variant = report["base"], report["variant"]
    console.print(f"[bold]{report['scenario']}[/]: what if {escape(' '.join(report['change']))}")
    if report.get("changes"):
        console.print("  the change sets:")
        for line in _compact(report["changes"]):
            console.print(f"    {escape(line)}", highlight=False)
    console.print(f"  base     {_money(base['total_cost'])}  ({_status(base)})")
    console.print(f"  variant  {_money(variant['total_cost'])}  ({_status(variant)})")
    for side in (base, variant):
        for reason in side.get("reasons", []):
            console.print(f"  [red]{side['status']}:[/] {reason}", markup=True)
    if report["delta"] is None:
        return
    proven = base["status"] == variant["status"] == "optimal"
    console.print(_delta_line(report["delta"], c, report.get("direction", 0), proven))
    kept = report.get("repriced")
    if kept is not None:
        console.print(
            f"  keeping the base plan: it costs {c} {_money(kept['repriced'])} under the change, "
            f"exactly {c} {_signed(kept['change'])} against today's {_money(kept['base_plan'])} "
            "(the checker's pricing); re-planning can only do better than that"
            + (
                ": the variant's plan found costs the same, so the workloads it moves are "
                "ties (not listed)"
                if kept["ties"]
                else ""
            )
        )
    for b in report.get("bought", []):
        console.print(_bought_text(b, c))
    console.print(_rows_table("By card type", "card", report["by_card"]))
    console.print(_rows_table("By billing mode", "mode", report["by_mode"]))
    term_rows = [{"term": k.replace("_", "-"), **v} for k, v in report["terms"].items()]
    if any(row["base"] or row["variant"] for row in term_rows):
        console.print(_rows_table("Idle, round-up and committed money", "term", term_rows))
    else:
        console.print("No idle, round-up or committed money on either side.")
    if report["moved"]:
        t = Table(title="Workloads that moved", title_justify="left")
        for column in ("workload", "changed", "base", "variant"):
            t.add_column(column)
        for row in report["moved"]:
            t.add_row(
                row["workload"],
                ", ".join(row["changed"]),
                _place(row["base"]),
                _place(row["variant"]),
            )
        console.print(t)
    else:
        console.print(
            "No workload moved to other cards, offers, modes or times (replica counts below "
            "each service's peak may still differ hour by hour)."
        )
    for pool in report["committed"]:
        console.print(
            f"Committed {pool['offer']} {pool['mode']}: it costs {c} "
            f"{_signed(pool['commitment_cost'])} and changes the other spend by "
            f"{_signed(pool['other_spend'])}: net {_signed(pool['net'])} (between the plans "
            "found). Its cards: "
            + "; ".join(f"{label} {_use_text(pool[label])}" for label in ("base", "variant"))
            + " (paid for, so work moves onto them: use is no measure of worth)"
        )
    without = report.get("without_commitment")
    against = (
        ""
        if without is None
        else " (against the change without it: "
        + (
            f"{c} {_money(without['total_cost'])}, {_status(without)})"
            if without["total_cost"] is not None
            else f"{without['status']})"
        )
    )
    for b in report["break_even"]:
        console.print(_break_even_text(b, c, against))
    if report.get("break_even_note"):
        console.print(report["break_even_note"] + against)


def _bought_text(b: dict[str, Any], currency: str) -> str:
    """One line per offer and mode the variant holds and the base does not."""
    units = "/".join(str(u) for u in b["units"])
    what = f"{b['rentals']} {b['mode']} package{'s' if b['rentals'] > 1 else ''}"
    if b["mode"] not in ("daily", "weekly", "monthly"):
        what = f"{b['rentals']} committed {b['mode']} rental{'s' if b['rentals'] > 1 else ''}"
    past = b["days_past_horizon"]
    tail = (
        f"; the last runs {past:g} day{'s' if past != 1 else ''} past the horizon's end (paid in "
        "full, unusable)"
        if past
        else ""
    )
    kind = "committed" if b["committed"] else "bought"
    moved = b.get("base_elsewhere")
    if moved:
        n = moved["rentals"]
        tail += (
            f"; the base holds {n} such {'rental' if n == 1 else 'rentals'} on other days, "
            f"{moved['first_start']:%m-%d} to {moved['last_end']:%m-%d}"
        )
    return (
        f"The variant holds {what} of {units} unit(s) on {b['offer']} ({kind}), "
        f"{b['first_start']:%m-%d} to {b['last_end']:%m-%d}, {currency} {b['cost']:,.2f}{tail}"
    )


def _place(place: dict[str, Any] | None) -> str:
    if place is None:
        return "(none)"
    if "configs" in place:
        return f"peak {place['peak_replicas']}: " + "; ".join(place["configs"])
    return (
        f"{place['cards']}× {place['card']} {place['offer']} {place['mode']} "
        f"{place['start']:%m-%d %H:%M} → {place['end']:%m-%d %H:%M}"
    )


def _use_text(use: dict[str, Any] | None) -> str:
    if use is None or not use["held_card_hours"]:
        return "none held"
    return (
        f"{use['used_card_hours']:,.0f} of {use['held_card_hours']:,.0f} card-hours used "
        f"({use['utilisation']:.0%})"
    )


# a curve's values changed one by one (`--scale-demand`: one per hour of the week) are
# said in one line past this many (the JSON keeps every one)
CHANGES_SHOWN = 6


def _compact(lines: list[str]) -> list[str]:
    """The change lines, those of one field's many values (a curve's hours) said as one:
    `workloads.api.requests_per_s: 168 values changed, e.g. fri.00-01: 0.5 -> 0.25`."""
    groups: dict[str, list[str]] = {}
    for line in lines:
        path = line.split(":", 1)[0]
        groups.setdefault(".".join(path.split(".")[:3]), []).append(line)
    out = []
    for key, found in groups.items():
        if len(found) <= CHANGES_SHOWN:
            out += found
            continue
        example = found[0].removeprefix(key + ".")
        out.append(f"{key}: {len(found)} values changed, e.g. {example}")
    return out


def _between_minor_units(b: dict[str, Any], end: str, currency: str) -> str | None:
    """The exact break-even at `end` ("low" or "high") to two more places, cut ('13.9388…'), where
    it is not a whole minor unit (the figure shown is it rounded down); else None."""
    exact = Fraction(b["fraction"][end]) if "fraction" in b else None
    if exact is None or exact == Fraction(Decimal(str(b[end]))):
        return None
    places = MINOR_DIGITS.get(currency, 2) + 2
    cut = Decimal(math.floor(exact * 10**places)).scaleb(-places)
    return f"{cut:,.{places}f}" + ("" if Fraction(cut) == exact else "…")


def _break_even_text(b: dict[str, Any], currency: str, against: str = "") -> str:
    unit = "per package" if b["mode"] not in ("hourly", "spot") else "per unit-hour"
    head = f"Break-even of the {b['offer']} {b['mode']} commitment{against}: "
    if b.get("never_pays"):
        free = "" if b["exact"] else ", whatever the sides' gaps leave open"
        return (
            f"{head}it pays at no price: even free, the plan with it costs more than without "
            f"it{free}; the variant pays {b['price']:,.2f}"
        )
    if b["exact"]:
        where = f"{currency} {b['low']:,.2f} {unit}"
        between = _between_minor_units(b, "low", currency)
        if between is not None:
            step = Decimal(1).scaleb(-MINOR_DIGITS.get(currency, 2))
            where += (
                f" (exactly {between}, rounded down to the minor unit: at "
                f"{Decimal(str(b['low'])) + step:,f} it no longer pays)"
            )
    elif b["low"] <= 0:  # below 0 where the gaps leave it open: perhaps at no price
        none = "perhaps none: " if b["low"] < 0 else ""
        where = (
            f"a price of at most {currency} {b['high']:,.2f} {unit}, how far below not known "
            f"({none}the sides' gaps leave the lower end open; a longer --time-limit narrows it)"
        )
    else:
        where = (
            f"a price between {currency} {b['low']:,.2f} and {b['high']:,.2f} {unit} (the "
            "sides' gaps leave this range)"
        )
    others = (
        f" (its other {b['mode']} purchases of {b['offer']}, {currency} {b['others']:,.2f}, "
        "kept at that price: a price changed with --commit @PRICE or --price moves them too, "
        "so a rerun at the break-even price differs by theirs)"
        if b.get("others")
        else ""
    )
    return f"{head}it pays only at or below {where}; the variant pays {b['price']:,.2f}{others}"


def _sweep_price(b: dict[str, Any], currency: str) -> str:
    """A level's break-even in the sweep's table: rounded down to the minor unit (the highest
    price that pays), '…' after it where the exact value lies beyond it."""
    if b.get("never_pays"):
        return "never"
    if not b["exact"] and b["low"] <= 0:
        return f"≤ {b['high']:,.2f}" + ("…" if _between_minor_units(b, "high", currency) else "")
    ends = ("low",) if b["exact"] else ("low", "high")
    return " .. ".join(
        f"{b[end]:,.2f}" + ("…" if _between_minor_units(b, end, currency) else "") for end in ends
    )


def print_sweep(console: Console, report: dict[str, Any]) -> None:
    c = report["currency"]
    base = report["base"]
    console.print(
        f"[bold]{report['scenario']}[/]: commitment levels against none "
        f"({c} {_money(base['total_cost'])}, {_status(base)})"
    )
    t = Table(title="Savings against the commitment level", title_justify="left")
    for column in (
        "units",
        "total",
        "status",
        "saving",
        "committed cards used",
        "break-even price",
    ):
        t.add_column(column, justify="left" if column == "status" else "right")
    rounded = False
    for row in report["levels"]:
        s, saving, b = row["summary"], row["saving"], row["break_even"]
        if saving is None:
            saved = "-"
        elif saving["exact"]:
            saved = _signed(saving["found"])
        else:
            saved = (
                f"{_signed(saving['found'])} [{_signed(saving['low'])}, {_signed(saving['high'])}]"
            )
        price = "-" if b is None else _sweep_price(b, c)
        rounded = rounded or (b is not None and price.endswith("…"))
        use = row["use"]
        t.add_row(
            str(row["units"]),
            _money(s["total_cost"]),
            _status(s),
            saved,
            "-" if use is None else f"{use['utilisation']:.0%}",
            price,
        )
    console.print(t)
    if rounded:
        console.print(
            "  …: the exact break-even is not a whole minor unit; the price shown is it rounded "
            "down, the highest that pays (JSON break_even.fraction: the exact value)"
        )
    for row in report["levels"]:  # a level without a plan: why, under the table
        for reason in row["summary"].get("reasons", []):
            console.print(
                f"  {row['units']} units, {row['summary']['status']}: {reason}", markup=False
            )
