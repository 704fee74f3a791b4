"""The next-best config never reads as a cheaper option skipped."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tests.planning import job, offer, solved


def test_a_config_cheaper_alone_but_blocked_is_said_apart(make_scenario: Any) -> None:
    # Two 10-hour jobs, both due in 10 h. "cheap" (5/h) has stock 1, "dear" (8/h) stock 1.
    # Alone each would take cheap: 50. Together one must take dear: 50 + 80 = 130.
    # The job on dear has cheap as "cheaper alone" (saves 80 − 50 = 30), not a next best
    # at −30; its next best that costs at least what it spends is none (dear is dearest).
    offers = [
        offer("cheap", hourly={"price": 5, "stock": 1}),
        offer("dear", hourly={"price": 8, "stock": 1}),
    ]
    jobs = [job(n, 10, deadline="2026-07-01T10:00") for n in ("a", "b")]
    result = solved(make_scenario(offers, jobs, days=1))
    assert result.plan is not None and result.plan.status == "optimal"
    assert result.plan.total_cost == Decimal("130.00")
    on_dear = next(a for a in result.plan.train if a.offer == "dear")
    on_cheap = next(a for a in result.plan.train if a.offer == "cheap")
    assert on_dear.next_best is None
    assert on_dear.cheaper_alone is not None
    assert on_dear.cheaper_alone.saving == Decimal("30.00")
    assert "beside the rest of the plan" in on_dear.cheaper_alone.reason
    # the job on cheap: dear costs 80 alone, 30 more than its 50
    assert on_cheap.cheaper_alone is None
    assert on_cheap.next_best is not None and on_cheap.next_best.extra_cost == Decimal("30.00")


@pytest.mark.slow
def test_next_best_extra_is_never_negative_on_q3_train(cli: Any, tmp_path: Any) -> None:
    import json

    out = tmp_path / "plan.json"
    result = cli(
        "solve",
        "scenarios/q3-train.yaml",
        "--deterministic",
        "--time-limit",
        "30",
        "--workers",
        "2",
        "--json",
        str(out),
    )
    assert result.exit_code == 0, result.output
    plan = json.loads(out.read_text())
    rows = [a for a in plan["assignments"] if a.get("kind", "train") == "train"]
    assert rows
    for a in rows:
        if a["next_best"] is not None:
            assert Decimal(str(a["next_best"]["extra_cost"])) >= 0
        if a["cheaper_alone"] is not None:
            assert Decimal(str(a["cheaper_alone"]["saving"])) > 0
    assert "(-" not in result.output.replace("(−", "(-")


def test_the_cli_says_what_each_figure_is_measured_against(make_scenario: Any, cli: Any) -> None:
    offers = [
        offer("cheap", hourly={"price": 5, "stock": 1}),
        offer("dear", hourly={"price": 8, "stock": 1}),
    ]
    jobs = [job(n, 10, deadline="2026-07-01T10:00") for n in ("a", "b")]
    s = make_scenario(offers, jobs, days=1)
    result = cli("solve", s.path, "--workers", "2", "--deterministic")
    assert result.exit_code == 0, result.output
    assert "next best (+ over cost)" in result.stdout
    # the job on dear spends 80; cheap costs 50 alone, 30 less
    assert "costs 50.00 on its own, 30.00 less than this job's cost in the plan;" in result.stdout


def test_the_next_best_is_another_config_not_the_same_at_another_hour(make_scenario: Any) -> None:
    # A night job (22:00-06:00 windows) on one offer: its configs differ only in the hour
    # its runs start at. None of them is a next best of the one chosen (it was named as
    # its own next best, "a tie").
    night = job("night", 8, daily_hours="22:00-06:00")
    result = solved(make_scenario([offer("o", hourly={"price": 10})], [night], days=3))
    assert result.plan is not None
    [a] = result.plan.train
    assert a.next_best is None and a.cheaper_alone is None


def test_package_configs_are_alternatives_and_their_reasons_are_true(make_scenario: Any) -> None:
    # A 30-hour job on a card sold only by the week (100.00) and by the month (300.00), no
    # hourly offer: the plan buys a week. Its next best is the month bought for it alone,
    # 200.00 more (package configs were left out, and the job was said to have no other
    # config). The week is bought with nothing hourly to rent instead, not as "cheaper than
    # renting the same hours"; the month, not bought, is listed too.
    from planner.problem import build_problem
    from planner.report import decisions, headline_warnings

    o = offer("o", weekly={"price": 100, "stock": 1}, monthly={"price": 300, "stock": 1})
    s = make_scenario([o], [job("big", 30)], days=10)
    result = solved(s)
    plan = result.plan
    assert plan is not None and plan.total_cost == Decimal("100.00")
    [big] = plan.train
    assert big.mode == "weekly" and big.cheaper_alone is None
    assert big.next_best is not None and big.next_best.extra_cost == Decimal("200.00")
    assert "monthly" in big.next_best.config
    lines = decisions(build_problem(s, serving=True), plan)
    [week] = [x for x in lines if x.startswith("o weekly")]
    assert "bought for big: the cheapest way the plan found to run them" in week
    assert "cheaper than renting" not in week
    [month] = [x for x in lines if x.startswith("o monthly")]
    assert "not bought: the plan runs every workload that could use it more cheaply" in month
    [idle] = [w for w in headline_warnings(s, plan) if w.startswith("o weekly")]
    assert "no other config" not in idle  # the month is one
    # sold by the week alone: no other config, and the warning says so without advice
    # that could not help (no later deadline avoids a package where nothing is hourly)
    only = make_scenario([offer("o", weekly={"price": 100, "stock": 1})], [job("big", 30)], days=10)
    plan = solved(only).plan
    assert plan is not None and plan.train[0].next_best is None
    [idle] = [w for w in headline_warnings(only, plan) if w.startswith("o weekly")]
    assert "big has no other config it could rent in its window" in idle
    assert "later deadline" not in idle
