"""plan check through the CLI: it needs no solvable scenario, lists every violation, and a
plan JSON that lacks a cost line is refused; DST plans survive solve → JSON → check."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.planning import job, offer


def _scenario(write: Any, name: str, hours: int, **extra: Any) -> Path:
    catalog = {
        "name": "synthetic",
        "currency": "CNY",
        "source": "tests",
        "offers": [offer("o", hourly={"price": 10})],
    }
    write(catalog, "catalog.yaml")
    data = {
        "name": "tiny",
        "currency": "CNY",
        "timezone": extra.pop("timezone", "Asia/Shanghai"),
        "horizon": extra.pop("horizon", {"start": "2026-07-01", "end": "2026-07-02"}),
        "catalog": "catalog.yaml",
        "workloads": [job("a", hours, **extra)],
    }
    return write(yaml.safe_dump(data, sort_keys=False), name)  # type: ignore[no-any-return]


def _solved(cli: Any, scenario: Path, out: Path) -> dict[str, Any]:
    result = cli("solve", scenario, "--workers", "2", "--deterministic", "--json", out)
    assert result.exit_code == 0, result.output
    assert cli("check", scenario, out).exit_code == 0
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def test_check_lists_violations_of_a_scenario_with_no_feasible_plan(
    cli: Any, write: Any, tmp_path: Path
) -> None:
    # The plan of a 5-hour job checked against the same scenario where it needs 30 hours
    # before a 24-hour deadline: no plan exists, and check still says what is wrong.
    _solved(cli, _scenario(write, "five.yaml", 5), tmp_path / "plan.json")
    impossible = _scenario(write, "thirty.yaml", 30)
    assert cli("solve", impossible, "--workers", "2", "--deterministic").exit_code == 2
    result = cli("check", impossible, tmp_path / "plan.json")
    assert result.exit_code == 1, result.output
    assert "[duration] a:" in result.stderr and "internal error" not in result.output
    # as JSON: whose plan, in what currency, each violation an amount with its unit
    report = json.loads(cli("check", impossible, tmp_path / "plan.json", "--json", "-").stdout)
    assert (report["scenario"], report["currency"], report["ok"]) == ("tiny", "CNY", False)
    duration = next(v for v in report["violations"] if v["rule"] == "duration")
    assert duration["unit"] == "h" and duration["amount"] == 25  # 30 h needed, 5 h stated


def test_a_plan_without_its_breakdown_is_refused(cli: Any, write: Any, tmp_path: Path) -> None:
    scenario = _scenario(write, "s.yaml", 3)
    plan = _solved(cli, scenario, tmp_path / "plan.json")
    del plan["cost_breakdown"]
    (tmp_path / "no-breakdown.json").write_text(json.dumps(plan))
    result = cli("check", scenario, tmp_path / "no-breakdown.json")
    assert result.exit_code == 1 and "cost_breakdown" in result.stderr
    plan = _solved(cli, scenario, tmp_path / "plan.json")
    del plan["cost_breakdown"]["reported"]["idle"]
    (tmp_path / "no-idle.json").write_text(json.dumps(plan))
    result = cli("check", scenario, tmp_path / "no-idle.json")
    assert result.exit_code == 1 and "cost terms missing: idle" in result.stderr


def test_a_berlin_plan_across_the_autumn_change_round_trips(
    cli: Any, write: Any, tmp_path: Path
) -> None:
    # 25 Oct 2026 has 25 hours in Berlin: a 5-hour job from 00:00 ends at 04:00 +01:00 and
    # is billed 5 h (50.00), written with the offset in force, and checks after the trip.
    scenario = _scenario(
        write,
        "berlin.yaml",
        5,
        timezone="Europe/Berlin",
        horizon={"start": "2026-10-25", "end": "2026-10-26"},
    )
    plan = _solved(cli, scenario, tmp_path / "plan.json")
    [rental] = plan["rentals"]
    assert rental["start"] == "2026-10-25T00:00:00+02:00"
    assert rental["end"] == "2026-10-25T04:00:00+01:00"
    assert rental["billed_hours"] == 5 and plan["total_cost"] == 50


def test_a_window_opening_in_the_spring_gap_is_never_written(
    cli: Any, write: Any, tmp_path: Path
) -> None:
    # 29 Mar 2026: 02:00-03:00 does not exist in Berlin. A window "02:00-06:00" opens at the
    # first instant after the gap (03:00 +02:00) and holds 3 real hours.
    scenario = _scenario(
        write,
        "spring.yaml",
        3,
        timezone="Europe/Berlin",
        horizon={"start": "2026-03-29", "end": "2026-03-30"},
        daily_hours="02:00-06:00",
    )
    plan = _solved(cli, scenario, tmp_path / "plan.json")
    [rental] = plan["rentals"]
    assert rental["start"] == "2026-03-29T03:00:00+02:00" and rental["billed_hours"] == 3


def test_a_price_too_large_for_the_solver_is_bad_input(
    cli: Any, write: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1e30 per hour cannot be held in the solver's 64-bit integers: exit 1 with the reason,
    # not exit 3 with a status the contract does not have. The limits of input refuse it
    # when the file is read (tests/test_limits.py); lifted here, the solver's own check is
    # the last resort.
    monkeypatch.setattr("planner.domain.money.MAX_PRICE", Decimal(10**40))
    monkeypatch.setattr("planner.domain.magnitudes.MAX_SCALED_MONEY", 10**60)
    catalog = {
        "name": "synthetic",
        "currency": "CNY",
        "source": "tests",
        "offers": [offer("o", hourly={"price": "1e30"})],
    }
    write(catalog, "catalog.yaml")
    data = {
        "name": "tiny",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": "2026-07-01", "end": "2026-07-02"},
        "catalog": "catalog.yaml",
        "workloads": [job("a", 3)],
    }
    scenario = write(yaml.safe_dump(data, sort_keys=False), "huge.yaml")
    result = cli("solve", scenario, "--workers", "2", "--deterministic")
    assert result.exit_code == 1, result.output
    assert "too large for the solver's 64-bit integers" in result.stderr
