"""The plan's first lines: a purchase that some workloads alone force, and storage the
catalog cannot price, each worked by hand."""

from __future__ import annotations

from typing import Any

from planner.report import headline_warnings
from tests.planning import job, offer, only_on_h200, solved

# seq_len 4096 × micro-batch 8 does not fit an RTX 4090's 24 GB; an A100 80G holds it
BIG = {"seq_len": 4096, "micro_batch": 8}


def test_a_job_that_runs_only_on_a_package_is_named_as_forcing_it(make_scenario: Any) -> None:
    offers = [
        offer("m", weekly={"price": 700, "stock": 1}),
        offer("small", card="rtx4090", hourly={"price": 3, "stock": 4}),
    ]
    s = make_scenario(offers, [job("big", 10, **BIG), job("little", 5)], days=7)
    result = solved(s)
    assert result.plan is not None and result.status == "optimal"
    # the package (700) runs big and, on its spare hours, little for nothing
    assert str(result.plan.total_cost) == "700.00"
    [forced] = result.plan.forced
    assert (forced.offer, forced.mode, forced.packages, forced.workloads) == (
        "m",
        "weekly",
        1,
        ["big"],
    )
    assert str(forced.cost) == "700.00" and forced.exact
    lines = headline_warnings(s, result.plan)
    assert lines[0] == (
        "big can run only on m weekly: it forces 1 weekly package, CNY 700.00, 100% of the "
        "plan; little uses its spare cards"
    )


def test_no_forcing_line_where_every_job_has_a_choice(make_scenario: Any) -> None:
    offers = [
        offer("m", weekly={"price": 700, "stock": 1}),
        offer("h", hourly={"price": 10, "stock": 1}),
    ]
    s = make_scenario(offers, [job("a", 10)], days=7)
    result = solved(s)
    assert result.plan is not None and result.plan.forced == []
    assert not any("run only on" in line for line in headline_warnings(s, result.plan))


def test_disks_without_a_price_are_named_with_their_size(make_scenario: Any) -> None:
    offers = [offer("h", hourly={"price": 10, "stock": 2})]
    s = make_scenario(offers, [job("a", 3, disk_gb=100), job("b", 2)], days=2)
    result = solved(s)
    assert result.plan is not None and str(result.plan.total_cost) == "50.00"
    assert headline_warnings(s, result.plan) == [
        "disk not priced: these workloads state disk_gb on offers whose catalog has no disk "
        "price, so their storage is 0.00 in this plan: h (a 100 GB)"
    ]


def test_priced_disks_are_billed_and_not_warned_about(make_scenario: Any) -> None:
    # 100 GB at 72 per GB-month is 10 an hour: 3 h of work and 3 h of disk, 60
    offers = [{**offer("h", hourly={"price": 10, "stock": 2}), "disk_price_per_gb_month": 72}]
    s = make_scenario(offers, [job("a", 3, disk_gb=100)], days=2)
    result = solved(s)
    assert result.plan is not None and str(result.plan.total_cost) == "60.00"
    assert not any("disk not priced" in line for line in headline_warnings(s, result.plan))


def test_slow_baselines_leave_the_forced_count_its_own_time(
    make_scenario: Any, monkeypatch: Any
) -> None:
    # the baselines of a large quarter can take most of the limit; the forced packages
    # still get their share of it, counted from when they start
    import time

    import planner.solve as solve_module
    from planner.solve import SolveParams, solve

    greedy = solve_module.greedy

    def slow(problem: Any, careful: bool, **kw: Any) -> Any:
        time.sleep(0.6)  # past a tenth of the 2 s limit, counted from the command's start
        return greedy(problem, careful, **kw)

    monkeypatch.setattr(solve_module, "greedy", slow)
    offers = [
        offer("m", weekly={"price": 700, "stock": 1}),
        offer("small", card="rtx4090", hourly={"price": 3, "stock": 4}),
    ]
    s = make_scenario(offers, [job("big", 10, **BIG), job("little", 5)], days=7)
    result = solve(s, SolveParams(time_limit=2, workers=1))
    assert result.plan is not None
    assert [(f.offer, f.packages) for f in result.plan.forced] == [("m", 1)]


def test_the_heuristic_places_jobs_that_run_on_one_pool_as_their_optimum_does(
    make_scenario: Any,
) -> None:
    # two jobs that only a weekly package (300, one card a unit, stock 2) runs, both free
    # from hour 0, a (10 h) due by the end of day 2, b (5 h) by 08:00 of day 1. In order of
    # earliest start, a takes the card at 00:00-10:00 and b, due by 08:00, needs a second
    # unit: 600. The forced packages' optimum runs b at 00:00-05:00, then a: one unit, 300.
    from planner.baseline import greedy
    from planner.forced import forced_packages
    from planner.problem import build_problem

    offers = [offer("m", weekly={"price": 300, "stock": 2})]
    jobs = [
        job("a", 10, deadline="2026-07-03"),
        job("b", 5, deadline="2026-07-01T08:00"),
    ]
    problem = build_problem(make_scenario(offers, jobs, days=7), serving=True)
    alone, _ = greedy(problem, careful=True)
    assert alone is not None and alone.cost(problem) == 600
    forced = forced_packages(problem)
    assert [(f.packages, f.exact) for f in forced.values()] == [(1, True)]
    placed, _ = greedy(problem, careful=True, forced=list(forced.values()))
    assert placed is not None and placed.cost(problem) == 300
    assert placed.starts[1] == 0 and placed.starts[0] >= 5


def test_the_heuristic_waits_for_a_held_card_rather_than_buying_another(
    make_scenario: Any,
) -> None:
    # a (10 h) and c (5 h), both free from 00:00 and due by the end of day 2, on a weekly
    # package only: a takes the card at 00:00-10:00; c's earliest start would need a second
    # unit (600 in all), c after a's run ends needs none: 300
    from planner.baseline import greedy
    from planner.problem import build_problem

    offers = [offer("m", weekly={"price": 300, "stock": 2})]
    jobs = [job("a", 10, deadline="2026-07-03"), job("c", 5, deadline="2026-07-03")]
    problem = build_problem(make_scenario(offers, jobs, days=7), serving=True)
    plan, _ = greedy(problem, careful=True)
    assert plan is not None and plan.cost(problem) == 300
    assert (plan.starts[0], plan.starts[1]) == (0, 10)


def test_money_past_the_quarter_is_said_first_with_its_share_of_the_price(
    make_scenario: Any,
) -> None:
    # A 3-day quarter and a job that only a weekly h200 package (1,400) runs: the package
    # holds 4 days past the horizon's end, 4/7 of its price: 800.00, forced by j.
    s = make_scenario(
        [offer("pkg", card="h200-141g", weekly={"price": 1400, "stock": 1})],
        [only_on_h200("j", 10, deadline="2026-07-03")],
        days=3,
    )
    result = solved(s)
    assert result.plan is not None and str(result.plan.total_cost) == "1400.00"
    lines = headline_warnings(s, result.plan)
    assert lines[0] == (
        "money past the quarter: pkg weekly is held up to 4 day(s) past the horizon's end, "
        "CNY 800.00 of its price pro rata (the purchase is forced by j; its dates are the "
        "plan's choice)"
    )
