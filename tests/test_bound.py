"""The solver-free lower bound (`planner/bound.py`): never above an optimum, exact where the
relaxation loses nothing, and at least the package a job cannot avoid."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, given, settings

from planner.bound import lower_bound
from planner.cpsat.model import CpModel, SolverSettings
from planner.forced import forced_packages
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
    """With and without the packages that only-there jobs force (planner.forced)."""
    try:
        problem = build_problem(build(make_scenario, instance), serving=True)
    except Infeasible:
        return
    best = optimum(problem)
    if best is not None:
        counts = {k: f.packages for k, f in forced_packages(problem).items()}
        assert lower_bound(problem).total <= lower_bound(problem, counts).total <= best


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


def test_jobs_that_run_only_on_one_pool_force_every_package_they_need(
    make_scenario: Any,
) -> None:
    # two 10 h jobs that only a weekly package runs, 40 days apart: no one package holds
    # both, so every plan buys two (600); the one-job arithmetic alone sees one (300)
    offers = [offer("o", weekly={"price": 300, "stock": 1})]
    jobs = [
        job("a", 10, earliest_start="2026-07-01", deadline="2026-07-03"),
        job("b", 10, earliest_start="2026-08-10", deadline="2026-08-12"),
    ]
    problem = build_problem(make_scenario(offers, jobs, days=60), serving=True)
    assert lower_bound(problem).total == 300
    forced = forced_packages(problem)
    assert {k: (f.packages, f.exact, f.jobs) for k, f in forced.items()} == {
        ("o", "weekly"): (2, True, ("a", "b"))
    }
    counts = {k: f.packages for k, f in forced.items()}
    assert lower_bound(problem, counts).total == optimum(problem) == 600


def test_jobs_that_share_one_package_force_only_it(make_scenario: Any) -> None:
    # the same two jobs three days apart fit in one weekly package: 300, not 600
    offers = [offer("o", weekly={"price": 300, "stock": 1})]
    jobs = [
        job("a", 10, earliest_start="2026-07-01", deadline="2026-07-03"),
        job("b", 10, earliest_start="2026-07-04", deadline="2026-07-06"),
    ]
    problem = build_problem(make_scenario(offers, jobs, days=20), serving=True)
    counts = {k: f.packages for k, f in forced_packages(problem).items()}
    assert counts == {("o", "weekly"): 1}
    assert lower_bound(problem, counts).total == optimum(problem) == 300
