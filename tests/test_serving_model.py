"""Serving and reserved cards in the CP-SAT model, on hand-worked instances (solver level:
plans with replicas are not yet assembled, checked or shown; that comes next)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from planner.cpsat.model import CpModel, SolverSettings
from planner.problem import build_problem
from tests import planning
from tests.planning import job, offer

SETTINGS = SolverSettings(time_limit=20, workers=2, seed=0, deterministic=True)


def reserve(name: str, cards: int, hours: str = "00:00-24:00", **fields: Any) -> dict[str, Any]:
    """People's cards for July, all day unless `hours` says otherwise."""
    return planning.reserve(name, cards, hours, days=30, **fields)


def optimum(s: Any) -> tuple[Fraction, Any, Any]:
    problem = build_problem(s, serving=True)
    outcome = CpModel(problem).solve(SETTINGS)
    assert outcome.status == "optimal" and outcome.solution is not None
    cost = outcome.solution.cost(problem)
    assert cost == Fraction(outcome.objective or 0, problem.money_scale)  # decoded == objective
    return cost, outcome.solution, problem


def test_flat_demand_of_three_takes_three_monthly_packages(make_scenario: Any) -> None:
    # 3 cards all day for 30 days: hourly 3 × 720 × 10 = 21,600; monthly 5,000 each < 7,200.
    offers = [offer("o", hourly={"price": 10, "stock": 8}, monthly={"price": 5000, "stock": 8})]
    cost, solution, _ = optimum(make_scenario(offers, [reserve("devs", 3)], days=30))
    assert cost == 15_000
    assert solution.packages == {("o", "monthly"): {0: 3}}


def test_day_peak_on_hourly_over_a_package_base(make_scenario: Any) -> None:
    # 1 card all day + 2 more 08:00-20:00. A package (5,000 = 500 h of hourly) beats 720 h of
    # hourly for the base card, but not 360 h for each day card: 5,000 + 2 × 360 × 10 = 12,200.
    offers = [offer("o", hourly={"price": 10, "stock": 8}, monthly={"price": 5000, "stock": 8})]
    peak = [reserve("base", 1), reserve("day", 2, "08:00-20:00")]
    cost, solution, _ = optimum(make_scenario(offers, peak, days=30))
    assert cost == 12_200
    assert solution.packages == {("o", "monthly"): {0: 1}}


def test_setup_moves_the_break_even(make_scenario: Any) -> None:
    # One week: 1 card all day + 2 cards 08:00-20:00; hourly 10, a weekly package 900.
    # Base card: 900 < 168 h × 10. Day cards: 7 × 12 h × 10 = 840 < 900 → hourly: 2,580.
    offers = [offer("o", hourly={"price": 10, "stock": 8}, weekly={"price": 900, "stock": 8})]
    week = [
        reserve("base", 1, end="2026-07-08"),
        reserve("day", 2, "08:00-20:00", end="2026-07-08"),
    ]
    cost, solution, _ = optimum(make_scenario(offers, week, days=7))
    assert cost == 2580 and solution.packages == {("o", "weekly"): {0: 1}}
    # With 30 min of setup each daily start bills ceil(0.5) = 1 more hour: a day card costs
    # 7 × 13 × 10 = 910 > 900, so the package wins for them too: 3 × 900 = 2,700.
    offers[0]["setup_minutes"] = 30
    cost, solution, _ = optimum(make_scenario(offers, week, days=7))
    assert cost == 2700 and solution.packages == {("o", "weekly"): {0: 3}}


def test_a_checkpointed_job_uses_the_night_hours_of_package_cards(make_scenario: Any) -> None:
    # 2 cards 08:00-20:00 on packages (2 × 3,000 < 2 × 360 h × 10); a 10 h LoRA job fits in
    # a night on those held cards and adds no money.
    offers = [offer("o", hourly={"price": 10, "stock": 8}, monthly={"price": 3000, "stock": 2})]
    night_job = job(
        "lora", 10, checkpoint_every="30m", earliest_start="2026-07-02", deadline="2026-07-20"
    )
    cost, solution, problem = optimum(
        make_scenario(offers, [reserve("day", 2, "08:00-20:00"), night_job], days=30)
    )
    assert cost == 6000
    config = solution.config(problem, 0)
    assert config.held and config.pool == ("o", "monthly")
    start = solution.starts[0] % 24
    assert start >= 20 or start + 10 <= 8 + 24  # inside a night


def test_serving_by_day_leaves_package_cards_to_a_night_job_end_to_end(make_scenario: Any) -> None:
    # A service needing two replicas 08:00-20:00 (its demand is twice what one 1-card
    # replica carries) on packages priced below 360 h of hourly; a checkpointed 10 h LoRA
    # job runs on the same package cards at night for no extra money. Checked end to end.
    from planner.check import check_plan
    from planner.configs import replica_configs
    from tests.planning import solved

    offers = [offer("o", hourly={"price": 10, "stock": 8}, monthly={"price": 3000, "stock": 2})]
    service = {
        "name": "chat",
        "kind": "serve",
        "model": "llama-3.1-8b",
        "start": "2026-07-01",
        "end": "2026-07-31",
        "context_tokens": 4096,
        "min_tokens_per_s": 20,
        "concurrency": 1,
        "min_replicas": 0,
        "setup_minutes": 0,
    }
    probe = make_scenario(offers, [service], days=30)
    [one_card] = [
        c
        for c in replica_configs(probe, probe.workload("chat"))
        if c.cards == 1 and c.mode == "hourly"
    ]
    service["concurrency"] = {"00-08": 0, "08-20": 2 * one_card.capacity, "20-24": 0}
    night_job = job(
        "lora", 10, checkpoint_every="30m", earliest_start="2026-07-02", deadline="2026-07-20"
    )
    s = make_scenario(offers, [service, night_job], days=30)
    result = solved(s)
    assert result.status == "optimal" and result.plan is not None
    plan = result.plan
    assert plan.total_cost == 6000  # two monthly packages, nothing else
    [lora] = plan.train
    assert lora.held and (lora.start.hour >= 20 or lora.end.hour <= 8)
    check = check_plan(s, plan)
    assert check.ok and check.total == result.objective
    # the checker catches a service left short: drop one replica everywhere
    [chat] = plan.replica
    fewer = [u.model_copy(update={"replicas": u.replicas - 1}) for u in chat.uses]
    short = plan.model_copy(
        update={
            "assignments": [
                a.model_copy(update={"uses": fewer}) if a is chat else a for a in plan.assignments
            ]
        }
    )
    assert any(
        v.rule == "demand" and "short by" in v.message for v in check_plan(s, short).violations
    )


def test_the_checker_sees_a_missing_replica_rental(make_scenario: Any) -> None:
    from planner.check import check_plan
    from tests.planning import solved

    offers = [offer("o", hourly={"price": 10, "stock": 8})]
    people = reserve("devs", 1, "09:00-17:00", end="2026-07-03")
    s = make_scenario(offers, [people], days=2)
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    assert plan.total_cost == 2 * 8 * 10  # 8 h a day for two days (the offer has no setup)
    broken = plan.model_copy(update={"rentals": plan.rentals[1:]})
    rules = {v.rule for v in check_plan(s, broken).violations}
    assert "rental" in rules and "cost" in rules


def test_k_replicas_that_take_the_same_cards_dominate() -> None:
    # On held cards, two 1-card replicas (45 requests each, 90 in all) take the 2 cards of
    # one 2-card replica carrying 80: the 2-card config goes. One carrying 100 stays; and a
    # config whose replicas each pay a disk is never replaced by more replicas.
    from planner.configs import ReplicaConfig
    from planner.serving import undominated

    def rc(cards: int, capacity: int, held: bool = True) -> ReplicaConfig:
        return ReplicaConfig("h200-141g", cards, "m", "monthly", 1, "fp8", capacity, 0.0, held)

    one, weak, strong = rc(1, 45), rc(2, 80), rc(2, 100)
    assert undominated([one, weak]) == [one]
    assert undominated([one, strong]) == [one, strong]
    assert undominated([one, weak], disks=True) == [one, weak]
