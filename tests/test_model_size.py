"""Past the size gpuplan builds, `solve` shows the best checked baseline with the
relaxation's bound and says why; the size estimate it decides by tracks the real model."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from planner import solve as solve_module
from planner.baseline import greedy
from planner.bound import lower_bound
from planner.cpsat.model import CpModel
from planner.cpsat.variables import estimated_variables
from planner.domain.load import load_scenario
from planner.problem import build_problem
from planner.restrict import LEVELS, top_k
from planner.solve import TECHNIQUES, SolveParams, solve

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
    # without the optional package tried first, whose start is this quarter's optimum
    # (tests/test_optional.py): the shown plan is then a baseline
    params = SolveParams(time_limit=30, workers=2, techniques=TECHNIQUES - {"buy"})
    result = solve(scenario, params)
    assert built == []  # never built
    assert result.status == "feasible" and result.plan is not None
    plan = result.plan
    assert plan.total_cost == min(c for c in (plan.naive_cost, plan.heuristic_cost) if c)
    assert "variables" in plan.baseline_notes["solver"]
    problem = build_problem(scenario, serving=True)
    assert result.bound == lower_bound(problem).total


def test_top_k_keeps_the_hint_and_maps_plans_both_ways() -> None:
    problem = build_problem(load_scenario(ROOT / "scenarios" / "q3.yaml"), serving=True)
    plan, _ = greedy(problem, careful=True)
    assert plan is not None
    restricted = top_k(problem, plan)
    smaller = restricted.problem
    for full, small in zip(problem.jobs, smaller.jobs, strict=True):
        assert set(small.configs) <= set(full.configs)
        assert len(small.configs) <= LEVELS[0][0] + 1
    for full_r, small_r in zip(problem.replica_jobs, smaller.replica_jobs, strict=True):
        assert set(small_r.configs) <= set(full_r.configs)
    assert restricted.to_full(restricted.from_full(plan)) == plan
    assert restricted.from_full(plan).cost(smaller) == plan.cost(problem)


def test_top_k_keeps_fewer_configs_until_the_model_fits() -> None:
    """Each level keeps no more configs than the one before; asked to fit a size between
    two levels' models, it returns the first that fits, with the hint's configs kept."""
    problem = build_problem(load_scenario(ROOT / "scenarios" / "q3.yaml"), serving=True)
    plan, _ = greedy(problem, careful=True)
    assert plan is not None
    sizes = []  # the model's size at each level: `fits` refuses the levels before it
    for level in range(len(LEVELS)):
        seen: list[int] = []

        def fits(p: Any, stop: int = level, seen: list[int] = seen) -> bool:
            seen.append(estimated_variables(p))
            return len(seen) > stop

        top_k(problem, plan, fits)
        sizes.append(seen[-1])
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    limit = (sizes[1] + sizes[2]) // 2 if sizes[1] > sizes[2] else sizes[1]
    restricted = top_k(problem, plan, lambda p: estimated_variables(p) <= limit)
    assert estimated_variables(restricted.problem) <= limit
    assert restricted.to_full(restricted.from_full(plan)) == plan


def test_top_k_keeps_the_spare_cards_of_a_package_bought_anyway() -> None:
    """q3's B300 machine-month is bought whatever the plan (its 70B job runs nowhere
    else): at the fewest configs, each service still keeps its cheapest one on those
    cards, which at the machine's price per card-hour would never rank."""
    problem = build_problem(load_scenario(ROOT / "scenarios" / "q3.yaml"), serving=True)
    b300 = ("jz-b300-machine", "monthly")

    def on(configs: Any) -> bool:
        return any(c.held and (c.offer, c.mode) == b300 for c in configs)

    fewest = top_k(problem, None, lambda p: False)  # every level refused: the fewest
    assert not any(on(r.configs) for r in fewest.problem.replica_jobs)
    kept = top_k(problem, None, lambda p: False, bought=[b300])
    usable = [r for r in problem.replica_jobs if on(r.configs)]
    assert usable and all(
        on(r.configs) for r in kept.problem.replica_jobs if r.name in {u.name for u in usable}
    )


def test_past_the_exact_size_the_restriction_is_searched_and_proven_only_by_the_full_bound(
    monkeypatch: Any,
) -> None:
    """The top-K restriction's own optimum proves nothing of the quarter: its plan is called
    optimal only where it meets the whole quarter's relaxation bound (here it does: one
    monthly H200 package, 10,036.00, is what the relaxation prices too); a bound one yuan
    lower leaves the same plan a checked, feasible one."""
    scenario = load_scenario(ROOT / "scenarios" / "seed-70b-serving.yaml")
    monkeypatch.setattr(solve_module, "EXACT_VARIABLES", 0)
    result = solve(scenario, SolveParams(time_limit=30, workers=2, deterministic=True))
    assert result.plan is not None  # checked by solve
    assert "top-K" in result.plan.baseline_notes["solver"]
    problem = build_problem(scenario, serving=True)
    assert result.bound == lower_bound(problem).total  # the restriction's bound is not shown
    # the optimum (one monthly H200 package, 10,036.00) is among the configs kept
    assert result.plan.total_cost == Decimal("10036.00") == result.bound
    assert result.status == "optimal"
    real = solve_module.lower_bound

    def lower(*args: Any, **kwargs: Any) -> Any:
        bound = real(*args, **kwargs)
        return replace(bound, total=bound.total - 1)

    monkeypatch.setattr(solve_module, "lower_bound", lower)
    result = solve(scenario, SolveParams(time_limit=30, workers=2, deterministic=True))
    assert result.plan is not None and result.plan.total_cost == Decimal("10036.00")
    assert result.bound == Decimal("10035.00") and result.status == "feasible"


def test_without_a_baseline_plan_the_restriction_is_still_searched(monkeypatch: Any) -> None:
    """Past the exact size with neither baseline finding a plan (faked here), the top-K
    restriction is searched without a hint: its plan is a checked plan, optimal only as
    far as the whole quarter's bound proves it."""
    scenario = load_scenario(ROOT / "scenarios" / "seed-70b-serving.yaml")
    monkeypatch.setattr(solve_module, "EXACT_VARIABLES", 0)
    monkeypatch.setattr(solve_module, "greedy", lambda *a, **k: (None, "no plan (faked)"))
    result = solve(scenario, SolveParams(time_limit=30, workers=2, deterministic=True))
    assert result.plan is not None  # checked by solve
    assert result.status == ("optimal" if result.bound == result.plan.total_cost else "feasible")
    assert result.plan.naive_cost is None and result.plan.heuristic_cost is None
    assert "top-K" in result.plan.baseline_notes["solver"]


def test_a_restriction_without_a_plan_proves_nothing(monkeypatch: Any) -> None:
    """Without a baseline plan, a top-K restriction the solver finds infeasible says only
    that no plan was found (exit 3), never that the quarter has none (exit 2)."""

    class Infeasible:
        def __init__(self, problem: Any, cuts: bool = True) -> None:
            pass

        def size(self) -> dict[str, int]:
            return {"variables": 1}

        def solve(self, settings: Any, progress: Any = None, keep: Any = None) -> Any:
            return solve_module.Outcome("infeasible", None, None, None, 0.0, self.size())

    scenario = load_scenario(ROOT / "scenarios" / "seed-70b-serving.yaml")
    monkeypatch.setattr(solve_module, "EXACT_VARIABLES", 0)
    monkeypatch.setattr(solve_module, "greedy", lambda *a, **k: (None, "no plan (faked)"))
    monkeypatch.setattr(solve_module, "CpModel", Infeasible)
    result = solve(scenario, SolveParams(time_limit=30, workers=2, deterministic=True))
    assert result.status == "unknown" and result.plan is None
