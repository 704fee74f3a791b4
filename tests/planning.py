"""Tiny planning instances on synthetic catalogs, with exact, hand-checkable durations.

Every job is a LoRA fine-tune of llama-2-7b whose throughput is *measured* at 1,000
tokens/s on one a100-80g, so `hours_of_work(h)` tokens take exactly h hours on one card.
Setup is 0 unless an offer or job says otherwise.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from planner.domain.load import load_scenario
from planner.domain.plan import Assignment, Plan
from planner.domain.scenario import Scenario
from planner.problem import build_problem
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


def priced_train(name: str, days: int, workload: dict[str, Any]) -> dict[str, Any]:
    """A scenario (as data) of one train workload on the shipped price list, from 2026-07-01
    for `days` days; `workload` gives the job's own fields, kind and a bf16 LoRA of 4,096
    tokens a sequence and micro-batches of 4 by default."""
    job = {"kind": "train", "method": "lora", "precision": "bf16", "seq_len": 4096}
    return {
        "name": name,
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": "2026-07-01", "end": f"2026-07-{1 + days:02d}"},
        "catalog": "jizhisuan-2026-09",
        "workloads": [{**job, "micro_batch": 4, **workload}],
    }


def only_on_h200(name: str, hours: float, **fields: Any) -> dict[str, Any]:
    """A full fine-tune of llama-2-7b on one card: more than an a100-80g holds, so among
    a100-80g and h200-141g offers only the h200 ones run it."""
    measured = {"card": "h200-141g", "cards": 1, "tokens_per_s": 1000}
    return job(name, hours, method="full", measured=measured, **fields)


def forcing_fortnight() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(offers, workloads) of 14 days: a 5 h job `j` that only a weekly package of two
    h200 cards (1,400) runs, due by day 2, and a one-card service `chat` for the 14 days
    that may also rent a100s hourly at 2. Its optimum: the package on days 0-6 runs both,
    the service rents hourly on days 7-13: 1,400 + 7 × 24 × 2 = 1,736."""
    offers = [
        offer("pkg", card="h200-141g", unit_cards=2, weekly={"price": 1400, "stock": 1}),
        offer("hr", hourly={"price": 2, "stock": 4}),
    ]
    return offers, [only_on_h200("j", 5, deadline="2026-07-03"), service(end="2026-07-15")]


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


# --- hypothesis: serve workloads with daily curves ------------------------------------------

# What one replica of `service()`'s llama-3.1-8b carries in flight (requests at 20 tokens/s
# each): 100 on one a100-80g card, 220 on one h200-141g card. Levels up to 250 need one to
# three cards, so generated curves make the replica count rise and fall through the day.
SERVE_LEVELS = st.integers(0, 250)
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@st.composite
def day_curves(
    draw: st.DrawFn, levels: st.SearchStrategy[int] = SERVE_LEVELS, max_ranges: int = 3
) -> int | dict[str, int]:
    """A level by hour of day as a scenario writes it: hour ranges covering 00-24 once, such
    as {"00-08": 2, "08-20": 5, "20-24": 3} (up to `max_ranges` of them), or a number (flat)."""
    cuts = sorted(draw(st.sets(st.integers(1, 23), max_size=max_ranges - 1)))
    if not cuts and draw(st.booleans()):
        return draw(levels)
    return {f"{lo:02d}-{hi:02d}": draw(levels) for lo, hi in pairwise([0, *cuts, 24])}


@st.composite
def week_curves(draw: st.DrawFn, levels: st.SearchStrategy[int] = SERVE_LEVELS) -> Any:
    """A daily curve, the same every day; or, one time in four, two daily curves spread over
    the weekdays by name ({"mon": {...}, "tue": 40, ...}), so that even a two-day horizon
    from a Wednesday may see the curve change from one day to the next."""
    if draw(st.integers(0, 3)):
        return draw(day_curves(levels))
    first, second = draw(day_curves(levels)), draw(day_curves(levels))
    picks = draw(st.lists(st.booleans(), min_size=7, max_size=7))
    return {day: first if pick else second for day, pick in zip(WEEKDAYS, picks, strict=True)}


@st.composite
def services(draw: st.DrawFn, days: int = 2, name: str = "chat") -> dict[str, Any]:
    """A `service()` serving some hours of a horizon of `days` days from 2026-07-01 00:00,
    its concurrency a generated curve; sometimes one-card replicas only, sometimes no
    replica required where the demand is 0."""
    first = dt.datetime(2026, 7, 1)
    start = draw(st.integers(0, 24 * days - 1))
    length = draw(st.integers(1, 24 * days - start))
    fields: dict[str, Any] = {
        "name": name,
        "start": (first + dt.timedelta(hours=start)).isoformat(),
        "end": (first + dt.timedelta(hours=start + length)).isoformat(),
        "concurrency": draw(week_curves()),
    }
    if draw(st.booleans()):
        fields["max_cards_per_replica"] = 1
    if draw(st.booleans()):
        fields["min_replicas"] = 0
    return service(**fields)


@st.composite
def with_service(
    draw: st.DrawFn, instances: st.SearchStrategy[dict[str, Any]], serve: bool | None = None
) -> dict[str, Any]:
    """An instance of `instances` ({"offers", "jobs", "days"}, as tests/
    test_planner_properties.py draws them) plus a generated serve workload: always when
    `serve` is True, never when False, in about half the instances when None."""
    instance = draw(instances)
    if serve is False or (serve is None and not draw(st.booleans())):
        return instance
    return {**instance, "jobs": [*instance["jobs"], draw(services(instance["days"]))]}


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


def assert_plans_the_cheapest_count_series(s: Scenario) -> None:
    """The scenario (one replica workload on one config) plans, proven optimal, at exactly
    the brute force's least price (`cheapest_count_series`)."""
    best = cheapest_count_series(s)
    if best is None:
        return
    result = solved(s)
    assert result.plan is not None and result.status == "optimal"
    assert result.plan.total_cost == best


def cheapest_count_series(s: Scenario) -> Decimal | None:
    """Brute force for a scenario of one replica workload on one config: the least price
    of every count series at or above each segment's need, up to the peak, that keeps the
    workload's min hold, each priced by `ReplicaRate.series` (held hours, setups and the
    cheapest pairing's round-up); in cents. None when nothing is needed.

    Without a hold nothing is held outside the span of needed segments (it only adds
    hours); under one, the whole workload's span is tried, since a hold keeps replicas
    past the need."""
    problem = build_problem(s, serving=True)
    [job] = problem.replica_jobs
    [config] = job.configs
    rate = problem.replica_rate(job.name, config)
    segments = problem.segments
    needs = [job.need(config, k) for k in range(len(segments))]
    active = [k for k, n in enumerate(needs) if n]
    if not active:
        return None
    span = (
        [k for k in range(len(segments)) if job.within[k]]
        if job.hold
        else range(active[0], active[-1] + 1)
    )
    peak = max(needs)
    choices = [range(n, peak + 1) if k in span else (0,) for k, n in enumerate(needs)]

    def keeps(series: tuple[int, ...]) -> bool:
        rises = [max(0, n - (series[k - 1] if k else 0)) for k, n in enumerate(series)]
        return all(
            n >= sum(rises[u] for u in job.held_from(segments, k)) for k, n in enumerate(series)
        )

    best = min(rate.series(list(c), segments) for c in itertools.product(*choices) if keeps(c))
    return cents(best)


def cents(amount: Fraction) -> Decimal:
    return (Decimal(amount.numerator) / Decimal(amount.denominator)).quantize(Decimal("0.01"))


def first_start(s: Scenario, techniques: frozenset[str]) -> tuple[Fraction | None, str]:
    """The first checked plan a deterministic solve of `s` reports with `techniques`: its
    cost, and whose it is."""
    seen: list[tuple[Fraction | None, str]] = []

    def report(incumbent: Fraction | None, bound: Fraction, elapsed: float, what: str = "") -> None:
        seen.append((incumbent, what))

    params = SolveParams(time_limit=20, workers=2, seed=0, deterministic=True)
    solve(s, replace(params, techniques=techniques), report)
    return next((i, w) for i, w in seen if w.startswith("the checked"))
