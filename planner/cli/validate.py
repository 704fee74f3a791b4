"""`plan validate SCENARIO`: parse, resolve and check a scenario; list every problem."""

from __future__ import annotations

from typing import Any

from planner.cli.common import (
    JsonOption,
    ScenarioArgument,
    human,
    input_errors,
    load_planned,
    write_json,
)
from planner.explain.conflict import plural
from planner.report import scenario_summary


def validate(
    scenario: ScenarioArgument,
    json_path: JsonOption = None,
) -> None:
    """Check a scenario and the catalogs and models it names; print a summary or every problem."""
    with input_errors(json_path):
        loaded = load_planned(scenario)
    summary = scenario_summary(loaded)
    _print(summary, human(json_path))
    write_json(summary, json_path)


def _print(s: dict[str, Any], console: Any) -> None:
    h = s["horizon"]
    console.print(f"[bold green]✓ {s['scenario']}[/] is valid ({s['file']})")
    console.print(
        f"  horizon     {h['start']} .. {h['end']} (end exclusive): {plural(h['days'], 'day')}, "
        f"{plural(h['hours'], 'hour')}, {s['timezone']}"
    )
    for c in s["catalogs"]:
        rate = c["exchange_rate"]
        money = c["currency"] + (f", at {rate} {s['currency']} per {c['currency']}" if rate else "")
        console.print(
            f"  catalog     {c['name']} ({c['date'] or 'no date'}, {money}): {c['source']}",
            markup=False,
        )
    modes = ", ".join(f"{m} {n}" for m, n in s["offers"]["by_mode"].items())
    if s["offers"]["count"]:
        console.print(
            f"  offers      {s['offers']['count']} of {plural(len(s['cards']), 'card type')}, "
            f"selling by mode (an offer may sell several): {modes}"
        )
    else:  # every catalog lists offers: the scenario's `offers:` deleted them all
        console.print("  offers      none (the offers: changes delete every one the catalogs list)")
    for kind, names in s["workloads"].items():
        if names:
            console.print(f"  {kind:<11} {len(names)}: {', '.join(names)}")
    console.print(f"  commitments {s['commitments']}")
    console.print(f"  usable memory fraction {s['usable_memory_fraction']:.2f}")
    margin = s["memory_margin"]
    if margin:
        shown = {
            "band": "each estimate's error band",
            "-band": "each estimate's lower band (plans at the low end of what was measured)",
        }.get(margin) or f"{margin:+.0%}"
        console.print(f"  memory margin {shown}")
    speed = s.get("speed_margin")
    if speed:
        shown = "each estimate's lower band" if speed == "band" else f"{speed:.0%} slower"
        console.print(f"  training speed planned {shown}")
