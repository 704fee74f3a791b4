"""The neighbourhoods of the large-neighbourhood search (planner/cpsat/lns.py): what a
service's month and a bought package free, and that a month's cut of the model repairs a
plan that is bad in that month only, as a plan of the full model."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ortools.sat.python import cp_model

from planner.check import check_plan
from planner.cpsat.hoods import decisions, neighbourhoods
from planner.cpsat.lns import Draw, Worker, _Values, _values
from planner.cpsat.model import CpModel, SolverSettings
from planner.pricing import breakdown
from planner.problem import build_problem
from planner.solution import Solution, to_plan
from tests.planning import forcing_fortnight, offer, reserve

SETTINGS = SolverSettings(time_limit=6, workers=1, seed=3, deterministic=True)
DAYS = 30


def _desk(make_scenario: Any) -> Any:
    # a one-card desk 09:00-12:00 every day for 30 days, on cards at 10/h or 20/h: the
    # optimum rents the cheap ones, 30 × 3 h × 10 = 900 (no setup hours)
    offers = [
        offer("cheap", hourly={"price": 10, "stock": 2}),
        offer("dear", hourly={"price": 20, "stock": 2}),
    ]
    return build_problem(make_scenario(offers, [reserve(days=DAYS)], days=DAYS), serving=True)


def _dear_until(problem: Any, best: Solution, hour: int) -> Solution:
    """`best` with the desk on the dear offer in every segment before `hour`."""
    configs = problem.replica_jobs[0].configs
    dear = next(k for k, c in enumerate(configs) if c.offer == "dear")
    replicas = {}
    for (j, k, s), n in best.replicas.items():
        early = problem.segments[s][0] < hour
        replicas[(j, dear if early else k, s)] = replicas.get((j, dear if early else k, s), 0) + n
    return Solution(best.configs, best.starts, best.packages, replicas)


def test_a_month_frees_exactly_its_services_replicas_in_its_hours(make_scenario: Any) -> None:
    problem = _desk(make_scenario)
    model = CpModel(problem)
    months = {h.name: h for h in neighbourhoods(model) if h.kind == "month"}
    # 720 hours: four-week months begin every two weeks, at hours 0 and 336
    assert sorted(months) == ["desk hours 0-672", "desk hours 336-720"]
    v = model.v
    expected = {
        x.index
        for table in (v.replicas, v.starts, v.held_starts)
        for (_, _, s), x in table.items()
        if problem.segments[s][0] < 672 and problem.segments[s][1] > 0
    }
    assert months["desk hours 0-672"].free == expected
    assert (
        0 < len(expected) < len(next(h for h in neighbourhoods(model) if h.kind == "service").free)
    )


def test_the_month_of_a_bad_fortnight_repairs_it_and_the_other_month_proves_it_cannot(
    make_scenario: Any,
) -> None:
    problem = _desk(make_scenario)
    optimum = CpModel(problem).solve(SETTINGS)
    assert optimum.status == "optimal" and optimum.solution is not None
    assert optimum.solution.cost(problem) == 900
    bad = _dear_until(problem, optimum.solution, 24 * 10)  # ten days dear: 900 + 300
    assert bad.cost(problem) == 1200
    model = CpModel(problem)
    model.model.minimize(model.cost)
    values = _values(model, bad)
    assert values is not None
    worker = Worker(model.model.proto, frozenset(decisions(model)), model.cuts)
    months = {h.name: h for h in neighbourhoods(model) if h.kind == "month"}
    scale = problem.money_scale

    def solve(name: str) -> Any:
        return worker.solve(Draw(values, tuple(sorted(months[name].free)), 5, 0, True))

    early, late = solve("desk hours 0-672"), solve("desk hours 336-720")
    # the first month holds the dear days: its cut finds the optimum, a plan of the full
    # model that passes the checker
    assert early.objective == 900 * scale and early.values is not None
    found, _ = model._decode(_Values(early.values))
    assert found.cost(problem) == Fraction(900)
    plan = to_plan(problem, found, "feasible")
    plan = plan.model_copy(update={"cost_breakdown": breakdown(problem, found, plan)})
    assert check_plan(problem.scenario, plan).ok
    # the second month begins on day 14, after the dear days: nothing to save there, and
    # its cut proves it
    assert late.objective == 1200 * scale and late.status == cp_model.OPTIMAL


def test_a_package_frees_its_pool_its_jobs_and_the_weeks_around_it(make_scenario: Any) -> None:
    offers, workloads = forcing_fortnight()
    problem = build_problem(make_scenario(offers, workloads, days=14), serving=True)
    model = CpModel(problem)
    best = model.solve(SETTINGS)
    assert best.solution is not None and best.solution.cost(problem) == 1736
    assert best.solution.packages == {("pkg", "weekly"): {0: 1}}
    hoods = [h for h in neighbourhoods(model, best.solution) if h.kind == "package"]
    assert [h.name for h in hoods] == ["pkg weekly from 2026-07-01"]
    free = hoods[0].free
    v = model.v
    purchases = {x.index for x in v.packages[("pkg", "weekly")].values()}
    assert purchases <= free  # every day's purchase of its pool
    assert {v.start[0].index, *(x.index for x in v.choose[0])} <= free  # the job it holds
    # the replicas of the week after its last day (days 7-13) are free; none of another
    # pool's purchases is
    late = {x.index for (_, _, s), x in v.replicas.items() if problem.segments[s][0] >= 7 * 24}
    assert late and late <= free
    others = {
        x.index for key, b in v.packages.items() if key != ("pkg", "weekly") for x in b.values()
    }
    assert not others & free


def test_the_search_repairs_the_bad_fortnight_alike_on_every_run(make_scenario: Any) -> None:
    """From the plan dear for ten days, a deterministic budget and a fixed seed: the optimum
    900, by the same draws on both runs."""
    from planner.cpsat.lns import improve

    problem = _desk(make_scenario)
    optimum = CpModel(problem).solve(SETTINGS)
    assert optimum.solution is not None
    bad = _dear_until(problem, optimum.solution, 24 * 10)
    start = round(bad.cost(problem) * problem.money_scale)
    runs = [improve(CpModel(problem), bad, start, SETTINGS) for _ in range(2)]
    (first, objective, _, stats), (second, _, _, again) = runs
    assert first == second and first.cost(problem) == objective / problem.money_scale == 900
    assert stats.tried == again.tried and stats.improved == again.improved
