"""The plan's first lines: a purchase that some workloads alone force, and storage the
catalog cannot price, each worked by hand."""

from __future__ import annotations

from typing import Any

from planner.report import headline_warnings
from tests.planning import job, offer, solved

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

    def slow(problem: Any, careful: bool) -> Any:
        time.sleep(0.6)  # past a tenth of the 2 s limit, counted from the command's start
        return greedy(problem, careful)

    monkeypatch.setattr(solve_module, "greedy", slow)
    offers = [
        offer("m", weekly={"price": 700, "stock": 1}),
        offer("small", card="rtx4090", hourly={"price": 3, "stock": 4}),
    ]
    s = make_scenario(offers, [job("big", 10, **BIG), job("little", 5)], days=7)
    result = solve(s, SolveParams(time_limit=2, workers=1))
    assert result.plan is not None
    assert [(f.offer, f.packages) for f in result.plan.forced] == [("m", 1)]
