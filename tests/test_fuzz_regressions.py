"""Inputs benchmarks/fuzz.py found to end in an internal error, a crash or a long stall: each
is now bad input, exit 1, with a located message (file:line:column: field: message)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner import __version__
from planner.domain import suggest, yaml_source
from tests.conftest import REPO, minimal_scenario


def refused(cli: Any, path: Path, field: str, *texts: str) -> str:
    """`plan validate` exits 1 and reports `field` at a line and column of a file."""
    result = cli("validate", path)
    assert result.exit_code == 1, result.output
    assert "internal error" not in result.output and "Traceback" not in result.output
    text = " ".join(result.stderr.split())  # rich wraps long lines
    assert re.search(rf"\.(yaml|json):\d+:\d+: {re.escape(field)}: ", text), text
    for part in texts:
        assert part in text, text
    return text


def _catalog_copy(write: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The shipped catalog as a file next to the scenario, which names it by path."""
    catalog = yaml.safe_load((REPO / "catalogs" / "jizhisuan-2026-09.yaml").read_text())
    write(catalog, "catalog.yaml")
    data["catalog"] = "catalog.yaml"
    return catalog


@pytest.mark.parametrize("ident", [[{}], {"a": 1}])
def test_an_offer_id_that_is_not_text(cli: Any, write: Any, ident: Any) -> None:
    # a list or map as an offer id was used as a dict key (TypeError: unhashable)
    data = minimal_scenario()
    catalog = _catalog_copy(write, data)
    catalog["offers"][1]["id"] = ident
    write(catalog, "catalog.yaml")
    refused(cli, write(data), "offers[1].id", "Input should be a valid string")


def test_an_offer_patch_id_that_is_not_text(cli: Any, write: Any) -> None:
    data = minimal_scenario()
    data["offers"] = [{"id": ["jz-h200"], "hourly": {"price": 1}}]
    refused(cli, write(data), "offers[0].id", "unknown offer id")


def test_a_card_id_that_is_not_text(cli: Any, write: Any) -> None:
    # card specs in a catalog are merged by id, like offers
    data = minimal_scenario()
    catalog = _catalog_copy(write, data)
    catalog["cards"] = [{"id": {"a": 1}, "name": "x"}]
    write(catalog, "catalog.yaml")
    refused(cli, write(data), "cards[0].id", "Input should be a valid string")


@pytest.mark.parametrize("workloads", [True, 3, "chat", {"a": 1}])
def test_workloads_that_are_not_a_list(cli: Any, write: Any, workloads: Any) -> None:
    # `workloads: true` was iterated before the schema could say what it must be
    data = minimal_scenario()
    data["workloads"] = workloads
    refused(cli, write(data), "workloads", "valid list")


def test_a_model_name_too_long_for_a_file_name(cli: Any, write: Any) -> None:
    # looking for models/<name>.yaml raised OSError (file name too long)
    data = minimal_scenario()
    data["workloads"][1]["model"] = "x" * 5000
    refused(cli, write(data), "workloads[1].model", "unknown model 'xxxx")


def test_a_timezone_too_long_for_a_file_name(cli: Any, write: Any) -> None:
    data = minimal_scenario()
    data["timezone"] = "Asia/" + "x" * 5000
    refused(cli, write(data), "timezone", "unknown timezone 'Asia/xxxx")


def test_no_suggestion_for_a_name_longer_than_any(monkeypatch: pytest.MonkeyPatch) -> None:
    # a 100,000-character name against 600 time zones was a quadratic edit distance each
    # (minutes); past MAX_NAME_LENGTH no distance is computed at all
    def never(a: str, b: str) -> int:
        raise AssertionError("no edit distance for an overlong name")

    monkeypatch.setattr(suggest, "_edits", never)
    long_name = "x" * (suggest.MAX_NAME_LENGTH + 1)
    assert suggest.did_you_mean(long_name, ["Asia/Shanghai", "Europe/Berlin"]) == ""


def test_a_horizon_in_year_one(cli: Any, write: Any) -> None:
    # 0001-01-01 at +08:00 is before the first datetime (OverflowError)
    data = minimal_scenario()
    data["horizon"] = {"start": "0001-01-01", "end": "0001-02-01"}
    refused(cli, write(data), "horizon.start", "outside the days the planner accepts")


@pytest.mark.parametrize(
    ("workload", "field", "value", "message"),
    [
        (0, "tokens", float("inf"), "finite number"),  # OverflowError in the solver
        (0, "tokens", float("nan"), "finite number"),
        (1, "concurrency", float("inf"), "finite number ≥ 0"),  # math.ceil(inf) in demand
        (1, "concurrency", {"00-12": float("nan"), "12-24": 1}, "finite number ≥ 0"),
        (1, "min_tokens_per_s", float("inf"), "finite number"),
        (1, "growth_per_month", float("inf"), "finite number"),
    ],
)
def test_infinite_and_nan_figures(
    cli: Any, write: Any, workload: int, field: str, value: Any, message: str
) -> None:
    data = minimal_scenario()
    data["workloads"][workload][field] = value
    refused(cli, write(data), f"workloads[{workload}].{field}", message)


def test_a_file_past_the_size_limit(cli: Any, write: Any) -> None:
    big = write("# padding\n" * (yaml_source.MAX_BYTES // 10 + 1), "big.yaml")
    data = minimal_scenario()
    data["catalog"] = str(big)
    result = cli("validate", write(data))
    assert result.exit_code == 1
    assert f"{big}: file is larger than 1,000,000 bytes" in " ".join(result.stderr.split())


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_catalog_that_is_a_device(write: Any) -> None:
    # a path to /dev/zero was read until memory ran out; reading stops past MAX_BYTES. Run
    # in a child with 2 GiB of address space, so that a regression fails, not the machine.
    data = minimal_scenario()
    data["catalog"] = "/dev/zero"
    path = write(data)
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))"
    run = f"{limit}; import sys; sys.argv = ['plan', 'validate', {str(path)!r}]"
    result = subprocess.run(
        [sys.executable, "-c", f"{run}; from planner.cli.app import main; main()"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "/dev/zero: file is larger than 1,000,000 bytes" in result.stderr


def test_python_dash_m_runs_the_cli(tmp_path: Path) -> None:
    # `python -m planner.cli.app …` (as the README's development notes run it) did nothing
    # and exited 0: the module had no __main__ guard
    result = subprocess.run(
        [sys.executable, "-m", "planner.cli.app", "validate", str(tmp_path / "nope.yaml")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 1 and "file not found" in result.stderr
    version = subprocess.run(
        [sys.executable, "-m", "planner.cli.app", "--version"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert version.returncode == 0 and version.stdout.strip() == f"gpuplan {__version__}"


# --- found in model code (fixed there) ------------------------------------------------------


def test_windowed_work_far_past_the_deadline_is_refused_quickly(make_scenario: Any) -> None:
    # 10 million hours of work in 08:00-22:00 windows: every start's runs stop at the
    # deadline (they used to be walked day after day past it, for every start and config,
    # which hung `plan solve`): no config, a deadline conflict, exit 2.
    from planner.solve import SolveParams, solve
    from tests.planning import job, offer

    windowed = job("j", 1e7, daily_hours="08:00-22:00", deadline="2026-07-05")
    s = make_scenario([offer("o", hourly={"price": 10})], [windowed], days=10)
    result = solve(s, SolveParams(time_limit=5, workers=1))
    assert result.status == "infeasible"
    assert result.conflicts and result.conflicts[0].kind == "deadline"


def test_a_job_of_a_few_tokens_runs_for_an_hour(make_scenario: Any) -> None:
    # 1 token at 1,000 tokens/s is 0.28 µs of work: it used to round to 0 hours and be
    # called infeasible; it occupies ceil(1e-6 h) = 1 h on one card: 10.00.
    from planner.solve import SolveParams, solve
    from tests.planning import job, offer

    tiny = {**job("j", 1), "tokens": 1}
    s = make_scenario([offer("o", hourly={"price": 10})], [tiny], days=1)
    result = solve(s, SolveParams(time_limit=5, workers=1))
    assert result.plan is not None and result.plan.total_cost == 10


def test_a_free_hourly_offer_beside_a_package_is_reported(cli: Any, tmp_path: Path) -> None:
    # the package decision compared its price with a free hourly card: division by zero
    data = yaml.safe_load((REPO / "scenarios" / "q3-train.yaml").read_text())
    data["offers"] = [{"id": "jz-rtx4090-48g", "hourly": {"price": 0}}]
    data["catalog"] = str(REPO / "catalogs" / "jizhisuan-2026-09.yaml")
    path = tmp_path / "free.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = cli("solve", path, "--deterministic", "--time-limit", "2", "--workers", "1")
    assert result.exit_code == 0, result.output
    assert "internal error" not in result.output


def test_a_deadline_fix_past_the_longest_horizon_is_not_offered(make_scenario: Any) -> None:
    # 10,000 h of work on one card (max_cards 1) fits no deadline inside a 366-day
    # horizon: the conflict stands, without a relaxation (the patched scenario used to
    # fail validation inside the explanation: an internal error).
    from planner.solve import SolveParams, solve
    from tests.planning import job, offer

    s = make_scenario([offer("o", hourly={"price": 10})], [job("j", 10_000)], days=10)
    result = solve(s, SolveParams(time_limit=5, workers=1))
    assert result.status == "infeasible"
    [conflict] = result.conflicts
    assert conflict.kind == "deadline" and conflict.relaxations == ()


def test_the_stock_a_huge_reserve_needs_is_found_by_bisection(cli: Any, write: Any) -> None:
    # 10,000 reserved cards: the least stock that carries the peak was searched one unit at
    # a time, each try a knapsack over the stock (minutes); more stock never makes the peak
    # harder, so bisection finds the same least count in a few tries
    data = minimal_scenario()
    data["workloads"][2]["cards"] = 10_000
    result = cli("solve", write(data), "--time-limit", "5")
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "[stock] devs: needs 10,000 cards" in text
    assert re.search(r"relax: add [\d,]+ units? of \S+ \w+ stock", text), text
