"""The large-neighbourhood search (planner/cpsat/lns.py): from a worse plan it only ever
improves, its plans pass the checker, and a fixed seed and deterministic budget give the
same plan."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from planner.baseline import greedy
from planner.check import check_plan
from planner.cpsat.hoods import neighbourhoods
from planner.cpsat.lns import improve
from planner.cpsat.model import CpModel, SolverSettings
from planner.pricing import breakdown
from planner.problem import build_problem
from planner.solution import to_plan
from tests.planning import job, offer, reserve

SETTINGS = SolverSettings(time_limit=6, workers=1, seed=3, deterministic=True)


def _problem(make_scenario: Any) -> Any:
    # two 10 h jobs due by the end of day one and a desk 09:00-12:00 for two days, hourly
    # at 10/h; a daily package of one card costs 150. The naive plan rents everything by
    # the hour: 200 + 60 = 260. The cheapest holds one package on day one for both jobs back
    # to back (20 h; the desk's 3 h cannot fit beside them) and rents the desk: 150 + 60
    # = 210
    offers = [offer("o", hourly={"price": 10, "stock": 4}, daily={"price": 150, "stock": 1})]
    jobs = [
        job("a", 10, deadline="2026-07-02"),
        job("b", 10, deadline="2026-07-02"),
        reserve("desk", cards=1, hours="09:00-12:00", days=2),
    ]
    return build_problem(make_scenario(offers, jobs, days=2), serving=True)


def test_the_search_improves_a_naive_plan_to_the_optimum(make_scenario: Any) -> None:
    problem = _problem(make_scenario)
    naive, _ = greedy(problem, careful=False)
    assert naive is not None and naive.cost(problem) == 260
    model = CpModel(problem)
    seen: list[int] = []
    start = round(naive.cost(problem) * problem.money_scale)
    found, objective, _, stats = improve(model, naive, start, SETTINGS, seen.append)
    assert found.cost(problem) == objective / problem.money_scale == Fraction(210)
    optimum = CpModel(problem).solve(SETTINGS)
    assert optimum.status == "optimal" and optimum.objective == objective
    assert seen == sorted(seen, reverse=True) and all(s < start for s in seen)
    assert sum(stats.improved.values()) == len(seen) and sum(stats.tried.values()) >= len(seen)
    plan = to_plan(problem, found, "feasible")
    plan = plan.model_copy(update={"cost_breakdown": breakdown(problem, found, plan)})
    assert check_plan(problem.scenario, plan).ok


def test_the_same_seed_gives_the_same_plan(make_scenario: Any) -> None:
    problem = _problem(make_scenario)
    naive, _ = greedy(problem, careful=False)
    assert naive is not None
    start = round(naive.cost(problem) * problem.money_scale)
    runs = [improve(CpModel(problem), naive, start, SETTINGS)[0] for _ in range(2)]
    assert runs[0] == runs[1]


def test_every_workload_is_in_a_neighbourhood_of_its_own(make_scenario: Any) -> None:
    problem = _problem(make_scenario)
    hoods = neighbourhoods(CpModel(problem))
    names = {(h.kind, h.name) for h in hoods}
    assert {("job", "a"), ("job", "b"), ("service", "desk"), ("pool", "o daily")} <= names
    assert all(h.free for h in hoods)


@pytest.mark.slow
def test_solve_with_a_share_for_the_search_gives_a_checked_plan_deterministically() -> None:
    from planner.domain.load import load_scenario
    from planner.solve import SolveParams, solve
    from tests.conftest import REPO

    s = load_scenario(REPO / "scenarios" / "q3-train.yaml")
    params = SolveParams(time_limit=2, workers=1, seed=0, deterministic=True, lns_share=0.5)
    first, second = solve(s, params), solve(s, params)
    assert first.plan is not None and first.inconsistency is None
    assert first.plan.heuristic_cost is not None
    assert first.plan.total_cost <= first.plan.heuristic_cost
    assert check_plan(s, first.plan).ok
    assert second.plan is not None
    assert second.plan.model_dump(exclude={"solve_seconds"}) == first.plan.model_dump(
        exclude={"solve_seconds"}
    )


def test_rounds_in_processes_reach_the_optimum_and_pass_the_checker(make_scenario: Any) -> None:
    """Two neighbourhoods at a time, each solved in a local process from a parsed copy of
    the model: the naive 260 falls to the optimum 210, and the plan passes the checker."""
    from planner.parallel import Executor, Kind

    problem = _problem(make_scenario)
    naive, _ = greedy(problem, careful=False)
    assert naive is not None
    start = round(naive.cost(problem) * problem.money_scale)
    two = Executor(Kind.local, jobs=2)
    found, objective, _, stats = improve(CpModel(problem), naive, start, SETTINGS, None, two)
    assert found.cost(problem) == objective / problem.money_scale == Fraction(210)
    assert sum(stats.tried.values()) >= 2
    plan = to_plan(problem, found, "feasible")
    plan = plan.model_copy(update={"cost_breakdown": breakdown(problem, found, plan)})
    assert check_plan(problem.scenario, plan).ok


@pytest.mark.slow
def test_rounds_on_ray_give_the_plan_of_the_local_rounds(
    make_scenario: Any, ray_here: None
) -> None:
    """The same seed and deterministic budget, two workers each: Ray actors and local
    processes draw the same neighbourhoods, solve them alike and keep the same plan."""
    from planner.parallel import Executor, Kind

    problem = _problem(make_scenario)
    naive, _ = greedy(problem, careful=False)
    assert naive is not None
    start = round(naive.cost(problem) * problem.money_scale)
    runs = [
        improve(CpModel(problem), naive, start, SETTINGS, None, Executor(kind, jobs=2))
        for kind in (Kind.local, Kind.ray)
    ]
    (local, local_objective, _, local_stats), (ray, ray_objective, _, ray_stats) = runs
    assert local == ray and local_objective == ray_objective
    assert local_stats.tried == ray_stats.tried and local_stats.improved == ray_stats.improved


def test_a_wall_budget_spent_on_the_set_up_solves_no_neighbourhood(
    make_scenario: Any, monkeypatch: Any
) -> None:
    """Under a wall-clock budget the workers' set-up counts: where it takes the whole budget,
    no neighbourhood is solved and the incumbent comes back as it was (a 0.5 s budget
    after 6 s of set-up had ended a 60 s command 8 s late)."""
    import time

    from planner.cpsat import lns

    problem = _problem(make_scenario)
    naive, _ = greedy(problem, careful=False)
    assert naive is not None
    built = lns.Worker.__init__

    def slow(self: Any, *args: Any) -> None:
        built(self, *args)
        time.sleep(0.6)

    def never(self: Any, draw: Any) -> Any:
        raise AssertionError("a neighbourhood solved past the budget")

    monkeypatch.setattr(lns.Worker, "__init__", slow)
    monkeypatch.setattr(lns.Worker, "solve", never)
    wall = SolverSettings(time_limit=0.5, workers=1, seed=3, deterministic=False)
    start = round(naive.cost(problem) * problem.money_scale)
    found, objective, terms, stats = improve(CpModel(problem), naive, start, wall)
    assert (found, objective, terms) == (naive, start, {}) and not stats.tried


def test_the_search_is_not_started_with_less_left_than_its_set_up(
    make_scenario: Any, monkeypatch: Any
) -> None:
    import planner.solve as solve_module
    from planner.cpsat.model import Outcome
    from planner.solve import LNS_LEAST, SolveParams

    problem = _problem(make_scenario)
    naive, _ = greedy(problem, careful=False)
    assert naive is not None
    outcome = Outcome("feasible", None, None, None, 1.0, {})

    def never(*args: Any, **kw: Any) -> Any:
        raise AssertionError("the neighbourhood search started")

    monkeypatch.setattr(solve_module, "improve", never)
    monkeypatch.setattr(solve_module, "search_seconds", lambda *a: LNS_LEAST - 0.1)
    params = SolveParams(time_limit=60, workers=1)
    found = solve_module._improve(CpModel(problem), outcome, naive, params, 0.5, 0.0, 3, print)
    assert found is outcome
    monkeypatch.setattr(solve_module, "search_seconds", lambda *a: LNS_LEAST)
    with pytest.raises(AssertionError, match="started"):
        solve_module._improve(CpModel(problem), outcome, naive, params, 0.5, 0.0, 3, print)


def test_the_rounds_keep_back_what_a_round_takes_beyond_its_solves(
    make_scenario: Any, monkeypatch: Any
) -> None:
    """Each round takes longer than its longest solve (the neighbourhoods' models are cut
    out of the full one first); the search keeps the most it has seen back from the next
    round, so the last round ends within the wall budget. On a clock of its own: every solve
    uses its whole step and the round 0.4 s more."""
    from ortools.sat.python import cp_model

    from planner.cpsat import lns

    class Clock:
        now = 0.0

        def perf_counter(self) -> float:
            return self.now

    clock = Clock()
    problem = _problem(make_scenario)
    naive, _ = greedy(problem, careful=False)
    assert naive is not None

    def solve(self: Any, draw: Any) -> Any:
        clock.now += draw.step + 0.4
        return lns.Found(int(cp_model.UNKNOWN), None, None, draw.step)

    monkeypatch.setattr(lns, "time", clock)
    monkeypatch.setattr(lns.Worker, "solve", solve)
    wall = SolverSettings(time_limit=3.0, workers=1, seed=3, deterministic=False)
    start = round(naive.cost(problem) * problem.money_scale)
    _, objective, _, stats = improve(CpModel(problem), naive, start, wall)
    assert objective == start and sum(stats.tried.values()) >= 1
    # (given all that was left, the last round had ended at 3.4 s, 0.4 s past the budget)
    assert clock.now <= 3.0


@pytest.mark.parametrize("limit", [1.0, 4.3])
def test_a_solve_counts_the_cut_of_its_model_within_its_step(
    make_scenario: Any, monkeypatch: Any, limit: float
) -> None:
    """Cutting a neighbourhood's model out of the full one takes wall time before the solver
    starts (seconds on large quarters). The first round has no overhead measured yet, so the
    worker itself takes its cut from its solve's limit: the first round ends within the
    budget; and no round starts with less left than a cut takes (4.3 s: rounds of 2 s, then
    0.3 s left). On a clock of its own: every cut takes 0.4 s, every solve its whole limit."""
    from types import SimpleNamespace

    from ortools.sat.python import cp_model

    from planner.cpsat import lns
    from planner.cpsat.cut import Cut

    class Clock:
        now = 0.0

        def perf_counter(self) -> float:
            return self.now

    clock = Clock()

    class Solver:
        def __init__(self) -> None:
            self.parameters = cp_model.CpSolver().parameters
            self.wall_time = 0.0

        def solve(self, model: Any) -> int:
            self.wall_time = self.parameters.max_time_in_seconds
            clock.now += self.wall_time
            return int(cp_model.UNKNOWN)

    real_cut = Cut.model

    def cut(self: Any, values: Any, free: Any) -> Any:
        clock.now += 0.4
        return real_cut(self, values, free)

    problem = _problem(make_scenario)
    naive, _ = greedy(problem, careful=False)
    assert naive is not None
    fake = SimpleNamespace(**{k: getattr(cp_model, k) for k in dir(cp_model) if k.isupper()})
    fake.CpModel, fake.CpSolver = cp_model.CpModel, Solver
    monkeypatch.setattr(lns, "time", clock)
    monkeypatch.setattr(lns, "cp_model", fake)
    monkeypatch.setattr(Cut, "model", cut)
    wall = SolverSettings(time_limit=limit, workers=1, seed=3, deterministic=False)
    start = round(naive.cost(problem) * problem.money_scale)
    _, objective, _, stats = improve(CpModel(problem), naive, start, wall)
    assert objective == start and sum(stats.tried.values()) >= 1
    # (the solve's limit had been the whole step: the round ended at 1.4 s; a round started
    # with 0.3 s left would end at 4.41 s)
    assert clock.now <= limit
