"""Past the size gpuplan builds, `solve` shows the best checked baseline with the
relaxation's bound and says why; the size estimate it decides by tracks the real model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner import solve as solve_module
from planner.bound import lower_bound
from planner.cpsat.model import CpModel
from planner.cpsat.variables import estimated_variables
from planner.domain.load import load_scenario
from planner.problem import build_problem
from planner.solve import SolveParams, solve

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", ["q3.yaml", "seed-70b-serving.yaml", "q3-train.yaml"])
def test_the_estimate_tracks_the_built_model(name: str) -> None:
    problem = build_problem(load_scenario(ROOT / "scenarios" / name), serving=True)
    built = CpModel(problem).size()["variables"]
    estimate = estimated_variables(problem)
    # the gate needs the order of magnitude, not the count: within a factor of two
    assert built / 2 <= estimate <= built * 2, (estimate, built)


def test_a_model_past_the_limit_is_not_built_and_the_baseline_is_shown(
    monkeypatch: Any,
) -> None:
    scenario = load_scenario(ROOT / "scenarios" / "seed-70b-serving.yaml")
    monkeypatch.setattr(solve_module, "MAX_VARIABLES", 10)
    built: list[Any] = []
    monkeypatch.setattr(solve_module, "CpModel", lambda *a, **k: built.append(a))
    result = solve(scenario, SolveParams(time_limit=30, workers=2))
    assert built == []  # never built
    assert result.status == "feasible" and result.plan is not None
    plan = result.plan
    assert plan.total_cost == min(c for c in (plan.naive_cost, plan.heuristic_cost) if c)
    assert "variables" in plan.baseline_notes["solver"]
    problem = build_problem(scenario, serving=True)
    assert result.bound == lower_bound(problem).total
