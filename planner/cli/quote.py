"""`plan quote SCENARIO WORKLOAD`: every feasible config of one workload, alone, by cost."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from planner.cli.common import (
    JsonOption,
    ScenarioArgument,
    err,
    human,
    input_errors,
    load_planned,
    print_conflicts,
    write_json,
)
from planner.domain.errors import Issue, LoadError
from planner.domain.money import money
from planner.domain.scenario import Scenario
from planner.domain.suggest import did_you_mean
from planner.domain.workload import ReserveWorkload, ServeWorkload, TrainWorkload
from planner.explain import Conflict
from planner.explain.replicas import reserve_fit, serve_fit
from planner.explain.train import train_conflicts
from planner.problem import quote_job, quote_replicas
from planner.quote import train_quotes


def quote_command(
    scenario: ScenarioArgument,
    workload: Annotated[str, typer.Argument(help="A workload's name.", show_default=False)],
    json_path: JsonOption = None,
) -> None:
    """Every feasible config for one workload alone: duration and cost per billing mode."""
    with input_errors(json_path):
        loaded = load_planned(scenario)
        names = [w.name for w in loaded.spec.workloads]
        classes = [  # a serve workload with request classes, or a class with buckets
            w.name
            for w in loaded.spec.workloads
            if getattr(w, "class_of", None) == workload
            or (workload not in names and w.name.startswith(workload + ".") and w.kind == "serve")
        ]
        if classes:  # a serve workload with request classes: each class alone
            documents = [_quote_replicas(loaded, name, json_path) for name in classes]
            write_json({"workload": workload, "classes": documents}, json_path)
            return
        if workload not in names:
            raise LoadError(
                [
                    Issue(
                        str(scenario),
                        None,
                        None,
                        ("workloads",),
                        f"no workload {workload!r}"
                        + (did_you_mean(workload, names) or f"; workloads: {', '.join(names)}"),
                    )
                ]
            )
        if loaded.workload(workload).kind != "train":
            document = _quote_replicas(loaded, workload, json_path)
            _refuse_if_empty(loaded, workload, document, json_path)
            write_json(document, json_path)
            return
        quotes = train_quotes(loaded, workload)
    currency = loaded.spec.currency
    rows = []
    for q in quotes:
        c = q.config
        billed: dict[str, Any] = {
            "billed_hours": None if q.billed_hours is None else float(q.billed_hours),
            "packages": q.packages,
        }
        if q.committed:
            billed["committed"] = True
        offer = loaded.offers[c.offer]
        assumed = "price" in offer.billing(c.mode).assumed
        low = bool({"bf16_tflops", "memory_gib"} & set(loaded.cards[c.card].low_confidence()))
        rows.append(
            {
                "card": c.card,
                "cards": c.cards,
                "offer": c.offer,
                "mode": c.mode,
                "units": c.units,
                "hours": c.span,
                "compute_hours": round(float(c.compute_hours), 2),
                **billed,
                "cost": money(q.cost, currency),
                "assumed_price": assumed,
                "low_confidence_card": low,
            }
        )
    rows = _merged(rows)
    rows.sort(key=lambda r: (r["cost"], r["cards"], r["hours"], r["offer"], r["mode"]))
    _refuse_if_empty(loaded, workload, _document(loaded, workload, rows, TRAIN_UNITS), json_path)
    console = human(json_path)
    console.print(_table(workload, currency, rows))
    if any(r["configs"] > 1 for r in rows):
        console.print(
            "a row may stand for several configs alike in every figure shown (a windowed "
            "job's daily runs may start at several hours; `configs` in the JSON)"
        )
    console.print(
        "* price assumed (not on the price list)   ~ rests on a low-confidence card "
        "figure (speed or memory)"
    )
    write_json(_document(loaded, workload, rows, TRAIN_UNITS), json_path)


# The unit of each number in a quote row (money in the document's currency).
TRAIN_UNITS = {
    "configs": "configs this row stands for, alike in every figure shown (a windowed job's "
    "daily runs may start at several hours)",
    "hours": "h (occupied, setup included)",
    "compute_hours": "h",
    "billed_hours": "h billed per unit (hourly, spot)",
    "packages": "packages bought back to back (package modes)",
    "cost": "currency",
}
REPLICA_UNITS = {
    "capacity": "requests in flight per replica (serve) or cards (reserve)",
    "peak": "replicas",
    "billed_unit_hours": "unit-hours billed (hourly)",
    "packages": "packages per unit (package modes)",
    "package_units": "units held (package modes)",
    "within_stock": "whether the peak's units at once are within the mode's stock and the "
    "offer's max_units",
    "cost": "currency",
}


def _refuse_if_empty(
    loaded: Scenario, workload: str, document: dict[str, Any], json_path: str | None
) -> None:
    """Where no config can run `workload` even alone, say why as `plan solve` does (each
    conflict and the smallest change found), write the document with its `conflicts`, and
    exit 2: the scenario has no plan."""
    if document["rows"]:
        return
    conflicts = [c for c in _alone(loaded, workload) if workload in c.workloads]
    err.print(f"[bold red]infeasible:[/] no config can run {escape(workload)} even alone:")
    print_conflicts(conflicts)
    write_json({**document, "conflicts": [c.as_dict() for c in conflicts]}, json_path)
    raise typer.Exit(2)


def _alone(loaded: Scenario, workload: str) -> list[Conflict]:
    w = loaded.workload(workload)
    if isinstance(w, TrainWorkload):
        return train_conflicts(loaded, [quote_job(loaded, workload)])
    if isinstance(w, ServeWorkload):
        return [serve_fit(loaded, w)]
    assert isinstance(w, ReserveWorkload)
    return [reserve_fit(loaded, w)]


def _merged(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with those alike in every figure shown once, each with how many configs it
    stands for (a windowed job has one config per hour its daily runs may start at)."""
    counts: dict[tuple[Any, ...], int] = {}
    first: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        key = tuple(sorted(r.items()))
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, r)
    return [{"configs": counts[key], **r} for key, r in first.items()]


def _document(
    loaded: Scenario, workload: str, rows: list[dict[str, Any]], units: Any
) -> dict[str, Any]:
    """A quote as JSON that stands alone: whose, in what currency, each number's unit."""
    return {
        "scenario": loaded.name,
        "workload": workload,
        "kind": loaded.workload(workload).kind,
        "currency": loaded.spec.currency,
        "units": units,
        "rows": rows,
    }


def _billed(r: dict[str, Any]) -> str:
    if r.get("committed"):
        return "committed units"
    if r.get("packages") is None:
        hours = r.get("billed_hours", r.get("billed_unit_hours"))
        return f"{hours:,g} h" if "billed_hours" in r else f"{hours:,} unit-h"
    if "package_units" in r:
        return f"{r['package_units']} × {r['packages']} package(s)"
    return f"{r['packages']} package(s)"


def _quote_replicas(loaded: Any, workload: str, json_path: str | None) -> dict[str, Any]:
    """Print a serve or reserve workload's quote; return its JSON document."""
    currency = loaded.spec.currency
    rows = [
        {
            **{k: v for k, v in r.items() if k != "exact_cost"},
            "cost": money(r["exact_cost"], currency),
        }
        for r in quote_replicas(loaded, workload)
    ]
    rows.sort(key=lambda r: (r["cost"], r["cards"], r["offer"], r["mode"]))
    table = Table(
        title=f"{workload}: every config carrying the whole curve alone, cheapest first",
        title_justify="left",
        caption=f"carries: {REPLICA_UNITS['capacity']}; peak: replicas at the curve's peak",
        caption_justify="left",
    )
    for column in (
        "replica",
        "offer",
        "mode",
        "precision",
        "carries",
        "peak",
        "billed",
        f"cost {currency}",
    ):
        table.add_column(column, justify="right" if column in ("carries", "peak") else "left")
    for r in rows:
        table.add_row(
            f"{r['cards']}× {r['card']}",
            r["offer"],
            r["mode"],
            r["precision"] or "-",
            str(r["capacity"]),
            str(r["peak"]),
            _billed(r),
            f"{r['cost']:,.2f}" + ("" if r["within_stock"] else "^"),
        )
    if rows:  # none: the caller says why (`_refuse_if_empty`)
        human(json_path).print(table)
    if not all(r["within_stock"] for r in rows):
        human(json_path).print(
            "^ its peak needs more units at once than the offer sells on this mode: priced as "
            "if it did; a plan carries the rest of the peak on other configs"
        )
    return _document(loaded, workload, rows, REPLICA_UNITS)


def _table(workload: str, currency: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(
        title=f"{workload}: every feasible config alone, cheapest first", title_justify="left"
    )
    for column in ("cards", "offer", "mode", "span h", "compute h", "billed", f"cost {currency}"):
        table.add_column(
            column, justify="left" if column in ("cards", "offer", "mode") else "right"
        )
    for r in rows:
        mark = ("*" if r["assumed_price"] else "") + ("~" if r["low_confidence_card"] else "")
        table.add_row(
            f"{r['cards']}× {r['card']}",
            r["offer"],
            r["mode"],
            str(r["hours"]),
            f"{r['compute_hours']:,.1f}",
            _billed(r),
            f"{r['cost']:,.2f}{mark}",
        )
    return table
