"""Limits of input (planner/domain/limits.py): each at its boundary, the limit accepted and
one step past it refused by `plan validate`, exit 1, at the field, with the value and the
limit."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pydantic import ValidationError

from planner.domain.scenario import Horizon
from tests.conftest import minimal_scenario
from tests.planning import job, offer, reserve
from tests.test_fuzz_regressions import refused

# (name, where in minimal_scenario(), value at the limit, value past it, message past it)
Case = tuple[str, tuple[Any, ...], Any, Any, str]
WORKLOAD_LIMITS: list[Case] = [
    ("reserve cards", ("workloads", 2, "cards"), 10_000, 10_001, "10,001 cards"),
    ("min_replicas", ("workloads", 1, "min_replicas"), 10_000, 10_001, "10,001 replicas"),
    ("max_cards", ("workloads", 0, "max_cards"), 10_000, 10_001, "10,001 cards"),
    (
        "max_cards_per_replica",
        ("workloads", 1, "max_cards_per_replica"),
        10_000,
        10_001,
        "10,001 cards",
    ),
    ("micro_batch", ("workloads", 0, "micro_batch"), 10_000, 10_001, "10,001 sequences"),
    ("tokens", ("workloads", 0, "tokens"), 1e15, 1e15 + 1, "1e+15 tokens"),
    ("seq_len", ("workloads", 0, "seq_len"), 10**7, 10**7 + 1, "10,000,001 tokens"),
    (
        "context_tokens",
        ("workloads", 1, "context_tokens"),
        10**7,
        10**7 + 1,
        "10,000,001 tokens",
    ),
    ("disk_gb", ("workloads", 0, "disk_gb"), 10**6, 10**6 + 1, "1,000,001 GB"),
    ("setup_minutes", ("workloads", 0, "setup_minutes"), "366d", "366d1m", "366d1m"),
    ("setup minutes", ("workloads", 0, "setup_minutes"), 527_040, 527_041, "366d1m"),
    ("checkpoint_every", ("workloads", 0, "checkpoint_every"), "366d", "366d1m", "366d1m"),
    (
        "flat concurrency",
        ("workloads", 1, "concurrency"),
        1_000_000,
        1_000_001,
        "peak demand 1,000,001 requests in flight",
    ),
]
OFFER_LIMITS: list[Case] = [  # written as a scenario's change to a catalog offer
    ("price", ("hourly", "price"), 10**9, 10**9 + 1, "1,000,000,001 is over the limit"),
    ("stock", ("hourly", "stock"), 10_000, 10_001, "10,001 units"),
    ("max_units", ("max_units",), 10_000, 10_001, "10,001 units"),
    ("cards_per_node", ("cards_per_node",), 10_000, 10_001, "10,001 cards"),
    ("min_hours", ("hourly", "min_hours"), 8784, 8785, "8,785 h"),
    ("increment_hours", ("hourly", "increment_hours"), 8784, 8785, "8,785 h"),
    ("disk price", ("disk_price_per_gb_month",), 10**9, 10**9 + 1, "1,000,000,001 is over"),
]


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        data = data.setdefault(part, {}) if isinstance(data, dict) else data[part]
    data[path[-1]] = value


def _refused(cli: Any, path: Any, field: str, *texts: str) -> None:
    """Refused at a line and column, naming the limit and where the README lists it."""
    refused(cli, path, field, *texts, "the limit of", 'docs/scenarios.md "Limits of input"')


@pytest.mark.parametrize(("name", "where", "limit", "past", "message"), WORKLOAD_LIMITS)
def test_workload_limits(
    cli: Any, write: Any, name: str, where: tuple[Any, ...], limit: Any, past: Any, message: str
) -> None:
    data = minimal_scenario()
    _set(data, where, limit)
    accepted = cli("validate", write(data))
    assert accepted.exit_code == 0, accepted.output
    _set(data, where, past)
    field = f"workloads[{where[1]}].{where[2]}"
    _refused(cli, write(data), field, message)


@pytest.mark.parametrize(("name", "where", "limit", "past", "message"), OFFER_LIMITS)
def test_offer_limits(
    cli: Any, write: Any, name: str, where: tuple[Any, ...], limit: Any, past: Any, message: str
) -> None:
    data = minimal_scenario()
    patch: dict[str, Any] = {"id": "jz-h200"}
    data["offers"] = [patch]
    _set(patch, where, limit)
    accepted = cli("validate", write(data))
    assert accepted.exit_code == 0, accepted.output
    _set(patch, where, past)
    _refused(cli, write(data), "offers[0]." + ".".join(where), message)


def test_commitment_limits(cli: Any, write: Any) -> None:
    data = minimal_scenario()
    data["offers"] = [{"id": "jz-h200", "monthly": {"stock": None}}]  # commitments count in it
    data["commitments"] = [
        {"offer": "jz-h200", "mode": "monthly", "units": 10_000, "start": "2026-07-01"},
        # packages must start inside the horizon (rule 8), so a count that fits the limit of
        # 366 is refused by that rule first; the limit itself is checked at 367 below
        {"offer": "jz-h200", "mode": "monthly", "units": 1, "start": "2026-07-01", "count": 1},
    ]
    accepted = cli("validate", write(data))
    assert accepted.exit_code == 0, accepted.output
    data["commitments"][0]["units"] = 10_001
    _refused(cli, write(data), "commitments[0].units", "10,001 units")
    data["commitments"][0]["units"] = 1
    data["commitments"][1]["count"] = 367
    _refused(cli, write(data), "commitments[1].count", "367 packages")


def test_link_at_least_a_hundredth_of_a_gigabit(cli: Any, write: Any) -> None:
    data = minimal_scenario()
    data["offers"] = [{"id": "jz-h200", "link_gbps": 0.01}]
    assert cli("validate", write(data)).exit_code == 0
    data["offers"][0]["link_gbps"] = 0.009
    result = cli("validate", write(data))
    assert result.exit_code == 1
    assert "offers[0].link_gbps: 0.009 Gbit/s is under the limit of 0.01 Gbit/s" in result.stderr


def test_at_least_one_token(cli: Any, write: Any) -> None:
    # a fraction of a token is no work: below about 2 ms of compute the model rounds a job to
    # nothing and called it infeasible ("does not fit its memory or is too slow")
    data = minimal_scenario()
    data["workloads"][0]["tokens"] = 1
    assert cli("validate", write(data)).exit_code == 0
    data["workloads"][0]["tokens"] = 0.5
    result = cli("validate", write(data))
    assert result.exit_code == 1
    assert "workloads[0].tokens: Input should be greater than or equal to 1" in result.stderr


def test_horizon_of_at_most_366_days(cli: Any, write: Any) -> None:
    data = minimal_scenario()
    data["horizon"] = {"start": "2026-01-01", "end": "2027-01-02"}  # 2026 has 365 days: +1
    accepted = cli("validate", write(data))
    assert accepted.exit_code == 0, accepted.output
    data["horizon"]["end"] = "2027-01-03"
    _refused(cli, write(data), "horizon", "horizon of 367 days", "366 days")


@pytest.mark.parametrize(
    ("start", "end", "refused"),
    [
        (dt.date(1970, 1, 1), dt.date(1970, 2, 1), False),
        (dt.date(1969, 12, 31), dt.date(1970, 2, 1), True),
        (dt.date(2199, 12, 1), dt.date(2200, 1, 1), False),  # end exclusive: 2199-12-31 is in
        (dt.date(2199, 12, 1), dt.date(2200, 1, 2), True),
    ],
)
def test_horizon_days_from_1970_to_2199(start: dt.date, end: dt.date, refused: bool) -> None:
    if not refused:
        assert Horizon(start=start, end=end).days == (end - start).days
        return
    with pytest.raises(ValidationError, match="outside the days the planner accepts"):
        Horizon(start=start, end=end)


def _serve(**fields: Any) -> dict[str, Any]:
    """minimal_scenario() with its service from 1 July to 1 August inclusive."""
    data = minimal_scenario()
    data["horizon"]["end"] = "2026-09-01"
    serve = data["workloads"][1]
    if "requests_per_s" in fields:
        del serve["concurrency"]
    serve.update(end="2026-08-02", **fields)
    return data


@pytest.mark.parametrize(
    ("fields", "past"),
    [
        # 500,000 in flight growing 100% a month: July ×1, August (1 Aug) ×2 = 1,000,000
        ({"concurrency": 500_000, "growth_per_month": 1.0}, {"concurrency": 500_000.5}),
        # 250,000 in flight, August scaled ×4 = 1,000,000
        ({"concurrency": 250_000, "month_scale": {"2026-08": 4}}, {"concurrency": 250_000.25}),
        # Little's law: 1,000 arrivals a second × 1,000 tokens ÷ 1 token/s = 1,000,000
        (
            {"requests_per_s": 1_000, "output_tokens": 1_000, "min_tokens_per_s": 1},
            {"requests_per_s": 1_000.001},
        ),
    ],
)
def test_peak_demand_counts_growth_month_scales_and_littles_law(
    cli: Any, write: Any, fields: dict[str, Any], past: dict[str, Any]
) -> None:
    data = _serve(**fields)
    accepted = cli("validate", write(data))
    assert accepted.exit_code == 0, accepted.output
    data["workloads"][1].update(past)
    field = "requests_per_s" if "requests_per_s" in fields else "concurrency"
    _refused(cli, write(data), f"workloads[1].{field}", "peak demand 1,000,001")


def test_largest_bill_at_the_money_scale(cli: Any, write: Any) -> None:
    # One offer at integer prices (money scale 1), 10,000 units in stock and a reserve of
    # 10,000 cards that could hold them all, a horizon of 10 days: 240 h + 1 (a fall-back
    # hour) + 720 (a month past the end) = 961 h.
    # 937,273,595 × 10,000 × 961 = 9,007,199,247,950,000 ≤ 2^53 = 9,007,199,254,740,992;
    # 937,273,596 × 10,000 × 961 = 9,007,199,257,560,000 > 2^53.
    def files(price: int) -> Any:
        catalog = {"name": "synthetic", "currency": "CNY", "source": "tests"}
        catalog["offers"] = [offer("o", hourly={"price": price, "stock": 10_000})]
        write(catalog, "catalog.yaml")
        scenario = {
            "name": "tiny",
            "currency": "CNY",
            "timezone": "Asia/Shanghai",
            "horizon": {"start": "2026-07-01", "end": "2026-07-11"},
            "catalog": "catalog.yaml",
            "workloads": [job("a", 3), reserve("desks", cards=10_000, days=9)],
        }
        return write(scenario)

    accepted = cli("validate", files(937_273_595))
    assert accepted.exit_code == 0, accepted.output
    _refused(
        cli,
        files(937_273_596),
        "catalog",
        "is 9,007,199,257,560,000 at the solver's money scale of 1 per CNY",
        "over the limit of 2^53 = 9,007,199,254,740,992",
        "offer o hourly: price 937273596 × 10,000 units × 961 h",
    )


def test_a_dear_offer_nobody_could_fill_is_not_refused(cli: Any, write: Any, tmp_path: Any) -> None:
    """The money limit counts what a plan could hold, not a catalog's worst case: a
    99,999.9999/h offer at the default (unlimited) stock beside a cheap one, for one job of
    at most one card, validates and plans (on the cheap offer). Counted at 10,000 units over
    a quarter (2,208 h + 1 + 720 = 2,929 h) at the money scale of a price in ten-thousandths,
    its bill would be 999,999,999 × 10,000 × 2,929 ≈ 2.9 × 10^16: over 2^53."""
    catalog = {"name": "dear", "currency": "CNY", "source": "tests"}
    catalog["offers"] = [
        offer("dear", hourly={"price": 99_999.9999}),
        offer("cheap", hourly={"price": 2}),
    ]
    write(catalog, "catalog.yaml")
    scenario = {
        "name": "tiny",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": "2026-07-01", "end": "2026-10-01"},
        "catalog": "catalog.yaml",
        "workloads": [job("a", 3)],
    }
    path = write(scenario)
    assert cli("validate", path).exit_code == 0
    out = tmp_path / "plan.json"
    result = cli("solve", path, "--workers", "1", "--deterministic", "--json", out)
    assert result.exit_code == 0, result.output
    import json

    plan = json.loads(out.read_text())
    assert {a["offer"] for a in plan["assignments"]} == {"cheap"}
