"""One optional package bought first (`planner/optional.py`): a start for the search that
buys a package no single workload fills, planned as the per-service start and checked like
any plan."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import planner.optional as optional
import planner.solve as solve_module
from planner.baseline import greedy
from planner.bound import credited, sharers
from planner.domain.load import load_scenario
from planner.optional import tried
from planner.problem import build_problem
from planner.served import improved, package_fits
from planner.solve import TECHNIQUES, SolveParams, checked_solution, solve
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


def test_the_days_near_the_best_pass_are_planned_through(make_scenario: Any) -> None:
    # three weeks; both jobs must run on day 10 (their windows), a weekly package of the
    # 2-card machine (30) holds them both if bought on days 4-10. The passes try days 0
    # and 14 (every other 7th day) and then 7: only 7 holds day 10 (30 against 70 for the
    # others), and of the days near it, 4 is the first that also does (a tie: the
    # earliest day). The heuristic alone rents both: 40
    offers = [
        {**offer("m", weekly={"price": 30, "stock": 1}), "unit_cards": 2},
        offer("o", hourly={"price": 1, "stock": 4}),
    ]
    window = {"earliest_start": "2026-07-11", "deadline": "2026-07-12"}
    jobs = [planning.job(name, 20, **window) for name in ("a", "b")]
    problem = build_problem(make_scenario(offers, jobs, days=21), serving=True)
    found = tried(problem, [], credited(problem))
    assert found is not None
    plan, key, day = found
    assert (key, day) == (("m", "weekly"), 4)
    checked = checked_solution(problem, plan, {}, "bought")
    assert checked is not None and checked.cost == 30


def test_no_time_or_no_passes_tries_nothing(make_scenario: Any) -> None:
    s = _pair(make_scenario)
    problem = build_problem(s, serving=True)
    pools = credited(problem)
    assert tried(problem, [], pools, until=0.0) is None  # long past
    assert tried(problem, [], pools, passes=0) is None


def test_the_seeds_70b_service_on_one_monthly_h200(monkeypatch: Any) -> None:
    # the seeds' worked example: 40 requests in flight of a 70B model for 30 days, one
    # H200 replica. The heuristic rents it hourly (10,050.74); bought first, the monthly
    # card (10,036) is the bound itself: proven optimal, with no model built
    monkeypatch.setattr(solve_module, "MAX_VARIABLES", 10)  # no model: the starts alone
    s = load_scenario(
        Path(__file__).resolve().parent.parent / "scenarios" / "seed-70b-serving.yaml"
    )
    result = solve(s, SolveParams(time_limit=30, workers=2))
    assert result.plan is not None and result.status == "optimal"
    assert result.plan.total_cost == 10036 < result.plan.heuristic_cost
    assert [(r.offer, r.mode) for r in result.plan.rentals] == [("jz-h200", "monthly")]


def _desks(make_scenario: Any, b_cards: int = 1) -> Any:
    # two desks of one a100 card all day for two days, and a third on an h200 card; each
    # card rented hourly at 1, or a daily package of a 2-card a100 machine at 30 (0.625 a
    # card-hour). Alone a desk pays 24 a day rented against 30 for the machine; the two
    # a100 desks together fill it: 30 a day instead of 48
    offers = [
        {**offer("m", daily={"price": 30, "stock": 1}), "unit_cards": 2},
        offer("o", hourly={"price": 1, "stock": 4}),
        offer("h", card="h200-141g", hourly={"price": 1, "stock": 4}),
    ]
    desks = [
        planning.reserve("a", 1, "00:00-24:00", days=2),
        planning.reserve("b", b_cards, "00:00-24:00", days=2),
        {**planning.reserve("c", 1, "00:00-24:00", days=2), "card": "h200-141g"},
    ]
    return make_scenario(offers, desks, days=2)


def test_the_services_a_pool_would_serve_come_first(make_scenario: Any) -> None:
    # at the machine's full rate each a100 desk saves 24 × (1 - 0.625) = 9 a day (a tie:
    # by order); the h200 desk cannot use its cards. With two cards, desk b saves 18 a day
    # and comes first
    problem = build_problem(_desks(make_scenario), serving=True)
    assert sharers(problem, ("m", "daily")) == [0, 1]
    problem = build_problem(_desks(make_scenario, b_cards=2), serving=True)
    assert sharers(problem, ("m", "daily")) == [1, 0]


def test_a_package_is_tried_on_the_start_with_its_sharers_replanned(make_scenario: Any) -> None:
    # the start rents every desk: 3 desks × 2 days × 24 = 144. With the machine bought on
    # day 0 and the a100 desks replanned on it in turn, day 0 costs 30 for them instead
    # of 48: 126. A second package laid end to end with it (day 1) pays as well: 108, the
    # optimum (the h200 desk rents 48 whatever), and the checker agrees
    s = _desks(make_scenario)
    problem = build_problem(s, serving=True)
    heuristic, _ = greedy(problem, careful=True)
    assert heuristic is not None
    start = improved(problem, heuristic) or heuristic
    assert start.cost(problem) == 144 and not start.packages
    key = ("m", "daily")
    on_day_0 = replace(start, packages={key: {0: 1}})
    moved = improved(problem, on_day_0, sharers(problem, key))
    assert moved is not None and moved.cost(problem) == 126
    assert improved(problem, on_day_0, []) is None  # no replica job replanned
    # the machine's stock is one unit: a second package on day 0 would break it
    assert not package_fits(problem, on_day_0, key, 0)
    assert package_fits(problem, on_day_0, key, 1)
    found = tried(problem, [], [key], start=start)
    assert found is not None and found[0].cost(problem) == 108
    assert found[0].packages == {key: {0: 1, 1: 1}}
    checked = checked_solution(problem, found[0], {}, "bought")
    assert checked is not None and checked.cost == 108
    assert planning.solved(s).plan.total_cost == 108  # type: ignore[union-attr]


def test_a_package_on_the_start_keeps_to_its_stock(make_scenario: Any) -> None:
    # two one-card desks all day for two days; a one-card daily package at 20 (stock 1) or
    # cards at 1 an hour. The start holds the package on both days for one desk and rents
    # the other (20 + 24 a day: 88); another package on a day already held would break the
    # stock, so none is added and the checker takes the plan: 88
    offers = [
        offer("m", daily={"price": 20, "stock": 1}),
        offer("o", hourly={"price": 1, "stock": 8}),
    ]
    desks = [planning.reserve(name, 1, "00:00-24:00", days=2) for name in "ab"]
    problem = build_problem(make_scenario(offers, desks, days=2), serving=True)
    heuristic, _ = greedy(problem, careful=True)
    assert heuristic is not None
    start = improved(problem, heuristic) or heuristic
    found = tried(problem, [], credited(problem), start=start)
    assert found is not None and all(n == 1 for n in found[0].packages[("m", "daily")].values())
    checked = checked_solution(problem, found[0], {}, "bought")
    assert checked is not None and checked.cost == 88


KEY = ("o", "monthly")


def test_the_days_that_pay_next_are_stacked_too(monkeypatch: Any) -> None:
    """Not only the cheapest day on the start is stacked: the next that pay are too, and
    the cheapest stack wins. On a made-up price table, one package from day 56 (85) beats
    one from day 28 (90), but day 28 with a second laid end to end (28 and 58: 70) beats
    day 56 with its own (26 and 56: 80). Stacking the cheapest day alone ends at 80."""

    @dataclass(frozen=True)
    class Plan:
        packages: dict[Any, dict[int, int]]

        def cost(self, problem: Any) -> Fraction:
            days = frozenset(d for held in self.packages.values() for d in held)
            table = {(): 100, (28,): 90, (56,): 85, (26, 56): 80, (28, 58): 70}
            return Fraction(table.get(tuple(sorted(days)), 120))

    class Quarter:
        pools = {KEY: type("Pool", (), {"days": 30})()}
        axis = type("Axis", (), {"days": 92})()

    monkeypatch.setattr(optional, "sharers", lambda problem, key: [])
    monkeypatch.setattr(optional, "package_fits", lambda *a: True)
    monkeypatch.setattr(optional, "improved", lambda problem, plan, *a: plan)
    monkeypatch.setattr(optional, "bought_first", lambda *a: None)
    monkeypatch.setattr(optional, "STEP", 14)  # days 28 and 56 first (the middle: 31)
    found = optional.tried(Quarter(), [], [KEY], passes=2, start=Plan({}))  # type: ignore[arg-type]
    assert found is not None
    assert found[0].packages == {KEY: {28: 1, 58: 1}}
    monkeypatch.setattr(optional, "STACKED", 1)
    found = optional.tried(Quarter(), [], [KEY], passes=2, start=Plan({}))  # type: ignore[arg-type]
    assert found is not None and found[0].cost(None) == 80
