"""One optional package bought first (`planner/optional.py`): a start for the search that
buys a package no single workload fills, planned as the per-service start and checked like
any plan."""

from __future__ import annotations

from typing import Any

from planner.baseline import greedy
from planner.bound import credited
from planner.optional import tried
from planner.problem import build_problem
from planner.solve import TECHNIQUES, checked_solution
from tests import planning
from tests.planning import offer


def _pair(make_scenario: Any, hours: float = 20, price: int = 30) -> Any:
    # two 1-card jobs of `hours` each, any time in four days; a100s rented hourly at 1, or
    # a daily package of a 2-card machine at `price` that holds both at once. Alone, a job
    # pays 20 rented against 30 for a package of its own, so the heuristic rents both (40);
    # together they fill one package: 30, the optimum (40 card-hours cost 40 rented, and
    # any plan with a package pays its 30)
    offers = [
        {**offer("m", daily={"price": price, "stock": 1}), "unit_cards": 2},
        offer("o", hourly={"price": 1, "stock": 4}),
    ]
    jobs = [planning.job(name, hours, deadline="2026-07-05") for name in ("a", "b")]
    return make_scenario(offers, jobs, days=4)


def test_a_package_two_jobs_share_is_bought_first(make_scenario: Any) -> None:
    s = _pair(make_scenario)
    problem = build_problem(s, serving=True)
    heuristic, _ = greedy(problem, careful=True)
    assert heuristic is not None and heuristic.cost(problem) == 40
    pools = credited(problem)
    assert pools == [("m", "daily")]
    found = tried(problem, [], pools)
    assert found is not None
    plan, key, day = found
    assert key == ("m", "daily") and day == 0  # the first day on a tie
    assert plan.packages == {key: {0: 1}}
    checked = checked_solution(problem, plan, {}, "bought")
    assert checked is not None and checked.cost == 30
    result = planning.solved(s)
    assert result.plan is not None and result.plan.total_cost == 30
    assert result.plan.status == "optimal"


def test_no_pool_is_credited_where_its_cards_save_nothing(make_scenario: Any) -> None:
    # at 60 a day the package's card-hour (1.25) costs more than a rented one: nothing to try
    s = _pair(make_scenario, price=60)
    problem = build_problem(s, serving=True)
    assert credited(problem) == []


def test_the_solve_starts_from_the_bought_plan(make_scenario: Any) -> None:
    # the first checked plan a deterministic solve reports is the bought one (30); without
    # the technique, the heuristic's (40)
    s = _pair(make_scenario)
    assert planning.first_start(s, TECHNIQUES) == (30, "the checked bought plan")
    cost, what = planning.first_start(s, TECHNIQUES - {"buy"})
    assert cost == 40 and "bought" not in what
