"""The solver-free lower bound (`planner/bound.py`): never above an optimum, exact where the
relaxation loses nothing, and at least the package a job cannot avoid."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, given, settings

from planner.bound import lower_bound
from planner.cpsat.model import CpModel, SolverSettings
from planner.problem import Infeasible, build_problem
from tests import planning
from tests.planning import job, offer
from tests.test_planner_properties import build, mixed

SETTINGS = SolverSettings(time_limit=20, workers=2, seed=0, deterministic=True)


def optimum(problem: Any) -> Fraction | None:
    outcome = CpModel(problem).solve(SETTINGS)
    assert outcome.status in ("optimal", "infeasible"), outcome.status
    return None if outcome.objective is None else Fraction(outcome.objective, problem.money_scale)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed())
def test_the_bound_never_exceeds_the_optimum(make_scenario: Any, instance: dict[str, Any]) -> None:
    try:
        problem = build_problem(build(make_scenario, instance), serving=True)
    except Infeasible:
        return
    best = optimum(problem)
    if best is not None:
        assert lower_bound(problem).total <= best


def test_whole_replicas_on_one_hourly_offer_are_exact(make_scenario: Any) -> None:
    # 2 cards 09:00-12:00 for 3 days at 10 an hour: 2 × 3 h × 3 days × 10 = 180, exactly
    offers = [offer("o", hourly={"price": 10, "stock": 4})]
    s = make_scenario(offers, [planning.reserve("desk", 2, "09:00-12:00", days=3)], days=3)
    problem = build_problem(s, serving=True)
    assert lower_bound(problem).total == optimum(problem) == 180


def test_a_job_that_only_a_package_holds_pays_for_one(make_scenario: Any) -> None:
    # a 5 h job on an offer that sells only daily packages at 300: the bound is the package,
    # though its card-hours at the package's full rate would charge only 5/24 of it
    offers = [offer("o", daily={"price": 300, "stock": 1})]
    problem = build_problem(make_scenario(offers, [job("j", 5)], days=2), serving=True)
    assert lower_bound(problem).total == optimum(problem) == 300
