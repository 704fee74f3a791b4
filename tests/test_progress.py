"""Progress on stderr while the solver searches: a line per better plan and a heartbeat
while nothing improves (issue 10: what the user sees on long solves)."""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any

import pytest

from planner.cli import solve as cli_solve


def test_status_line_says_the_gap_in_plain_words() -> None:
    line = cli_solve.status_line("CNY", Fraction(120), Fraction(100))
    assert "gap 16.7%" in line and "at most CNY 20.00 could still be saved" in line
    assert cli_solve.status_line("CNY", Fraction(100), Fraction(100)).endswith("proven")


def test_a_heartbeat_comes_while_nothing_improves(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    lines: list[str] = []
    monkeypatch.setattr(cli_solve.err, "print", lambda text, **_: lines.append(str(text)))
    with cli_solve.Progress("CNY", "solving", every=0.05) as progress:
        progress(Fraction(500), Fraction(400), 0.0)  # a plan: one line at once
        progress(None, Fraction(450), 0.0)  # only the bound moves: no line of its own
        deadline = time.perf_counter() + 10
        while not any("(searching)" in line for line in lines) and time.perf_counter() < deadline:
            time.sleep(0.01)
    assert lines[0] == "solving"
    assert "incumbent CNY 500.00" in lines[1] and "bound 400.00" in lines[1]
    beat = next(line for line in lines if "(searching)" in line)
    assert "bound 450.00" in beat and "at most CNY 50.00 could still be saved" in beat


def test_the_cli_says_what_a_plan_not_proven_could_still_save(cli: Any) -> None:
    # ten jobs in 0.1 units of deterministic time are not proven (it takes about 10):
    # the summary says the bound and what is left to save
    result = cli(
        "solve",
        "scenarios/q3-train.yaml",
        "--deterministic",
        "--time-limit",
        "0.1",
        "--workers",
        "1",
    )
    assert result.exit_code == 0, result.output
    assert "not proven" in result.stdout


def test_a_limit_spent_on_building_says_so_and_shows_the_baseline(cli: Any) -> None:
    # loading ten jobs leaves less than 0.1 s, too little to build the model in: no model,
    # no search, the heuristic's plan, and what limit would let the solver improve it
    result = cli("solve", "scenarios/q3-train.yaml", "--time-limit", "0.1")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "would take more than half of the" in text
    assert "the plan is the best checked baseline" in text
    assert "lets the solver improve it" in text
    assert "q3-train: feasible" in text
