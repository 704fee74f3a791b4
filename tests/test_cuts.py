"""The redundant cuts (`planner/cpsat/cuts.py`) cut off no plan: the least cover equals brute
force, every cut holds at a known feasible plan of the whole q3 quarter, and the optimum with
cuts equals the optimum without them on random small quarters."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from planner import cover
from planner.baseline import greedy
from planner.cpsat.model import CpModel, SolverSettings
from planner.domain.load import load_scenario
from planner.problem import Infeasible, build_problem
from tests.test_planner_properties import build, mixed

ROOT = Path(__file__).resolve().parent.parent
items = st.lists(st.tuples(st.integers(1, 9), st.integers(0, 30)), min_size=1, max_size=3)


def brute_cover(items: list[tuple[int, int]], demand: int, minimum: int) -> int:
    """The least Σ w·r by enumerating every count vector up to what could matter."""
    most = max(demand, minimum)
    best = None
    for counts in itertools.product(range(most + 1), repeat=len(items)):
        covered = sum(c * r for (c, _), r in zip(items, counts, strict=True))
        if covered >= demand and sum(counts) >= minimum:
            cost = sum(w * r for (_, w), r in zip(items, counts, strict=True))
            best = cost if best is None else min(best, cost)
    assert best is not None
    return best


@settings(max_examples=200, deadline=None)
@given(items, st.integers(0, 12), st.integers(0, 4))
def test_least_cover_is_the_brute_force_minimum(
    items: list[tuple[int, int]], demand: int, minimum: int
) -> None:
    assert cover.least_cover(items, demand, minimum) == brute_cover(items, demand, minimum)


@settings(max_examples=200, deadline=None)
@given(items, st.integers(0, 12), st.integers(0, 5))
def test_covers_by_count_are_the_brute_force_minima(
    items: list[tuple[int, int]], demand: int, most: int
) -> None:
    """Exactly n replicas for each n below the last count, at least that many in the last,
    carrying at least each demand up to `demand`."""
    found = cover.covers_by_count(items, demand, most)
    assert found is not None
    top = len(found) - 1
    assert top == max(most, 1) and all(len(row) == demand + 1 for row in found)
    best = [[math.inf] * (demand + 1) for _ in range(top + 1)]
    for counts in itertools.product(range(top + demand + 1), repeat=len(items)):
        n = min(sum(counts), top)
        covered = sum(c * k for (c, _), k in zip(items, counts, strict=True))
        cost = sum(w * k for (_, w), k in zip(items, counts, strict=True))
        for r in range(min(covered, demand) + 1):
            best[n][r] = min(best[n][r], cost)
    assert found == best


@settings(max_examples=200, deadline=None)
@given(items, st.integers(0, 12), st.integers(0, 4))
def test_the_lp_fallback_never_exceeds_the_least_cover(
    items: list[tuple[int, int]], demand: int, minimum: int
) -> None:
    exact = brute_cover(items, demand, minimum)
    assert cover._lp_cover(items, demand, minimum) <= exact


def test_a_large_demand_falls_back_to_the_lp_value_rounded_up() -> None:
    # 2 requests per replica at 3, 5 per replica at 7: the LP's 7/5 per request
    assert cover.least_cover([(2, 3), (5, 7)], 10**6, 1) == 1_400_000
    assert cover.least_cover([(2, 3), (5, 7)], 9, 0) == 13  # DP: 5 + 2 + 2


@pytest.mark.slow
def test_every_cut_holds_at_the_heuristic_plan_of_q3() -> None:
    """Fixing every variable to the heuristic's plan (a complete hint) leaves the model
    with cuts feasible: no cut removes that plan."""
    problem = build_problem(load_scenario(ROOT / "scenarios" / "q3.yaml"), serving=True)
    plan, _ = greedy(problem, careful=True)
    assert plan is not None
    model = CpModel(problem)
    assert model.cuts > 1000  # a cover cut per service and segment, package cuts for 70B
    model.hint(plan)
    model.model.minimize(model.cost)
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 120
    status = solver.solve(model.model)
    assert status == cp_model.OPTIMAL  # the one point left is feasible
    assert round(solver.objective_value) == problem.integer(plan.cost(problem))


def _optimum(problem: Any, with_cuts: bool) -> int | None:
    model = CpModel(problem, cuts=with_cuts)
    outcome = model.solve(SolverSettings(20, 2, 0, deterministic=True))
    assert outcome.status in ("optimal", "infeasible"), outcome.status
    return outcome.objective


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed())
def test_cuts_leave_the_optimum_unchanged(make_scenario: Any, instance: dict[str, Any]) -> None:
    try:
        problem = build_problem(build(make_scenario, instance), serving=True)
    except Infeasible:
        return
    assert _optimum(problem, True) == _optimum(problem, False)


@settings(max_examples=200, deadline=None)
@given(items, st.integers(0, 12), st.integers(0, 4))
def test_the_cheapest_mix_reaches_the_least_cover(
    items: list[tuple[int, int]], demand: int, minimum: int
) -> None:
    counts = cover.cheapest_mix(items, demand, minimum)
    assert counts is not None
    assert sum(c * n for (c, _), n in zip(items, counts, strict=True)) >= demand
    assert sum(counts) >= minimum
    cost = sum(w * n for (_, w), n in zip(items, counts, strict=True))
    assert cost == brute_cover(items, demand, minimum)
