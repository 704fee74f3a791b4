"""`plan solve --csv DIR`: a checked plan as CSV files with documented columns (docs/outputs.md),
every money column in the plan's currency (its `currency` column), totals equal to the JSON's."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from planner.domain.costs import REPORTED_UNIT
from planner.domain.money import from_minor
from planner.domain.plan import Plan
from planner.domain.timeaxis import TimeAxis
from planner.views import attribution, order_sheet, pool_hours, spend_by_use, spend_by_workload

FILES = (
    "rentals.csv",
    "orders.csv",
    "assignments.csv",
    "workloads.csv",
    "capacity.csv",
    "breakdown.csv",
    "monthly.csv",
)


def _write(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(header)
        for row in rows:
            out.writerow(["" if v is None else _cell(v) for v in row])


def _cell(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def write_csv(folder: Path, axis: TimeAxis, plan: Plan) -> list[Path]:
    """Write the plan's CSV files into `folder` (created if need be); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    c = plan.currency
    _write(
        folder / "rentals.csv",
        ("id", "offer", "card", "mode", "units", "cards", "start", "end", "billed_hours",
         "cost", "currency", "committed", "workload"),
        (
            (r.id, r.offer, r.card, r.mode, r.units, r.cards, r.start, r.end, r.billed_hours,
             r.cost, c, r.committed, r.workload)
            for r in plan.rentals
        ),
    )  # fmt: skip
    _write(
        folder / "orders.csv",
        ("offer", "card", "mode", "committed", "workload", "unit_cards", "base_units",
         "peak_units", "usual_units", "hours", "days", "pattern", "first", "last", "rentals",
         "cost", "currency"),
        (
            (o.offer, o.card, o.mode, o.committed, o.workload, o.unit_cards, o.base_units,
             o.peak_units, o.usual_units, o.hours, o.days, o.pattern, o.first, o.last,
             o.rentals, o.cost, c)
            for o in order_sheet(axis, plan)
        ),
    )  # fmt: skip
    _write(
        folder / "assignments.csv",
        ("workload", "kind", "card", "cards", "offer", "mode", "held", "start", "end",
         "replicas", "own_cost", "cost", "currency"),
        _assignment_rows(plan),
    )  # fmt: skip
    _write(
        folder / "workloads.csv",
        (
            "workload",
            "kind",
            "rentals",
            "storage",
            "held",
            "cost",
            "package_share",
            "by_use",
            "currency",
        ),
        (
            (
                w.workload,
                w.kind,
                w.rentals,
                w.storage,
                w.held,
                w.cost,
                w.package_share,
                w.by_use,
                c,
            )
            for w in spend_by_workload(plan)
        ),
    )
    _write(
        folder / "capacity.csv",
        ("time", "card", "mode", "held_cards", "used_cards"),
        (
            (axis.instant(h), p.card, p.mode, held, used)
            for p in pool_hours(axis, plan)
            for h, (held, used) in enumerate(zip(p.held, p.used, strict=True))
        ),
    )
    _write(
        folder / "breakdown.csv",
        ("section", "term", "amount", "unit", "cost", "currency"),
        _breakdown_rows(plan),
    )
    assert plan.cost_breakdown is not None
    use = spend_by_use(axis, plan)
    cash = plan.cost_breakdown.by_month
    none = from_minor(0, c)  # a month without money: 0.00 like every amount
    _write(
        folder / "monthly.csv",
        ("month", "cash", "by_use", "currency"),
        ((m, cash.get(m, none), use.get(m, none), c) for m in sorted(cash.keys() | use.keys())),
    )
    return [folder / name for name in FILES]


def _assignment_rows(plan: Plan) -> Iterable[Sequence[Any]]:
    """A train workload's one row; a serve or reserve workload's row per run of a constant
    replica count (its money on its first row): `own_cost`, its own rentals and storage, and
    `cost`, what the plan charges it (`views.spend_by_workload`, as every view states it)."""
    c = plan.currency
    charged = attribution(plan)
    for a in plan.train:
        yield (a.workload, a.kind, a.card, a.cards, a.offer, a.mode, a.held, a.start, a.end,
               None, a.cost, charged[a.workload], c)  # fmt: skip
    for ra in plan.replica:
        for i, u in enumerate(ra.uses):
            first = i == 0
            yield (ra.workload, ra.kind, u.card, u.cards, u.offer, u.mode, u.held, u.start,
                   u.end, u.replicas, ra.cost if first else None,
                   charged[ra.workload] if first else None, c)  # fmt: skip


def _breakdown_rows(plan: Plan) -> Iterable[Sequence[Any]]:
    b = plan.cost_breakdown
    assert b is not None
    c = plan.currency
    for term, value in b.paid.items():
        yield ("paid", term.value, None, None, value, c)
    yield ("total", "total", None, None, b.total, c)
    for term, q in b.reported.items():
        yield ("reported", term.value, q.amount, REPORTED_UNIT[term], q.cost, c)
