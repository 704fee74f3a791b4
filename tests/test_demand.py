"""Serving demand per hour from the shipped q3 scenario, worked by hand."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.demand import demand_at, hourly_demand
from planner.domain.load import load_scenario
from planner.domain.workload import ServeWorkload
from tests.conftest import REPO


@pytest.fixture(scope="module")
def q3() -> Any:
    return load_scenario(REPO / "scenarios" / "q3.yaml")


def serve(q3: Any, name: str) -> ServeWorkload:
    workload = q3.workload(name)
    assert isinstance(workload, ServeWorkload)
    return workload


def test_concurrency_curve_with_monthly_growth(q3: Any) -> None:
    chat = serve(q3, "chat-70b")  # from 15 July, +15% per calendar month
    assert demand_at(chat, dt.datetime(2026, 7, 14, 9)) == 0  # before it starts
    assert demand_at(chat, dt.datetime(2026, 7, 15, 9)) == 48  # Wednesday 09:00
    assert demand_at(chat, dt.datetime(2026, 7, 18, 9)) == 8  # Saturday 09:00
    assert demand_at(chat, dt.datetime(2026, 8, 17, 15)) == 74  # Monday: 64 × 1.15 = 73.6
    assert demand_at(chat, dt.datetime(2026, 9, 14, 15)) == 85  # 64 × 1.15² = 84.64


def test_requests_per_second_by_littles_law(q3: Any) -> None:
    search = serve(q3, "legal-search-qwen32b")  # 600 output tokens at ≥ 15 tokens/s = 40 s
    assert demand_at(search, dt.datetime(2026, 8, 4, 10)) == 24  # 0.6/s × 40 s
    assert demand_at(search, dt.datetime(2026, 8, 8, 10)) == 4  # weekend 0.1/s × 40 s
    assert demand_at(search, dt.datetime(2026, 9, 1, 10)) == 36  # September × 1.5


def test_hourly_demand_covers_the_horizon(q3: Any) -> None:
    levels = hourly_demand(q3, serve(q3, "assistant-8b"))
    assert len(levels) == 92 * 24
    assert levels[0] == 2 and levels[9] == 16 and levels[19] == 4  # Wed 1 July


@given(hour=st.integers(0, 92 * 24 - 1))
def test_demand_is_never_negative_and_zero_outside_the_service(q3: Any, hour: int) -> None:
    chat = serve(q3, "chat-70b")
    when = dt.datetime(2026, 7, 1) + dt.timedelta(hours=hour)
    level = demand_at(chat, when)
    assert level >= 0
    assert (level > 0) == (when >= dt.datetime(2026, 7, 15))


def test_replica_configs_pick_the_precision_each_card_runs(q3: Any) -> None:
    from planner.configs import replica_configs

    configs = replica_configs(q3, serve(q3, "chat-70b"))  # precision: [fp8, int8]
    by_card = {(c.card, c.cards): c for c in configs}
    assert by_card[("h200-141g", 1)].precision == "fp8"
    assert by_card[("a100-80g", 8)].precision == "int8"  # the A100 has no FP8
    assert ("a100-80g", 1) not in by_card  # 70 GB of int8 weights leave no KV room on 80 GB
    assert not any(c.mode == "spot" for c in configs)  # serving is never on spot
    # one 8-card A100 machine carries several times what one H200 does
    assert by_card[("a100-80g", 8)].capacity > 3 * by_card[("h200-141g", 1)].capacity > 0


def test_replica_jobs_segment_the_horizon(q3: Any) -> None:
    from planner.serving import replica_jobs

    segments, jobs = replica_jobs(q3)
    assert segments[0][0] == 0 and segments[-1][1] == 92 * 24
    assert all(a < b and (a // 24 == (b - 1) // 24) for a, b in segments)  # within one day
    by_name = {j.name: j for j in jobs}
    dev = by_name["dev-boxes"]  # 4 cards, weekdays 09:00-19:00
    for i, (a, _) in enumerate(segments):
        hour, weekday = a % 24, (2 + a // 24) % 7  # 1 July 2026 is a Wednesday
        assert dev.demand[i] == (4 if 9 <= hour < 19 and weekday < 5 else 0)
    chat = by_name["chat-70b"]
    assert max(chat.demand) == 85 and chat.minimum[0] == 0  # not yet launched on 1 July
    assert all(c.mode != "spot" for j in jobs for c in j.configs)


def test_dominated_configs_are_dropped_exactly() -> None:
    from planner.configs import ReplicaConfig
    from planner.serving import undominated

    def config(cards: int, units: int, capacity: int, offer: str = "o") -> ReplicaConfig:
        return ReplicaConfig("c", cards, offer, "hourly", units, "bf16", capacity, 0.0)

    small, big, worse = config(1, 1, 10), config(2, 2, 30), config(2, 2, 15)
    other = config(2, 2, 5, offer="p")  # another offer: its stock differs, so it stays
    assert undominated([small, big, worse, other]) == [small, big, other]
