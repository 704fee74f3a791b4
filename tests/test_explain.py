"""Infeasibility explained: each conflict kind on a hand-worked instance, its figures and its
relaxation, and the relaxation applied to the scenario file gives a plan (while one step
less does not, where the relaxation claims to be the smallest)."""

from __future__ import annotations

from typing import Any

import yaml

from planner.configs import replica_configs
from planner.domain.load import load_scenario
from planner.domain.merge import deep_merge
from planner.domain.scenario import Scenario
from planner.domain.workload import ServeWorkload, TrainWorkload
from planner.estimate.core import GIB
from planner.estimate.memory import train_memory, workload_setup
from planner.explain import Conflict, Relaxation, patched
from tests.conftest import REPO
from tests.planning import job, offer, reserve, service, solved

HOURLY = {"price": 10}


def only(s: Scenario) -> Conflict:
    result = solved(s)
    assert result.status == "infeasible" and result.plan is None
    [conflict] = result.conflicts
    assert result.reasons == [conflict.line()]
    return conflict


def relaxed(s: Scenario, patch: dict[str, Any] | None, name: str = "relaxed.yaml") -> Scenario:
    """The scenario file with the patch deep-merged over it, as a user would apply it."""
    assert s.path is not None and patch is not None
    data = deep_merge(yaml.safe_load(s.path.read_text()), patch)
    path = s.path.with_name(name)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_scenario(path)


def feasible(s: Scenario, relaxation: Relaxation) -> bool:
    return solved(relaxed(s, relaxation.patch)).plan is not None


def full_7b(**fields: Any) -> dict[str, Any]:
    """A full fine-tune of Llama 2 7B under FSDP: 1 h of work on one a100-80g."""
    return {
        **job("ft", 1),
        "method": "full",
        "recipe": "fsdp-full-shard",
        "max_cards": 1,
        **fields,
    }


# --- memory -----------------------------------------------------------------------------------


def test_a_train_job_no_card_holds_names_the_memory_and_more_cards(make_scenario: Any) -> None:
    # Full fine-tune, bf16 weights and gradients (2 + 2 B/param) and mixed-precision AdamW
    # (12 B/param): 16 B × 6.74e9 params = 100.4 GiB on one card, plus activations and
    # 1 GiB of overhead = 104.2 GiB; an a100-80g may use 80 GiB × 0.90 = 72.0 GiB. FSDP
    # shards all of it, so 2 cards hold about half: allowing 2 cards is the fix.
    s = make_scenario([offer("o", hourly=HOURLY)], [full_7b()])
    conflict = only(s)
    w = s.workload("ft")
    assert isinstance(w, TrainWorkload)
    need = train_memory(s.models["ft"], s.cards["a100-80g"], 1, workload_setup(w, 0.9)).total
    assert f"{need / GIB:.1f}" == "104.2"
    assert conflict.kind == "memory" and conflict.workloads == ("ft",)
    assert conflict.needed.startswith("104.2 GiB per card at 1 card, its most (max_cards 1;")
    assert conflict.available.startswith("72.0 GiB usable on the largest card it may rent (a100")
    more, bigger = conflict.relaxations
    assert more.text == "allow 2 cards (max_cards 1)"
    assert more.patch == {"workloads": [{"name": "ft", "max_cards": 2}]}
    assert bigger.text.startswith("a card with at least 104.2 GiB usable") and not bigger.patch
    assert feasible(s, more)


def test_a_context_no_card_holds_names_the_service_and_the_kv_per_request(
    make_scenario: Any,
) -> None:
    # Llama 3.1 8B keeps K and V for 8 KV heads × 128 dims × 32 layers at 2 B: 131,072 B a
    # token; split 8 ways (one KV head per card) 16,384 B a token per card. A context of
    # 1e7 tokens (the most a scenario may ask) needs 1e7 × 16,384 B ÷ 2^30 = 152.6 GiB per
    # card; an a100-80g
    # has 72.0 GiB usable. The longest context that fits is found exactly, to the block.
    serve = service(context_tokens=10**7)
    s = make_scenario([offer("o", hourly=HOURLY)], [serve], days=1)
    conflict = only(s)
    assert conflict.kind == "memory" and conflict.workloads == ("chat",)
    assert conflict.needed.startswith(
        "152.6 GiB of KV cache per card for one request of 10,000,000 tokens "
        "(8× a100-80g, bf16, bf16 KV)"
    )
    assert conflict.available == "72.0 GiB usable per card (a100-80g)"
    [shorter] = conflict.relaxations
    assert shorter.patch is not None
    tokens = shorter.patch["workloads"][0]["context_tokens"]
    assert shorter.text == f"a context of at most {tokens:,} tokens (context_tokens {10**7:,})"
    w = s.workload("chat")
    assert isinstance(w, ServeWorkload)
    assert replica_configs(s, w.model_copy(update={"context_tokens": tokens}))
    assert not replica_configs(s, w.model_copy(update={"context_tokens": tokens + 16}))
    assert feasible(s, shorter)


def test_a_speed_no_replica_reaches_is_a_demand_conflict(make_scenario: Any) -> None:
    # One request alone decodes at bandwidth ÷ bytes read per token; 2,000 tokens/s is out
    # of reach of any a100-80g replica, and the fastest one's speed, rounded down to a
    # tenth, is the relaxation: met there, and a tenth more is not.
    serve = service(min_tokens_per_s=2000)
    s = make_scenario([offer("o", hourly=HOURLY)], [serve], days=1)
    conflict = only(s)
    assert conflict.kind == "demand" and conflict.needed.startswith("2000 tokens/s")
    [slower] = conflict.relaxations
    assert slower.patch is not None
    speed = slower.patch["workloads"][0]["min_tokens_per_s"]
    assert f"{speed:,} tokens/s for one request alone" in conflict.available
    w = s.workload("chat")
    assert isinstance(w, ServeWorkload)
    assert replica_configs(s, w.model_copy(update={"min_tokens_per_s": speed}))
    assert not replica_configs(s, w.model_copy(update={"min_tokens_per_s": speed + 0.1}))
    assert feasible(s, slower)


def test_reserved_cards_sold_only_on_spot_are_a_memory_conflict(make_scenario: Any) -> None:
    # People's cards are never on spot; the only offer of the card is spot.
    s = make_scenario([offer("o", spot={"price": 5})], [reserve("desk", 1)], days=1)
    conflict = only(s)
    assert (conflict.kind, conflict.workloads) == ("memory", ("desk",))
    assert conflict.available.startswith("no offer sells a100-80g outside spot")
    assert conflict.relaxations == ()


def test_a_card_sold_only_on_spot_needs_checkpoints(make_scenario: Any) -> None:
    # The only a100-80g is on spot, and a job without checkpoints may not use spot: it
    # has no card to rent; with checkpoints every 30 minutes it runs there.
    s = make_scenario([offer("o", spot={"price": 5})], [job("a", 5)], days=1)
    conflict = only(s)
    assert (conflict.kind, conflict.available) == ("memory", "none of a100-80g, but on spot")
    [spot] = conflict.relaxations
    assert spot.patch == {"workloads": [{"name": "a", "checkpoint_every": "30m"}]}
    assert feasible(s, spot)


def test_with_every_offer_deleted_the_conflicts_say_so(make_scenario: Any) -> None:
    # every catalog lists an offer, but a scenario's offers: may delete them all: each
    # workload's conflict says there is no offer (it said "available: none of ", cut off)
    s = make_scenario([offer("o", hourly=HOURLY)], [job("a", 5), service()])
    result = solved(relaxed(s, {"offers": [{"id": "o", "delete": True}]}, "deleted.yaml"))
    assert result.status == "infeasible"
    assert [(c.workloads, c.available) for c in result.conflicts] == [
        ((name,), "no offer at all (the offers: changes delete every offer the catalogs list)")
        for name in ("a", "chat")
    ]


# --- deadline and dependency ------------------------------------------------------------------


def test_a_deadline_too_early_by_six_hours(make_scenario: Any) -> None:
    # 30 h of work on one card (30 × 3.6e6 tokens ÷ 1,000 tokens/s ÷ 3,600 = 30.0 h, no
    # setup): 30 occupied hours; the window 07-01 00:00 → 07-02 00:00 gives 24; move the
    # deadline by 30 − 24 = 6 h. At +5 h it still cannot finish.
    s = make_scenario([offer("o", hourly=HOURLY)], [job("a", 30, deadline="2026-07-02")])
    conflict = only(s)
    assert (conflict.kind, conflict.workloads) == ("deadline", ("a",))
    assert conflict.needed.startswith(
        "30 h from 2026-07-01 00:00 on its fastest config (1× a100-80g on o hourly: "
        "30.0 h of work + 0.00 h setup"
    )
    assert conflict.available == "24 h from 2026-07-01 00:00 to 2026-07-02 00:00"
    later, more = conflict.relaxations
    assert later.text == "move the deadline of a to 2026-07-02 06:00 (+6 h)"
    assert later.patch == {"workloads": [{"name": "a", "deadline": "2026-07-02T06:00"}]}
    assert feasible(s, later)
    one_less = {"workloads": [{"name": "a", "deadline": "2026-07-02T05:00"}]}
    assert solved(relaxed(s, one_less, "short.yaml")).status == "infeasible"
    # or two cards (max_cards 1 binds): 15 h of work each, inside the 24 h
    assert more.text == "allow 2 cards (max_cards 1)"
    assert more.patch == {"workloads": [{"name": "a", "max_cards": 2}]}
    assert feasible(s, more)


def test_a_daily_window_counts_window_days(make_scenario: Any) -> None:
    # 25 h of work in a 10-hour daily window from 07-01: 10 + 10 + 5 h, the third run
    # ending 07-03 13:00; the deadline 07-03 00:00 is 13 h short.
    jobs = [job("a", 25, daily_hours="08:00-18:00", deadline="2026-07-03")]
    s = make_scenario([offer("o", hourly=HOURLY)], jobs)
    conflict = only(s)
    assert conflict.kind == "deadline"
    assert conflict.needed.startswith(
        "3 daily windows of 08:00-18:00, 53 h from its start at 2026-07-01 08:00"
    )
    later, more = conflict.relaxations
    assert later.text == "move the deadline of a to 2026-07-03 13:00 (+13 h)"
    plan = solved(relaxed(s, later.patch)).plan
    assert plan is not None and plan.train[0].end.hour == 13
    # or two cards: 12.5 h of work each, in the windows of 07-01 and 07-02
    assert more.text == "allow 2 cards (max_cards 1)" and feasible(s, more)


def test_a_daily_window_shorter_than_the_setup_never_progresses(make_scenario: Any) -> None:
    # A 1-hour window, 2 hours of setup every day on hourly rentals: no day does any work.
    o = {**offer("o", hourly=HOURLY), "setup_minutes": 120}
    jobs = [job("a", 5, daily_hours="08:00-09:00", setup_minutes=None)]
    conflict = only(make_scenario([o], jobs, days=3))
    assert conflict.kind == "deadline" and conflict.relaxations == ()
    assert conflict.needed == "a daily window longer than its setup (2.00 h at the least)"
    assert conflict.available == "08:00-09:00 each day"


def test_past_the_horizon_the_horizon_is_extended_too(make_scenario: Any) -> None:
    # 250 h from 07-01 00:00 ends 07-11 10:00: past the 10-day horizon, so the horizon
    # ends on 07-12 and the deadline moves by 250 − 48 = 202 h.
    s = make_scenario([offer("o", hourly=HOURLY)], [job("a", 250, deadline="2026-07-03")])
    later, more = only(s).relaxations
    assert later.text == (
        "extend the horizon to 2026-07-12 and move the deadline of a to 2026-07-11 10:00 (+202 h)"
    )
    assert feasible(s, later)
    # or eight cards (31.25 h of work each, inside the 48 h); four would need 62.5 h
    assert more.text == "allow 8 cards (max_cards 1)" and feasible(s, more)


def test_after_that_leaves_no_window_is_a_dependency(make_scenario: Any) -> None:
    # a and b take 10 h each, b after a and due 15:00. b cannot start before 10:00: 5 h
    # left, 5 short. a must leave b its 10 h, so it is due 05:00: 5 h for its 10, 5 short.
    # Each fits alone; moving b's deadline to 20:00 fixes both.
    jobs = [job("a", 10), job("b", 10, after=["a"], deadline="2026-07-01T15:00")]
    s = make_scenario([offer("o", hourly=HOURLY)], jobs)
    result = solved(s)
    a, b = result.conflicts
    assert (a.kind, b.kind) == ("dependency", "dependency")
    assert a.available == (
        "5 h from 2026-07-01 00:00 to 2026-07-01 05:00 (it closes early enough for b to run "
        "before its deadline)"
    )
    assert b.available == (
        "5 h from 2026-07-01 10:00 to 2026-07-01 15:00 (it opens when a can have finished "
        "at the earliest)"
    )
    assert a.relaxation == (
        "move the deadline of b to 2026-07-01 20:00 (+5 h), at the end of the chain a → b "
        "or allow 2 cards (max_cards 1)"
    )
    assert b.relaxation == (
        "move the deadline of b to 2026-07-01 20:00 (+5 h) or allow 2 cards (max_cards 1)"
    )
    assert feasible(s, a.relaxations[0])
    # or either on two cards (5 h of work each): a inside 00:00-05:00, or b inside 10:00-15:00
    assert feasible(s, a.relaxations[1]) and feasible(s, b.relaxations[1])


def test_a_chain_that_opens_past_a_deadline_says_so_not_a_negative_window(
    make_scenario: Any,
) -> None:
    # a takes 10 h; b, after a, is due 06:00: it may start at 10:00 at the earliest, 4 h
    # past its deadline, so it has no window at all
    jobs = [job("a", 10), job("b", 2, after=["a"], deadline="2026-07-01T06:00")]
    s = make_scenario([offer("o", hourly=HOURLY)], jobs)
    conflicts = {c.workloads[0]: c for c in solved(s).conflicts}
    assert conflicts["b"].available.startswith(
        "none: it may start at 2026-07-01 10:00, 4 h past its deadline 2026-07-01 06:00"
    )


# --- stock ------------------------------------------------------------------------------------


def test_a_train_job_needing_more_units_than_the_stock(make_scenario: Any) -> None:
    # The fine-tune needs 2 cards at once (one card holds 72.0 of its 104.2 GiB); the
    # offer sells 1 unit at a time: add 1.
    s = make_scenario([offer("o", hourly={"price": 10, "stock": 1})], [full_7b(max_cards=2)])
    conflict = only(s)
    assert (conflict.kind, conflict.workloads) == ("stock", ("ft",))
    assert conflict.needed == "2 units at once on its smallest config (2× a100-80g on o hourly)"
    assert conflict.available == "the most sold at once: o hourly: 1 unit"
    [more] = conflict.relaxations
    assert more.text == "add 1 unit of o hourly stock (it needs 2 at once, stock 1)"
    assert more.patch == {"offers": [{"id": "o", "hourly": {"stock": 2}}]}
    assert feasible(s, more)


def test_reserved_cards_beyond_all_stock_add_units_on_the_cheapest_offer(
    make_scenario: Any,
) -> None:
    # 5 cards at 09:00; o sells 2 at 10/h, p 1 at 20/h: 3 at most. The cheaper o takes
    # the 2 missing units: its peak share is 5 − 1 (on p) = 4, stock 2.
    offers = [
        offer("o", hourly={"price": 10, "stock": 2}),
        offer("p", hourly={"price": 20, "stock": 1}),
    ]
    s = make_scenario(offers, [reserve("desk", 5)], days=1)
    conflict = only(s)
    assert (conflict.kind, conflict.needed) == ("stock", "5 cards at 2026-07-01 09:00")
    assert conflict.available == (
        "3 cards at most on all stock together (o hourly: 2 units; p hourly: 1 unit)"
    )
    [more] = conflict.relaxations
    assert more.text == "add 2 units of o hourly stock (peak needs 4, stock 2)"
    assert feasible(s, more)


def test_a_stock_fix_raises_the_cap_only_where_it_binds(make_scenario: Any) -> None:
    # 5 reserved cards on an offer of stock 2: add 3. A cap of 100 over its modes leaves room
    # (it was raised to 103 all the same); a cap of 2 must rise with the stock, and says so.
    for cap, text in (
        (100, "add 3 units of o hourly stock (peak needs 5, stock 2)"),
        (
            2,
            "add 3 units of o hourly stock (peak needs 5, stock 2) and raise its max_units "
            "from 2 to 5",
        ),
    ):
        o = {**offer("o", hourly={"price": 10, "stock": 2}), "max_units": cap}
        s = make_scenario([o], [reserve("desk", 5)], days=1)
        [more] = only(s).relaxations
        assert more.text == text
        assert feasible(s, more)


def test_a_minimum_of_replicas_beyond_the_stock(make_scenario: Any) -> None:
    # 3 replicas must run; the offer sells 2 units, one replica each: add 1.
    serve = service(concurrency=1, min_replicas=3, max_cards_per_replica=1)
    s = make_scenario([offer("o", hourly={"price": 10, "stock": 2})], [serve], days=1)
    conflict = only(s)
    assert conflict.needed == "3 replicas at 2026-07-01 00:00 (min_replicas)"
    assert conflict.available.startswith("2 replicas at most on all stock together")
    [more] = conflict.relaxations
    assert more.text == "add 1 unit of o hourly stock (peak needs 3, stock 2)"
    assert feasible(s, more)


# --- several workloads together ---------------------------------------------------------------


def test_two_jobs_on_one_unit_name_both_and_the_smallest_fixes(make_scenario: Any) -> None:
    # Two 10 h jobs due 15:00 on a stock of 1: one runs 00:00-10:00, the other could only
    # finish at 20:00. Either due 20:00 (+5 h; +4 is not enough) or a second unit.
    jobs = [job("a", 10, deadline="2026-07-01T15:00"), job("b", 10, deadline="2026-07-01T15:00")]
    s = make_scenario([offer("o", hourly={"price": 10, "stock": 1})], jobs)
    conflict = only(s)
    assert (conflict.kind, conflict.workloads) == ("joint", ("a", "b"))
    assert conflict.available == "o hourly: stock 1 unit"
    later, more = conflict.relaxations
    assert later.text == "move the deadline of a to 2026-07-01 20:00 (+5 h)"
    assert more.text == "add 1 unit of o hourly stock (stock 1)"
    assert feasible(s, later) and feasible(s, more)
    short = {"workloads": [{"name": "a", "deadline": "2026-07-01T19:00"}]}
    assert solved(relaxed(s, short, "short.yaml")).status == "infeasible"


def test_a_cap_that_binds_is_raised_alone(make_scenario: Any) -> None:
    # An offer capped at 2 units over its modes, 4 hourly and 4 daily in stock: people hold
    # 2 cards all day and a 1 h job needs a third the same day. The cap binds, not the
    # stock: the fix raises the cap alone (it also added a daily unit nobody needs). And the
    # heuristic keeps to the cap (it rented past it, and the checker refused its plan: `only`
    # asserts the conflict is the only reason given).
    o = {
        **offer("o", hourly={"price": 10, "stock": 4}, daily={"price": 200, "stock": 4}),
        "max_units": 2,
    }
    jobs = [reserve("desk", 2, "00:00-24:00"), job("j", 1, deadline="2026-07-02T00:00")]
    s = make_scenario([o], jobs, days=1)
    conflict = only(s)
    assert (conflict.kind, conflict.workloads) == ("joint", ("j", "desk"))
    assert [r.text for r in conflict.relaxations] == ["raise the max_units of o from 2 to 3"]
    assert feasible(s, conflict.relaxations[0])


def test_a_reserve_in_the_core_is_named_and_others_are_not(make_scenario: Any) -> None:
    # One unit: people hold it 09:00-12:00, and a 10 h job due 12:00 needs 00:00-10:00.
    # A second reserve in the evening conflicts with nothing and is left out of the core.
    # The job fits after 12:00, due 22:00 (+10 h).
    jobs = [
        reserve("desk", 1, "09:00-12:00"),
        reserve("evening", 1, "20:00-23:00"),
        job("j", 10, deadline="2026-07-01T12:00"),
    ]
    s = make_scenario([offer("o", hourly={"price": 10, "stock": 1})], jobs, days=1)
    conflict = only(s)
    assert (conflict.kind, conflict.workloads) == ("joint", ("j", "desk"))
    assert conflict.relaxation == (
        "move the deadline of j to 2026-07-01 22:00 (+10 h) or add 1 unit of o hourly stock "
        "(stock 1)"
    )


def test_an_empty_patch_gives_the_same_scenario_back() -> None:
    # Relaxations are verified on scenarios patched in memory; the patching round-trips
    # every shipped scenario and example unchanged.
    for path in [
        *(REPO / "scenarios").glob("q3*.yaml"),
        *(REPO / "tests" / "scenarios").glob("*.yaml"),
    ]:
        if "horizon" not in yaml.safe_load(path.read_text()):
            continue  # a what-if patch (q3-add-h200.yaml), not a scenario
        s = load_scenario(path)
        same = patched(s, {})
        assert (same.spec, same.catalogs) == (s.spec, s.catalogs), path
    assert (
        patched(s, {"offers": [{"id": "jz-h200", "hourly": {"stock": 3}}]})
        .offers["jz-h200"]
        .billing("hourly")
        .stock
        == 3
    )


def test_too_few_window_hours_left_before_the_horizon_ends(make_scenario: Any) -> None:
    # 6 h of work on one card from 07-02, windows of 08:00-13:00 (5 h), the horizon ends
    # 07-03: the windows hold more than a setup (none), but only 5 h are left
    jobs = [job("a", 6, daily_hours="08:00-13:00", earliest_start="2026-07-02")]
    conflict = only(make_scenario([offer("o", hourly=HOURLY)], jobs, days=2))
    assert conflict.kind == "deadline"
    assert conflict.needed.startswith("more window hours than are left")
    assert conflict.available == (
        "5 h of 08:00-13:00 windows from 2026-07-02 00:00 to the horizon's end"
    )
