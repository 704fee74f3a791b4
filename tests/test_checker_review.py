"""An adversarial review of the independent checker: tampered plans it accepted and a legal
plan it refused. Each test quotes the rule of docs/rules.md (or
docs/checker.md) it holds the checker to, with the arithmetic done by hand."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from planner.check import check_plan
from planner.domain.costs import CostTerm
from planner.domain.plan import Plan, ReplicaAssignment
from tests.planning import job, offer, reserve, service, solved, with_assignment

H = dt.timedelta(hours=1)


def _restated(plan: Plan, total: str, storage: str) -> Plan:
    """The plan's total, its storage line and its one month restated (a consistent lie)."""
    b = plan.cost_breakdown
    assert b is not None and len(b.by_month) == 1
    breakdown = b.model_copy(
        update={
            "total": Decimal(total),
            "paid": {**b.paid, CostTerm.STORAGE: Decimal(storage)},
            "by_month": {m: Decimal(total) for m in b.by_month},
        }
    )
    return plan.model_copy(update={"total_cost": Decimal(total), "cost_breakdown": breakdown})


def _rules(s: Any, plan: Plan) -> list[tuple[str, str]]:
    return [(v.rule, v.subject) for v in check_plan(s, plan).violations]


def _desk_on_a_package(make_scenario: Any) -> tuple[Any, Plan, ReplicaAssignment]:
    # One card 09:00-12:00 on a daily package of 100.00; disk 72 per GB-month of 720 h ×
    # 10 GB = 1.00 per card-hour × 3 h = 3.00 (rule 9: "for serve and reserve, per replica
    # or card while held"). Total 103.00.
    o = {**offer("o", daily={"price": 100}), "disk_price_per_gb_month": 72}
    s = make_scenario([o], [reserve(disk_gb=10)], days=1)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("103.00")
    assert check_plan(s, plan).ok
    [desk] = plan.replica
    assert desk.cost == Decimal("3.00") and len(desk.uses) == 1
    return s, plan, desk


def test_a_replica_use_that_ends_before_it_starts_earns_no_money_back(
    make_scenario: Any,
) -> None:
    # ReplicaUse: "replicas of one config running from `start` to `end`". A use from 19:00
    # back to 09:00 is -10 hours: the checker counted -10 card-hours of disk (-10.00) and of
    # package share (-10 × 100/24 = -41.67), so the plan restated at 93.00 (storage -7.00,
    # desk -7.00, share 12.50 - 41.67 = -29.17) passed. It is refused.
    s, plan, desk = _desk_on_a_package(make_scenario)
    [u] = desk.uses
    back = u.model_copy(update={"start": u.start + 10 * H, "end": u.start})
    tampered = with_assignment(
        plan, "desk", uses=[u, back], cost=Decimal("-7.00"), package_share=Decimal("-29.17")
    )
    tampered = _restated(tampered, total="93.00", storage="-7.00")
    assert ("config", "desk") in _rules(s, tampered)


def test_negative_replicas_are_refused(make_scenario: Any) -> None:
    # A use of -1 replicas was skipped without a word; a plan may not state one.
    s, plan, desk = _desk_on_a_package(make_scenario)
    [u] = desk.uses
    tampered = with_assignment(plan, "desk", uses=[u, u.model_copy(update={"replicas": -1})])
    assert _rules(s, tampered) == [("config", "desk")]
    # zero replicas carry nothing and cost nothing: not a broken rule
    zero = u.model_copy(update={"replicas": 0})
    assert check_plan(s, with_assignment(plan, "desk", uses=[u, zero])).ok


def test_a_train_assignment_costs_only_the_rentals_of_its_runs(make_scenario: Any) -> None:
    # Rule 4: "Each start of a workload run is its own rental". a (3 h) and b (2 h) at 10.00
    # an hour: a costs 30.00 on rental a, b 20.00 on rental b. Listing b's rental under a
    # as well made a's recomputed cost 50.00, and listing a's own rental twice 60.00; both
    # were accepted. An assignment's money is the rentals that carry its runs, each once.
    s = make_scenario([offer("o", hourly={"price": 10})], [job("a", 3), job("b", 2)], days=1)
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    a = next(x for x in plan.train if x.workload == "a")
    assert (a.rentals, a.cost) == (["a"], Decimal("30.00"))
    steal = with_assignment(plan, "a", rentals=["a", "b"], cost=Decimal("50.00"))
    assert sorted(_rules(s, steal)) == [("cost", "a"), ("rental", "a")]
    twice = with_assignment(plan, "a", rentals=["a", "a"], cost=Decimal("60.00"))
    assert sorted(_rules(s, twice)) == [("cost", "a"), ("rental", "a")]
    ghost = with_assignment(plan, "a", rentals=["a", "no-such-rental"])
    assert _rules(s, ghost) == [("rental", "a")]


def test_a_replica_assignment_lists_exactly_its_own_rentals(make_scenario: Any) -> None:
    # docs/checker.md: "hourly replicas run on rentals started for that workload", and its
    # cost is theirs. The desk (09:00-12:00 on its own hourly rental, 30.00) listing the
    # train job's rental as well was accepted: the list was never read.
    s = make_scenario([offer("o", hourly={"price": 10})], [job("a", 3), reserve()], days=1)
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    [desk] = plan.replica
    assert len(desk.rentals) == 1 and desk.cost == Decimal("30.00")
    extra = with_assignment(plan, "desk", rentals=[*desk.rentals, "a"])
    assert _rules(s, extra) == [("rental", "desk")]
    assert _rules(s, with_assignment(plan, "desk", rentals=[])) == [("rental", "desk")]


def test_a_whole_day_window_is_one_run_per_day(make_scenario: Any) -> None:
    # Rule 3: "On hourly/spot each day's run is one rental (and one setup)". Window
    # 00:00-24:00, 30 h of work, 30 min setup per start: day 1 runs 00:00-24:00 (0.5 setup +
    # 23.5 work), day 2 runs 00:00-07:00 (0.5 setup + 6.5 work = 7 h): 31 h × 10 = 310.00.
    # The checker merged the two abutting windows into one run and refused the model's plan
    # (plan solve crashed on it).
    o = {**offer("o", hourly={"price": 10}), "setup_minutes": 30}
    j = {**job("a", 30, daily_hours="00:00-24:00"), "setup_minutes": None}
    s = make_scenario([o], [j], days=3)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("310.00")
    [a] = plan.train
    assert [(r.start.day, r.start.hour, r.end.day, r.end.hour) for r in a.runs] == [
        (1, 0, 2, 0),
        (2, 0, 2, 7),
    ]
    assert check_plan(s, plan).ok
    # one 31-hour rental over both days (one setup: 30.5 h → 31 h) is not rule 3's plan
    merged = a.runs[0].model_copy(update={"end": a.runs[1].end})
    one = with_assignment(plan, "a", runs=[merged], rentals=["a#1"])
    rental = next(r for r in plan.rentals if r.id == "a#1").model_copy(
        update={"end": a.runs[1].end}
    )
    one = one.model_copy(
        update={"rentals": [rental if r.id == "a#1" else r for r in plan.rentals if r.id != "a#2"]}
    )
    assert ("duration", "a") in _rules(s, one)


def test_a_whole_day_window_on_a_package_pays_setup_once(make_scenario: Any) -> None:
    # Rule 3: "On a package the cards are paid in full and simply used inside the window";
    # rule 5: setup once per hold. Day 1: 0.5 setup + 23.5 work; day 2: 6.5 work → 7 h.
    # Two daily packages of 100.00 = 200.00.
    o = {**offer("o", daily={"price": 100}), "setup_minutes": 30}
    j = {**job("a", 30, daily_hours="00:00-24:00"), "setup_minutes": None}
    s = make_scenario([o], [j], days=3)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("200.00")
    [a] = plan.train
    assert a.held and [r.end.hour for r in a.runs] == [0, 7]
    assert check_plan(s, plan).ok


def test_a_serve_rental_that_carries_no_replica_is_refused(make_scenario: Any) -> None:
    # A reserve of 1 card 09:00-12:00 on hourly (3 h × 10 = 30.00). A second rental named
    # for it, 14:00-16:00 (20.00), carries nothing: the reserve runs no replica then. Rule 4:
    # each rental is a start of a workload run; one that carries none is refused.
    s = make_scenario([offer("o", hourly={"price": 10})], [reserve()], days=1)
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    [r] = plan.rentals
    idle = r.model_copy(
        update={
            "id": "desk#idle",
            "start": r.start + 5 * H,
            "end": r.start + 7 * H,
            "billed_hours": Decimal(2),
            "cost": Decimal("20.00"),
        }
    )
    tampered = plan.model_copy(update={"rentals": [*plan.rentals, idle]})
    violations = check_plan(s, tampered).violations
    assert any(v.rule == "rental" and v.subject == "desk#idle" for v in violations)


def test_each_use_of_an_illegal_config_is_refused_on_its_own(make_scenario: Any) -> None:
    # The checker works out what a config carries once per workload and reuses the answer;
    # a refusal must still be said for every use that states the config, not only the
    # first. The desk's hours split in two uses on a card the offer does not rent.
    s, plan, desk = _desk_on_a_package(make_scenario)
    [u] = desk.uses
    wrong = {"card": "h100-80g"}
    first = u.model_copy(update={**wrong, "end": u.start + H})
    rest = u.model_copy(update={**wrong, "start": u.start + H})
    violations = check_plan(s, with_assignment(plan, "desk", uses=[first, rest])).violations
    refused = [v for v in violations if (v.rule, v.subject) == ("config", "desk")]
    assert len(refused) == 2
    assert all("does not rent h100-80g" in v.message for v in refused), refused


def test_a_config_is_judged_at_the_capacity_each_use_states(make_scenario: Any) -> None:
    # One a100-80g replica of the chat service carries 100 requests. Two uses of the same
    # config, one stating 10 (it may serve fewer than it carries) and one 1,000: only the
    # second is refused, whichever comes first (the checker's memo of what a config
    # carries is per stated capacity).
    s = make_scenario([offer("o", hourly={"price": 10})], [service()], days=1)
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    [chat] = plan.replica
    [u] = chat.uses[:1]
    assert u.end - u.start >= 2 * H
    half = u.start + H
    low = u.model_copy(update={"end": half, "capacity": 10})
    high = u.model_copy(update={"start": half, "capacity": 1000})
    for uses in ([low, high], [high, low]):
        violations = check_plan(s, with_assignment(plan, "chat", uses=[*uses, *chat.uses[1:]]))
        refused = [v.message for v in violations.violations if v.rule == "config"]
        assert len(refused) == 1 and "states 1000 requests per replica" in refused[0], refused
