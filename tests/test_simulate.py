"""`plan simulate`: spot preemptions drawn, not averaged."""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from planner.simulate import simulate, summary
from tests.planning import job, offer, solved

# λ = 0.5 preemptions per hour, checkpoints every 60 min, restart 30 min: the planner's spot
# factor is 1 / (1 + 0.5 × (0.5 + 0.5)) = 2/3, so 20 useful hours are budgeted as 30.
RATE, CHECKPOINT, RESTART = 0.5, 60, 30


def spot_case(make_scenario: Any, deadline: str = "2026-07-05", hourly: float = 10) -> Any:
    offers = [
        offer(
            "o",
            hourly={"price": hourly},
            spot={"price": 2, "preemptions_per_hour": RATE, "restart_minutes": RESTART},
        )
    ]
    jobs = [job("j", 20, checkpoint_every=f"{CHECKPOINT}m", deadline=deadline)]
    s = make_scenario(offers, jobs, days=5)
    result = solved(s)
    assert result.plan is not None
    [a] = result.plan.train
    assert a.mode == "spot" and a.compute_hours == pytest.approx(30.0)
    return s, result.plan


def test_the_simulated_mean_is_the_planners_budget(make_scenario: Any) -> None:
    """E[W + Σ(U·c + r)] = W(1 + λ(c/2 + r)) = W / spot factor: within sampling error."""
    s, plan = spot_case(make_scenario)
    sim = simulate(s, plan, runs=20_000, seed=1)
    [risk] = sim.risks
    mean, std = float(np.mean(risk.compute_hours)), float(np.std(risk.compute_hours))
    assert risk.useful_hours == pytest.approx(20.0)
    assert abs(mean - 30.0) < 4 * std / math.sqrt(sim.runs)
    # Variance of a compound Poisson sum: λW·E[(U·c + r)²] = 10 × (1/3 + 1/2 + 1/4) hours².
    assert std**2 == pytest.approx(10 * (1 / 3 + 0.5 + 0.25), rel=0.05)


def test_a_plan_without_spot_has_no_spread(make_scenario: Any) -> None:
    s = make_scenario([offer("o", hourly={"price": 10})], [job("j", 5)], days=2)
    result = solved(s)
    assert result.plan is not None
    sim = simulate(s, result.plan, runs=500, seed=3)
    assert sim.risks == () and float(np.std(sim.total_cost)) == 0.0
    assert sim.percentile(50) == sim.percentile(95) == float(result.plan.total_cost)


def test_work_that_ends_inside_its_last_held_hour_is_not_late(make_scenario: Any) -> None:
    # 19.7 useful hours budget 29.55 h on spot: held 30 h, so the last hour has 0.45 h to
    # spare. A run whose losses take it to 29.9 h still ends in the planned 30th hour: no
    # slip and no extra cost; past 30 h, one hour more per hour begun
    offers = [offer("o", spot={"price": 2, "preemptions_per_hour": RATE,
                               "restart_minutes": RESTART})]  # fmt: skip
    s = make_scenario(offers, [job("j", 19.7, checkpoint_every=f"{CHECKPOINT}m")], days=5)
    result = solved(s)
    assert result.plan is not None
    [a] = result.plan.train
    assert a.compute_hours == pytest.approx(29.55) and a.hours == 30
    [risk] = simulate(s, result.plan, runs=4_000, seed=5).risks
    expected = np.maximum(1.0, np.ceil(risk.compute_hours - 1e-9)) - 30
    assert np.array_equal(risk.finish_hours, expected)
    assert np.array_equal(risk.extra_cost, expected * 2)
    inside = (risk.compute_hours > 29.55) & (risk.compute_hours <= 30)
    assert inside.any() and not risk.finish_hours[inside].any()


def test_deadline_risk_matches_a_plain_loop(make_scenario: Any) -> None:
    """A deadline 3 h after the planned end is missed when the losses run 3 h past their
    mean; the vectorised draw agrees with a one-run-at-a-time loop of the same model."""
    _, first = spot_case(make_scenario)
    deadline = first.train[0].end + dt.timedelta(hours=3)
    local = deadline.astimezone(ZoneInfo("Asia/Shanghai")).replace(tzinfo=None)
    s, plan = spot_case(make_scenario, deadline=local.isoformat())
    assert plan.train[0].end == first.train[0].end
    sim = simulate(s, plan, runs=20_000, seed=7)
    [risk] = sim.risks
    rng = np.random.default_rng(11)
    misses = 0
    for _ in range(20_000):
        lost = sum(rng.random() + 0.5 for _ in range(rng.poisson(RATE * 20)))
        misses += math.ceil(20 + lost - 1e-9) - 30 > 3
    loop = misses / 20_000
    assert 0.02 < risk.miss_probability < 0.6
    # two independent estimates of one probability: within 4 standard errors of their difference
    assert abs(risk.miss_probability - loop) < 4 * math.sqrt(2 * loop * (1 - loop) / 20_000)


def test_the_same_seed_draws_the_same_quarter(make_scenario: Any) -> None:
    s, plan = spot_case(make_scenario)
    one, two = simulate(s, plan, 300, seed=5), simulate(s, plan, 300, seed=5)
    other = simulate(s, plan, 300, seed=6)
    assert np.array_equal(one.total_cost, two.total_cost)
    assert not np.array_equal(one.total_cost, other.total_cost)
    extra = one.risks[0].extra_cost
    # 2 per unit-hour on spot: each extra (or saved) billed hour is ±2.
    assert np.allclose(extra / 2, np.round(extra / 2))


def test_cli_json_equals_the_library(make_scenario: Any, cli: Any, tmp_path: Any) -> None:
    s, plan = spot_case(make_scenario)
    path = tmp_path / "plan.json"
    path.write_text(plan.model_dump_json())
    result = cli("simulate", s.path, path, "--runs", "200", "--seed", "2", "--json", "-")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    expected = json.loads(json.dumps(summary(simulate(s, plan, 200, 2), "CNY")))
    assert {k: v for k, v in data.items() if k != "scenario"} == expected
    human = cli("simulate", s.path, path, "--runs", "200")
    assert "P(miss)" in human.stdout and "j" in human.stdout


def test_cli_refuses_a_plan_that_fails_the_checker(
    make_scenario: Any, cli: Any, tmp_path: Any
) -> None:
    s, plan = spot_case(make_scenario)
    broken = plan.model_copy(update={"total_cost": plan.total_cost + 1})
    path = tmp_path / "plan.json"
    path.write_text(broken.model_dump_json())
    result = cli("simulate", s.path, path)
    assert result.exit_code == 1 and "not a valid plan" in result.stderr


def test_a_job_after_a_spot_job_is_told_how_often_its_start_slips(make_scenario: Any) -> None:
    """k runs after the spot job j: the share of runs where j finishes past k's planned
    start agrees with a one-run-at-a-time loop of the same model."""
    offers = [
        offer(
            "o",
            hourly={"price": 10},
            spot={"price": 2, "preemptions_per_hour": RATE, "restart_minutes": RESTART},
        )
    ]
    jobs = [
        job("j", 20, checkpoint_every=f"{CHECKPOINT}m", deadline="2026-07-05"),
        job("k", 2, after=["j"], deadline="2026-07-05"),
    ]
    s = make_scenario(offers, jobs, days=5)
    result = solved(s)
    assert result.plan is not None
    j, k = sorted(result.plan.train, key=lambda a: a.workload)
    assert j.mode == "spot" and k.start >= j.end
    sim = simulate(s, result.plan, runs=20_000, seed=3)
    [risk] = sim.risks
    assert risk.successors == (("k", k.start),)
    gap = (k.start - j.end) / dt.timedelta(hours=1)
    rng = np.random.default_rng(11)
    late = 0
    for _ in range(20_000):
        lost = sum(rng.random() + 0.5 for _ in range(rng.poisson(RATE * 20)))
        late += math.ceil(20 + lost - 1e-9) - 30 > gap
    loop = late / 20_000
    slips = risk.late_past(k.start)
    assert 0.02 < slips < 0.9
    assert abs(slips - loop) < 4 * math.sqrt(2 * loop * (1 - loop) / 20_000)
    [entry] = summary(sim, "CNY")["spot_workloads"]  # type: ignore[index]
    assert entry["successors"] == [
        {
            "workload": "k",
            "planned_start": k.start.isoformat(),
            "delay_probability": round(slips, 4),
        }
    ]
