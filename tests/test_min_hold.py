"""Replica churn: a serve workload's `min_hold_hours`, on hand-worked instances.

One synthetic offer `o` rents a100-80g cards at 10 an hour with 60 min of setup, so every
replica start bills one more hour (a service serving from 00:00 is set up 23:00-00:00).
llama-3.1-8b is served on one-card replicas only (`max_cards_per_replica: 1`); C is what one
replica carries, so a demand of 2C needs two replicas and C one.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.check import check_plan
from planner.configs import replica_configs
from planner.domain.errors import LoadError
from planner.domain.load import load_scenario
from planner.domain.plan import Plan, ReplicaUse
from planner.domain.scenario import Scenario
from planner.domain.workload import ServeWorkload
from tests.conftest import minimal_scenario
from tests.planning import job, offer, solved

H = dt.timedelta(hours=1)
HOURLY = {**offer("o", hourly={"price": 10}), "setup_minutes": 60}


def service(**fields: Any) -> dict[str, Any]:
    return {
        "name": "chat",
        "kind": "serve",
        "model": "llama-3.1-8b",
        "start": "2026-07-01",
        "end": "2026-07-03",
        "context_tokens": 4096,
        "min_tokens_per_s": 20,
        "concurrency": 1,
        "max_cards_per_replica": 1,
        **fields,
    }


@pytest.fixture(scope="module")
def capacity(tmp_path_factory: pytest.TempPathFactory) -> int:
    """C: requests in flight one 1-card a100-80g replica of llama-3.1-8b carries."""
    from tests import planning

    s = planning.scenario(tmp_path_factory.mktemp("probe"), [HOURLY], [service()], days=2)
    w = s.workload("chat")
    assert isinstance(w, ServeWorkload)
    [config] = replica_configs(s, w)
    return config.capacity


def dips(c: int) -> dict[str, int]:
    """Two replicas all day but for two 2-hour dips to one, 06:00-08:00 and 18:00-20:00."""
    return {"00-06": 2 * c, "06-08": c, "08-18": 2 * c, "18-20": c, "20-24": 2 * c}


def counts(plan: Plan) -> list[tuple[int, int, int]]:
    """(first hour, last hour, replicas) of each use of the one serve workload."""
    [chat] = plan.replica
    start = dt.datetime(2026, 7, 1, tzinfo=chat.uses[0].start.tzinfo)
    return [((u.start - start) // H, (u.end - start) // H, u.replicas) for u in chat.uses]


def test_a_day_long_hold_keeps_the_replica_through_the_dips(
    make_scenario: Any, capacity: int
) -> None:
    # Two days, demand 2C but 1C in four 2-hour dips (06-08 and 18-20 each day).
    # No hold: a dip saves 2 h and costs 1 setup hour, so the second replica leaves every
    # dip: replica A 48 h + 1 setup = 49 h; replica B serves 6+10+10+10+4 = 40 h with 5
    # setups = 45 h; 94 h × 10 = 940.00 (keeping B through every dip: 98 h, 980.00).
    free = make_scenario([HOURLY], [service(concurrency=dips(capacity))], days=2)
    plan = solved(free).plan
    assert plan is not None and plan.total_cost == Decimal("940.00")
    assert [n for _, _, n in counts(plan)] == [2, 1, 2, 1, 2, 1, 2, 1, 2]
    # min_hold_hours 24: both replicas started at 00:00 serve until 24:00, so day 1's dips
    # are held through (4 hours more, 2 setups less). Day 2's dips may release an old
    # replica; the one started at 08:00 on day 2 is held to the end (its 24 h reach past
    # it). Replica-hours 96 − 2 − 2 = 92, setups at 0 (two), 32 and 44: 96 h → 960.00.
    held = make_scenario([HOURLY], [service(concurrency=dips(capacity), min_hold_hours=24)], 2)
    result = solved(held)
    plan = result.plan
    assert result.status == "optimal" and plan is not None
    assert plan.total_cost == Decimal("960.00")
    assert counts(plan) == [(0, 30, 2), (30, 32, 1), (32, 42, 2), (42, 44, 1), (44, 48, 2)]
    assert check_plan(held, plan).ok
    # the baselines hold their replicas too (else the checker refuses them): one config,
    # so they find the same plan
    assert plan.baseline_notes == {}
    assert plan.naive_cost == plan.heuristic_cost == Decimal("960.00")
    # hourly rentals end oldest first: each serves 24 h or to the end (setup hour before)
    serving = sorted(((r.end - r.start) // H - 1, r.end.hour) for r in plan.rentals)
    assert serving == [(4, 0), (16, 0), (30, 6), (42, 18)]


def test_a_dip_shorter_than_a_setup_is_held_through_without_a_hold(
    make_scenario: Any, capacity: int
) -> None:
    # No hold, setup 2 h, one day of 2C with a 1-hour dip to C at 06:00-07:00. Releasing
    # the second replica saves 1 h and pays a second 2 h setup: B would cost 6 + 17 + 2 × 2
    # = 27 h; kept, 24 + 2 = 26 h; with A's 26 h, 52 h → 520.00 (the model capped each
    # segment at its own need and called 530.00 optimal).
    slow = {**HOURLY, "setup_minutes": 120}
    dip = {"00-06": 2 * capacity, "06-07": capacity, "07-24": 2 * capacity}
    plan = solved(make_scenario([slow], [service(end="2026-07-02", concurrency=dip)], 1)).plan
    assert plan is not None and plan.total_cost == Decimal("520.00")
    assert counts(plan) == [(0, 24, 2)]


def test_a_hold_longer_than_the_service_ends_with_the_service(
    make_scenario: Any, capacity: int
) -> None:
    # The service runs day 1 only, in a 2-day horizon, with a hold of 30 h: every replica
    # started is held to the service's end at 24:00, not to 30:00. Two replicas all day,
    # 2 × (24 h + 1 setup) = 50 h → 500.00 (without the hold: A 25 h; B 6+10+4 = 20 h
    # and 3 setups = 23 h; 48 h → 480.00).
    day = service(end="2026-07-02", concurrency=dips(capacity))
    plan = solved(make_scenario([HOURLY], [day], days=2)).plan
    assert plan is not None and plan.total_cost == Decimal("480.00")
    s = make_scenario([HOURLY], [{**day, "min_hold_hours": 30}], days=2)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("500.00")
    assert counts(plan) == [(0, 24, 2)]


def test_the_hold_ends_at_an_end_inside_a_day(make_scenario: Any, capacity: int) -> None:
    # The service ends at 12:00 with no demand from 10:00 and no minimum: one replica
    # started at 00:00 under a 24 h hold is held to 12:00 (the segments are cut at the
    # end), 12 h + 1 setup → 130.00; not to the 24:00 cut of the day (250.00).
    midday = service(
        end="2026-07-01T12:00",
        concurrency={"00-10": capacity, "10-24": 0},
        min_replicas=0,
        min_hold_hours=24,
    )
    plan = solved(make_scenario([HOURLY], [midday], days=1)).plan
    assert plan is not None and plan.total_cost == Decimal("130.00")
    assert counts(plan) == [(0, 12, 1)]


def test_a_hold_ends_where_it_ends_not_where_demand_next_changes(
    make_scenario: Any, capacity: int
) -> None:
    # One replica needed 09:00-10:00 under a 3 h hold, at 10/h with no setup: held 09-12,
    # 3 h → 30.00. Replica counts are constant over a segment of constant demand, so
    # without a cut at 12:00 a replica started at 09:00 was held to the next cut, 24:00
    # (150.00), and the plan called optimal started it at 00:00, its hold over before
    # 09:00, and held it 00-10 (100.00).
    plain = offer("o", hourly={"price": 10})
    hour = service(
        end="2026-07-02",
        concurrency={"00-09": 0, "09-10": capacity, "10-24": 0},
        min_replicas=0,
        min_hold_hours=3,
    )
    result = solved(make_scenario([plain], [hour], days=1))
    assert result.status == "optimal" and result.plan is not None
    assert result.plan.total_cost == Decimal("30.00")
    assert counts(result.plan) == [(9, 12, 1)]


def test_a_hold_across_a_spring_forward_ends_after_its_real_hours(
    make_scenario: Any, capacity: int
) -> None:
    # Berlin, 29 Mar 2026 (23 h): two replicas from 00:00 to local 03:00, which is 2 real
    # hours (02:00 does not exist), under a 3 h hold at 10/h: both held 00:00-04:00 local,
    # 3 real hours each → 60.00 (480.00, held all day, was called optimal).
    plain = offer("o", hourly={"price": 10})
    night = service(
        start="2026-03-29",
        end="2026-03-30",
        concurrency={"00-03": 2 * capacity, "03-24": 0},
        min_replicas=0,
        min_hold_hours=3,
    )
    s = make_scenario([plain], [night], days=1, timezone="Europe/Berlin", start="2026-03-29")
    result = solved(s)
    assert result.status == "optimal" and result.plan is not None
    assert result.plan.total_cost == Decimal("60.00")
    assert all(r.billed_hours == 3 for r in result.plan.rentals)


def test_a_hold_on_package_cards_takes_the_night_from_a_job(
    make_scenario: Any, capacity: int
) -> None:
    # One daily package unit (stock 1) at 100 carries one replica 08:00-20:00 on both
    # days (2 × 100 < 2 × 12 h × 10). Without a hold a checkpointed 10 h job runs on the
    # package card in the night 20:00-06:00: 200.00 in all.
    o = offer("o", hourly={"price": 10}, daily={"price": 100, "stock": 1})
    day = service(concurrency={"00-08": 0, "08-20": capacity, "20-24": 0}, min_replicas=0)
    lora = job("lora", 10, checkpoint_every="30m")
    plan = solved(make_scenario([o], [day, lora], days=2)).plan
    assert plan is not None and plan.total_cost == Decimal("200.00")
    assert plan.train[0].held
    # Held 24 h, the replica started at 08:00 on day 1 serves until 08:00 on day 2 and may
    # leave at 20:00 on day 2: the card is free 00:00-08:00 and 20:00-24:00 only, no 10 h
    # stretch, so the job rents 10 h at 10 (100.00): 300.00.
    s = make_scenario([o], [{**day, "min_hold_hours": 24}, lora], days=2)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("300.00")
    assert counts(plan) == [(8, 44, 1)] and not plan.train[0].held
    assert check_plan(s, plan).ok


def test_releasing_a_replica_early_is_the_one_violation(make_scenario: Any, capacity: int) -> None:
    # The 960.00 plan of the day-long hold, tampered: one of the two replicas started at
    # 00:00 stops 06:00-08:00 on day 1 (its rentals and money untouched). It was due to
    # serve until 24:00: released 18 h early.
    s = make_scenario([HOURLY], [service(concurrency=dips(capacity), min_hold_hours=24)], 2)
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    [chat] = plan.replica
    first = chat.uses[0]
    assert (first.replicas, first.end - first.start) == (2, 30 * H)
    at = first.start

    def use(a: int, b: int, n: int) -> ReplicaUse:
        return first.model_copy(update={"start": at + a * H, "end": at + b * H, "replicas": n})

    uses = [use(0, 6, 2), use(6, 8, 1), use(8, 30, 2), *chat.uses[1:]]
    tampered = plan.model_copy(
        update={"assignments": [chat.model_copy(update={"uses": uses}), *plan.train]}
    )
    violations = check_plan(s, tampered).violations
    assert [(v.rule, v.subject, v.amount, v.unit) for v in violations] == [
        ("hold", "chat", 1, "replicas")
    ]
    assert "18 h before" in violations[0].message
    # without the hold the same plan is legal
    free = make_scenario([HOURLY], [service(concurrency=dips(capacity))], 2)
    assert check_plan(free, tampered).ok
    # a trillion replicas for one hour are replayed as one batch, not one by one
    huge = [use(0, 6, 2), use(6, 7, 10**12), use(7, 30, 2), *chat.uses[1:]]
    tampered = plan.model_copy(
        update={"assignments": [chat.model_copy(update={"uses": huge}), *plan.train]}
    )
    held = [v for v in check_plan(s, tampered).violations if v.rule == "hold"]
    assert [v.amount for v in held] == [10**12 - 2]


@settings(max_examples=25, deadline=None)
@given(
    levels=st.lists(st.integers(0, 3), min_size=6, max_size=6),
    holds=st.lists(st.integers(0, 40), min_size=2, max_size=2),
)
def test_a_longer_hold_never_costs_less(
    make_scenario: Any, capacity: int, levels: list[int], holds: list[int]
) -> None:
    # Any demand by 4-hour blocks: every plan passes the checker (solve refuses otherwise),
    # the baselines hold too and cost no less, and a longer hold never costs less (every
    # plan that holds longer also holds the shorter time).
    curve = {f"{4 * i:02d}-{4 * i + 4:02d}": n * capacity for i, n in enumerate(levels)}
    costs = []
    for hold in sorted(holds):
        s = make_scenario([HOURLY], [service(concurrency=curve, min_hold_hours=hold)], 2)
        plan = solved(s).plan
        assert plan is not None and plan.baseline_notes == {}
        assert plan.naive_cost is not None and plan.naive_cost >= plan.total_cost
        costs.append(plan.total_cost)
    assert costs[0] <= costs[1]


def _problems(tmp_path: Path, value: Any) -> list[str]:
    data = minimal_scenario()
    data["workloads"][1]["min_hold_hours"] = value
    import yaml

    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(LoadError) as caught:
        load_scenario(path)
    return [str(i) for i in caught.value.issues]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(-1, "greater than or equal to 0"), (2.5, "integer"), ("a day", "integer")],
)
def test_a_bad_hold_is_located(tmp_path: Path, value: Any, expected: str) -> None:
    [message] = _problems(tmp_path, value)
    assert "workloads[1].min_hold_hours" in message and expected in message
    assert "scenario.yaml:" in message


def test_the_hold_is_optional_and_none_by_default(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(minimal_scenario(), sort_keys=False))
    s: Scenario = load_scenario(path)
    chat = s.workload("chat")
    assert isinstance(chat, ServeWorkload) and chat.min_hold_hours is None


def test_quote_prices_a_held_service_as_held(make_scenario: Any, capacity: int) -> None:
    # The one config alone with min_hold_hours: 24 over the dips above: the plan's 960.00
    # (92 replica-hours + 4 setups), not the 940.00 of following demand hour by hour.
    from planner.problem import quote_replicas

    held = make_scenario([HOURLY], [service(concurrency=dips(capacity), min_hold_hours=24)], days=2)
    [row] = quote_replicas(held, "chat")
    assert row["exact_cost"] == 960
    free = make_scenario([HOURLY], [service(concurrency=dips(capacity))], days=2)
    [row] = quote_replicas(free, "chat")
    assert row["exact_cost"] == 940


@pytest.mark.parametrize("hold", [None, 3, 5, 24])
@pytest.mark.parametrize("bump", [False, True])
def test_a_quote_alone_does_not_depend_on_other_workloads_curves(
    make_scenario: Any, capacity: int, hold: int | None, bump: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A quote builds the workload alone, on its own curve's segments. Beside it another
    # service's curve changes at hours where chat's does not (01, 07, 13, 19, 21), so the
    # whole quarter's segments (and the ends of holds started at their starts) are finer.
    # The quote must be the same on both. `bump`: chat needs one replica 09-10 only, so a
    # hold ends inside an idle segment of its own curve.
    curve = {"00-09": 0, "09-10": capacity, "10-24": 0} if bump else dips(capacity)
    from planner import problem, serving

    other = {"00-01": capacity, "01-07": 3 * capacity, "07-13": capacity, "13-19": 2 * capacity}
    other |= {"19-21": 0, "21-24": capacity}
    s = make_scenario(
        [HOURLY],
        [
            service(concurrency=curve, min_hold_hours=hold, min_replicas=0),
            service(name="other", concurrency=other, min_hold_hours=2),
        ],
        days=2,
    )
    alone = problem.quote_replicas(s, "chat")
    whole = serving.replica_jobs(s)
    assert len(whole[0]) > len(serving.replica_jobs(s, only="chat")[0])

    def everything(scenario: Scenario, only: str | None = None) -> Any:
        segments, jobs = serving.replica_jobs(scenario)
        return segments, [j for j in jobs if j.name == only]

    monkeypatch.setattr(problem, "replica_jobs", everything)
    assert problem.quote_replicas(s, "chat") == alone


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 6), min_size=1, max_size=14),
    hold=st.integers(0, 12),
    data=st.data(),
)
def test_kept_counts_hold_every_started_replica_its_hours(
    lengths: list[int], hold: int, data: Any
) -> None:
    """`ReplicaJob.kept` (one pointer over the segments) against its rule read literally:
    in each segment the count is at least the replicas started in the segments before it
    whose starts lie within `hold` hours (`held_from`), and a count only rises where the
    series or a hold says so."""
    from planner.serving import ReplicaJob

    segments, at = [], 0
    for n in lengths:
        segments.append((at, at + n))
        at += n
    k = len(segments)
    within = tuple(data.draw(st.lists(st.booleans(), min_size=k, max_size=k)))
    series = data.draw(st.lists(st.integers(0, 5), min_size=k, max_size=k))
    job = ReplicaJob("chat", "serve", (), (0,) * k, (0,) * k, hold=hold, within=within)
    expected, started = list(series), [0] * k
    if hold:
        for s in range(k):
            recent = sum(started[u] for u in job.held_from(tuple(segments), s) if u < s)
            expected[s] = max(expected[s], recent)
            started[s] = max(0, expected[s] - (expected[s - 1] if s else 0))
    assert job.kept(tuple(segments), series) == expected
