"""Tiny planning instances on synthetic catalogs, with exact, hand-checkable durations.

Every job is a LoRA fine-tune of llama-2-7b whose throughput is *measured* at 1,000
tokens/s on one a100-80g, so `hours_of_work(h)` tokens take exactly h hours on one card.
Setup is 0 unless an offer or job says otherwise.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from planner.domain.load import load_scenario
from planner.domain.plan import Assignment, Plan
from planner.domain.scenario import Scenario
from planner.report import annotate
from planner.solve import Result, SolveParams, solve

TOKENS_PER_HOUR = 3_600_000


def hours_of_work(hours: float) -> float:
    return hours * TOKENS_PER_HOUR


def offer(id: str, card: str = "a100-80g", **modes: Any) -> dict[str, Any]:
    """An offer of one-card units on a node of 8, no setup time, with the given modes."""
    return {"id": id, "card": card, "cards_per_node": 8, "setup_minutes": 0, **modes}


def job(name: str, hours: float, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "train",
        "model": "llama-2-7b",
        "method": "lora",
        "tokens": hours_of_work(hours),
        "max_cards": 1,
        "setup_minutes": 0,
        "measured": {"card": "a100-80g", "cards": 1, "tokens_per_s": 1000},
        **fields,
    }


def reserve(
    name: str = "desk", cards: int = 1, hours: str = "09:00-12:00", days: int = 1, **fields: Any
) -> dict[str, Any]:
    """People's a100-80g cards in `hours` of every day from 2026-07-01, for `days` days."""
    return {
        "name": name,
        "kind": "reserve",
        "card": "a100-80g",
        "cards": cards,
        "hours": hours,
        "start": "2026-07-01",
        "end": f"2026-07-{1 + days:02d}",
        **fields,
    }


def service(**fields: Any) -> dict[str, Any]:
    """A llama-3.1-8b service ("chat") for 2026-07-01, 10 requests of 4,096 tokens in flight
    at 20 tokens/s each; `fields` override."""
    return {
        "name": "chat",
        "kind": "serve",
        "model": "llama-3.1-8b",
        "start": "2026-07-01",
        "end": "2026-07-02",
        "context_tokens": 4096,
        "min_tokens_per_s": 20,
        "concurrency": 10,
        **fields,
    }


def scenario(
    folder: Path,
    offers: list[dict[str, Any]],
    jobs: list[dict[str, Any]],
    days: int = 10,
    *,
    timezone: str = "Asia/Shanghai",
    start: str | dt.date = "2026-07-01",
    **extra: Any,
) -> Scenario:
    """A scenario of `days` local days from `start` in `timezone` on a synthetic catalog,
    written to `folder` (tests pass a folder under pytest's temporary directory; the
    `make_scenario` fixture does)."""
    first = start if isinstance(start, dt.date) else dt.date.fromisoformat(start)
    catalog = {"name": "synthetic", "currency": "CNY", "source": "tests", "offers": offers}
    (folder / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    data = {
        "name": "tiny",
        "currency": "CNY",
        "timezone": timezone,
        "horizon": {
            "start": first.isoformat(),
            "end": (first + dt.timedelta(days=days)).isoformat(),
        },
        "catalog": "catalog.yaml",
        "workloads": jobs,
        **extra,
    }
    path = folder / "scenario.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_scenario(path)


def train_of(plan: Plan, name: str) -> Assignment:
    """The train assignment of workload `name`."""
    return next(a for a in plan.train if a.workload == name)


def with_assignment(plan: Plan, name: str, **changes: Any) -> Plan:
    """`plan` with the assignment of workload `name` changed: for checker tests."""
    assignments = [
        a.model_copy(update=changes) if a.workload == name else a for a in plan.assignments
    ]
    return plan.model_copy(update={"assignments": assignments})


def solved(s: Scenario, seconds: float = 20.0) -> Result:
    """Solve deterministically (fixed seed and workers, deterministic time budget); the
    checked plan annotated for people, as `plan solve` shows it."""
    result = solve(s, SolveParams(time_limit=seconds, workers=2, seed=0, deterministic=True))
    if result.plan is None:
        return result
    assert result.problem is not None and result.solution is not None
    return replace(result, plan=annotate(result.problem, result.solution, result.plan))
