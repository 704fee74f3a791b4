"""The safety net: where the model is wrong, the command shows the cheapest checked plan,
never a dearer "optimal" one, never a crash, and names the inconsistency; a checked plan
is an answer (exit 0), and without one the command exits 3, never with a code of its own.

Each test plants one bug on the model side only (the checker and the baselines are
untouched) and checks what a user would see."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from planner.check import check_plan
from planner.cpsat.cumulative import Load
from planner.domain.plan import Plan
from planner.serving import ReplicaJob
from planner.solve import Status
from tests.planning import job, offer, scenario, service, solved


def _one_service(folder: Path) -> Any:
    """250 requests in flight for a day; one-card A100 replicas carry 100 each (three
    needed, 3 × 24 h × 10 = 720), one-card H200 replicas carry 220 at 10,000 an hour."""
    offers = [
        {**offer("o", hourly={"price": 10, "stock": 8}), "cards_per_node": 1},
        {
            **offer("big", card="h200-141g", hourly={"price": 10000, "stock": 8}),
            "cards_per_node": 1,
        },
    ]
    return scenario(folder, offers, [service(concurrency=250)], days=3)


def _replicas_rounded_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's replica bound rounds demand ÷ capacity down: two A100 replicas at most,
    so its 'optimum' takes an H200 for the rest."""

    def need(self: ReplicaJob, config: Any, segment: int) -> int:
        return int(max(self.minimum[segment], self.demand[segment] // config.capacity))

    monkeypatch.setattr(ReplicaJob, "need", need)


def _stock_plus_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model allows one hourly unit over stock; the baselines and the checker do not."""
    constrain = Load.constrain

    def loose(self: Load, model: Any, capacity: int, *args: Any) -> Any:
        extra = 1 if self.name.startswith("stock,") else 0
        return constrain(self, model, capacity + extra, *args)

    monkeypatch.setattr(Load, "constrain", loose)


def _two_jobs_one_card(folder: Path) -> Any:
    """Stock 1: two 10 h jobs must run back to back by 20:00 (200)."""
    offers = [offer("o", hourly={"price": 10, "stock": 1})]
    jobs = [job(n, 10, deadline="2026-07-01T20:00") for n in "ab"]
    return scenario(folder, offers, jobs, days=2)


def test_the_unplanted_service_is_optimal_at_720(tmp_path: Path) -> None:
    result = solved(_one_service(tmp_path))
    assert result.status is Status.OPTIMAL and result.inconsistency is None
    assert result.plan is not None and str(result.plan.total_cost) == "720.00"


def test_a_dearer_optimum_is_refused_for_the_checked_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _replicas_rounded_down(monkeypatch)
    s = _one_service(tmp_path)
    result = solved(s)
    assert result.plan is not None
    # the cheapest checked plan, never called optimal, with no bound or gap
    assert str(result.plan.total_cost) == "720.00"
    assert result.status is Status.FEASIBLE and result.plan.status == "feasible"
    assert result.plan.bound is None and result.plan.gap is None
    assert result.inconsistency is not None
    assert "model inconsistency" in result.inconsistency
    assert "dearer than the checked" in result.inconsistency
    assert "240,240.00" in result.inconsistency  # what the wrong model proved
    assert result.plan.inconsistency == result.inconsistency
    assert check_plan(s, result.plan).ok


def test_a_plan_the_checker_rejects_gives_the_checked_plan_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = _two_jobs_one_card(tmp_path)
    clean = solved(s)
    assert clean.status is Status.OPTIMAL and clean.plan is not None
    _stock_plus_one(monkeypatch)
    result = solved(s)
    assert result.plan is not None and result.inconsistency is not None
    assert "the checker rejects the model's plan" in result.inconsistency
    assert "stock" in result.inconsistency
    assert result.status is Status.FEASIBLE and result.plan.bound is None
    assert result.plan.total_cost == clean.plan.total_cost  # the heuristic's: back to back
    assert check_plan(s, result.plan).ok


def test_a_solution_that_fails_to_decode_gives_the_checked_plan_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import planner.solve

    s = _two_jobs_one_card(tmp_path)
    decode = planner.solve.to_plan

    def broken(problem: Any, solution: Any, status: str) -> Plan:
        if status != "feasible":  # the model's solution; the baselines decode as feasible
            raise KeyError("no such config")
        return decode(problem, solution, status)

    monkeypatch.setattr(planner.solve, "to_plan", broken)
    result = solved(s)
    assert result.plan is not None and result.status is Status.FEASIBLE
    assert result.inconsistency is not None
    assert "decoding the model's solution failed (KeyError" in result.inconsistency
    assert "the cheapest checked plan (the heuristic's)" in result.inconsistency
    assert str(result.plan.total_cost) == "200.00"  # back to back, 20 h at 10
    assert check_plan(s, result.plan).ok


def test_plan_solve_exits_0_with_the_line_and_a_checkable_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    _replicas_rounded_down(monkeypatch)
    s = _one_service(tmp_path)
    out = tmp_path / "plan.json"
    run = cli(
        "solve", s.path, "--workers", "2", "--deterministic", "--time-limit", "20", "--json", out
    )
    assert run.exit_code == 0, run.output
    assert "model inconsistency" in run.stderr
    head = run.stdout.splitlines()[0]
    assert head.startswith("tiny: feasible, total CNY 720.00 (bound unknown, gap unknown")
    assert "not proven, no bound" in run.stdout
    data = json.loads(out.read_text())
    assert data["status"] == "feasible" and data["total_cost"] == 720
    assert data["bound"] is None and data["gap"] is None
    assert "model inconsistency" in data["inconsistency"]
    assert check_plan(s, Plan.model_validate(data)).ok
    monkeypatch.undo()  # the saved plan checks against the unplanted planner too
    assert cli("check", s.path, out).exit_code == 0


def test_a_bound_without_packages_above_a_plan_that_buys_none_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a 10-hour job on hourly cards (100) or a daily package (150): the plan buys no
    # package, and plans that buy none cost at least 100. A bound one fen above the plan
    # is wrong: named, and neither it nor the relaxation's bound is shown
    import planner.solve

    offers = [offer("o", hourly={"price": 10, "stock": 4}), offer("p", daily={"price": 150})]
    s = scenario(tmp_path, offers, [job("j", 10)], days=3)
    clean = solved(s)
    assert clean.plan is not None and clean.inconsistency is None
    assert str(clean.plan.total_cost) == "100.00"
    assert clean.plan.bound_without_packages is None  # not above the bound: not shown
    bound = planner.solve.without_packages

    def above(*args: Any) -> Any:
        value = bound(*args)
        assert value == 100
        return value + Fraction(1, 100)

    monkeypatch.setattr(planner.solve, "without_packages", above)
    result = solved(s)
    assert result.plan is not None and result.status is Status.FEASIBLE
    assert result.inconsistency is not None
    assert "the bound without optional packages CNY 100.01" in result.inconsistency
    assert "model plan, which buys none (CNY 100.00)" in result.inconsistency
    assert result.plan.bound is None and result.plan.bound_without_packages is None
    assert check_plan(s, result.plan).ok


def test_a_baseline_that_meets_the_bound_is_proven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no CP-SAT model built (the size gate at 0 variables) the plan is the best
    checked baseline; where its exact cost meets the relaxation's bound it is proven
    cheapest, whoever found it, and says so."""
    monkeypatch.setattr("planner.solve.MAX_VARIABLES", 0)
    result = solved(_one_service(tmp_path))
    assert result.plan is not None and str(result.plan.total_cost) == "720.00"
    assert result.plan.bound is not None and result.plan.bound == result.plan.total_cost
    assert result.status is Status.OPTIMAL and result.plan.status == "optimal"
