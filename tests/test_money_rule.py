"""The money rule (docs/rules.md): a plan's lines (rentals, each workload's storage) are its
exact money apportioned to the minor unit, so that every view adds up to the total rounded
once; here on a catalog priced in USD and converted at a stated rate, whose prices carry
more digits than the fen."""

from __future__ import annotations

import csv
import json
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.check import check_plan
from planner.domain.load import load_scenario
from planner.domain.money import apportion, to_minor
from planner.domain.plan import Plan
from planner.domain.scenario import Scenario
from planner.export.csvfiles import write_csv
from planner.views import STORAGE, order_sheet, spend_by_use, spend_by_workload
from tests.planning import job, offer, reserve, service, solved

# One a100-80g offer in USD with prices of three and four decimals, over two days: a desk
# of 22 h a day takes its weekly package (80.317 < 2 × 22 × 1.937), whose other hours a
# service may use; five of its seven days lie past the horizon, held and used by no one.
USD_OFFER = {
    **offer("cloud-a100", hourly={"price": 1.937, "stock": 4}),
    "weekly": {"price": 80.317, "stock": 1},
    "spot": {"price": 0.7713, "preemptions_per_hour": 0.05, "restart_minutes": 10, "stock": 2},
    "disk_price_per_gb_month": 0.0833,
}
WORKLOADS = [
    reserve("desk", hours="00:00-22:00", days=2, disk_gb=30),
    service(concurrency={"00-09": 0, "09-18": 10, "18-24": 0}, end="2026-07-03", disk_gb=40),
    job("short", 2, disk_gb=50),
    job("long", 9, disk_gb=20, checkpoint_every="30m"),
]


def test_apportion_adds_up_to_the_total_rounded_once() -> None:
    # 3 × 1/3 fen: the total is 1 fen, the earliest of three equal remainders takes it
    assert apportion([Fraction(1, 300)] * 3, "CNY") == [1, 0, 0]
    # 1.006 × 7.1 = 7.1426 four times: 28.5704 in all, 28.57 (each rounded alone: 28.56)
    assert apportion([Decimal("7.1426")] * 4, "CNY") == [715, 714, 714, 714]
    assert apportion([Decimal("7.145"), Decimal("2.005"), Decimal(3)], "CNY") == [715, 200, 300]
    assert apportion([Decimal("-0.004"), Decimal("0.016")], "JPY") == [0, 0]
    # held cards' 1.00 stated, split 1:2 between a share and the rest
    assert apportion([Fraction(1, 3), Fraction(2, 3)], "CNY", 100) == [33, 67]


PARTS = st.lists(st.fractions(min_value=-1000, max_value=1000, max_denominator=10**7), max_size=12)


@given(PARTS)
def test_apportioned_parts_stay_within_a_minor_unit(parts: list[Fraction]) -> None:
    cut = apportion(parts, "CNY")
    assert sum(cut) == to_minor(sum(parts, Fraction(0)), "CNY")
    for exact, part in zip(parts, cut, strict=True):
        assert abs(exact * 100 - part) < 1
        if (exact * 100).denominator == 1:
            assert part == exact * 100


@given(PARTS, st.integers(-(10**6), 10**6))
def test_parts_scaled_to_a_given_total_add_up_to_it(parts: list[Fraction], total: int) -> None:
    whole = sum(parts, Fraction(0))
    if not whole:
        return
    cut = apportion(parts, "CNY", total)
    assert sum(cut) == total
    for exact, part in zip(parts, cut, strict=True):
        assert abs(exact * 100 * total / (whole * 100) - part) < 1


def usd_scenario(folder: Path, rate: Decimal) -> Scenario:
    """Two days on the USD offer, in CNY at `rate`."""
    catalog = {"name": "usd", "currency": "USD", "source": "tests", "offers": [USD_OFFER]}
    (folder / "usd.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    data = {
        "name": "converted",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": "2026-07-01", "end": "2026-07-03"},
        "catalog": "usd.yaml",
        "exchange_rates": {"USD": {"rate": str(rate), "date": "2026-06-30"}},
        "workloads": WORKLOADS,
    }
    (folder / "scenario.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return load_scenario(folder / "scenario.yaml")


def _cents(values: Any) -> int:
    return sum(to_minor(Decimal(str(v)), "CNY") for v in values if v not in ("", None))


def _csv(path: Path, column: str) -> list[str]:
    with path.open(encoding="utf-8", newline="") as f:
        return [row[column] for row in csv.DictReader(f)]


def assert_every_view_adds_up(scenario: Scenario, plan: Plan, folder: Path) -> None:
    """Order lines, workloads, breakdown, months (cash and by use), the CSV files and the
    JSON add up to the JSON's total, in fen, and the checker accepts the plan."""
    check = check_plan(scenario, plan)
    assert check.ok, check.violations
    stored = json.loads(plan.model_dump_json(), parse_float=Decimal)
    total = _cents([stored["total_cost"]])
    assert total == to_minor(check.total, "CNY")  # the exact total, rounded once
    b = stored["cost_breakdown"]
    storage = [a["storage"] for a in stored["assignments"]]
    assert _cents(r["cost"] for r in stored["rentals"]) + _cents(storage) == total
    assert _cents(b["paid"].values()) == _cents([b["total"]]) == total
    assert _cents(b["by_month"].values()) == total
    spent = [a["cost"] for a in stored["assignments"]]
    spent += [a["package_share"] for a in stored["assignments"]]
    assert _cents(spent) + _cents([b["held_unused"]]) == total
    lines = order_sheet(scenario.axis, plan)
    assert _cents(line.cost for line in lines) == total
    assert _cents(line.cost for line in lines if line.mode == STORAGE) == _cents(storage)
    rows = spend_by_workload(plan)
    assert _cents(r.by_use for r in rows) == total
    assert [r.workload for r in rows[:-1]] == [a.workload for a in plan.assignments]
    assert _cents(spend_by_use(scenario.axis, plan).values()) == total
    write_csv(folder, scenario.axis, plan)
    assert _cents(_csv(folder / "orders.csv", "cost")) == total
    assert _cents(_csv(folder / "workloads.csv", "by_use")) == total
    assert _cents(_csv(folder / "monthly.csv", "cash")) == total
    assert _cents(_csv(folder / "monthly.csv", "by_use")) == total
    assert _cents(_csv(folder / "rentals.csv", "cost")) + _cents(storage) == total
    breakdown = zip(*(_csv(folder / "breakdown.csv", k) for k in ("section", "cost")), strict=True)
    assert _cents(cost for section, cost in breakdown if section == "paid") == total


@pytest.mark.parametrize("rate", ["7.1", "7.1234567"])
def test_a_converted_plan_adds_up_in_every_view(tmp_path: Path, rate: str) -> None:
    """The reported case: prices in USD at 7.1 CNY/USD (1.937 × 7.1 = 13.7527 CNY/h, every
    rental a fraction of a fen off), and a rate of seven decimals."""
    scenario = usd_scenario(tmp_path, Decimal(rate))
    result = solved(scenario, 5)
    assert result.plan is not None
    plan = result.plan
    # the plan holds every kind of line: hourly and spot rentals, a package shared by the
    # desk and the service and held past the horizon, storage of every workload
    assert {r.mode for r in plan.rentals} == {"hourly", "spot", "weekly"}
    assert all(a.storage > 0 for a in plan.assignments)
    assert len([a for a in plan.assignments if a.package_share]) == 2
    assert plan.cost_breakdown is not None and plan.cost_breakdown.held_unused > 0
    assert_every_view_adds_up(scenario, plan, tmp_path / "csv")


def test_the_reports_add_up_as_printed(cli: Any, tmp_path: Path) -> None:
    """`plan solve`'s tables, CSV files, JSON and HTML report of the converted plan: the order
    sheet's cost column, the workloads' by-use line and the report's tables each add up to
    the total it prints."""
    usd_scenario(tmp_path, Decimal("7.1"))
    saved, out, page = tmp_path / "plan.json", tmp_path / "csv", tmp_path / "plan.html"
    result = cli("solve", tmp_path / "scenario.yaml", "--deterministic", "--time-limit", "5",
                 "--workers", "1", "--json", saved, "--csv", out, "--report", page)  # fmt: skip
    assert result.exit_code == 0, result.output
    text = result.output
    headline = re.search(r"total CNY ([\d,.]+)", text)
    assert headline is not None
    total = Decimal(headline[1].replace(",", ""))
    orders = text.split("What to order")[1].split("Workloads")[0]
    costs = [row.split("│")[-2].strip() for row in orders.splitlines() if row.startswith("│")]
    *line_costs, printed_total = [Decimal(c.replace(",", "")) for c in costs]
    assert sum(line_costs) == printed_total == total
    by_use = re.search(r"Costs: (.*?)\. Held", " ".join(text.split()))
    assert by_use is not None
    figures = [Decimal(x.replace(",", "")) for x in re.findall(r"[\d,]+\.\d\d", by_use[1])]
    assert sum(figures[:-1]) == figures[-1] == total
    html = page.read_text(encoding="utf-8")
    for title in ("What to order", "Workloads"):
        table = html.split(f"<h2>{title}")[1].split("</table>")[0]
        rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
        column = -1 if title == "What to order" else 2
        cells = [re.findall(r"<td>(.*?)</td>", row)[column] for row in rows]
        *parts, shown = [Decimal(c.replace(",", "")) for c in cells]
        assert sum(parts) == shown == total, title
    plan = Plan.model_validate_json(saved.read_text())
    assert plan.total_cost == total
    assert cli("check", tmp_path / "scenario.yaml", saved).exit_code == 0


# a rate in scenario currency per catalog currency, as a central bank quotes it
RATES = st.decimals(min_value=Decimal("0.01"), max_value=Decimal(200), places=7)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rate=RATES)
def test_every_view_adds_up_at_any_rate(
    tmp_path_factory: pytest.TempPathFactory, rate: Decimal
) -> None:
    folder = tmp_path_factory.mktemp("rate")
    scenario = usd_scenario(folder, rate)
    result = solved(scenario, 0.5)
    assert result.plan is not None
    assert_every_view_adds_up(scenario, result.plan, folder / "csv")


def test_the_checker_holds_each_line_to_the_rule(tmp_path: Path) -> None:
    """`plan check` accepts the stated lines and refuses any other split of the same money:
    a fen moved between two rentals, between two package shares, into storage, onto
    `held_unused`, or onto the total."""
    scenario = usd_scenario(tmp_path, Decimal("7.1"))
    plan = solved(scenario, 5).plan
    assert plan is not None and plan.cost_breakdown is not None
    assert check_plan(scenario, plan).ok
    fen = Decimal("0.01")

    def refused(tampered: Plan, subject: str) -> None:
        violations = check_plan(scenario, tampered).violations
        assert any(v.rule == "cost" and v.subject == subject for v in violations), violations

    first, second = plan.rentals[0], plan.rentals[1]
    moved = [
        r.model_copy(update={"cost": r.cost + (fen if r is first else -fen)})
        if r in (first, second)
        else r
        for r in plan.rentals
    ]
    refused(plan.model_copy(update={"rentals": moved}), first.id)
    shared = [a for a in plan.assignments if a.package_share]
    assert len(shared) == 2  # the desk and the service share the package

    def shift(a: Any) -> Any:
        if a in shared:
            step = fen if a is shared[0] else -fen
            return a.model_copy(update={"package_share": a.package_share + step})
        return a

    assignments = [shift(a) for a in plan.assignments]
    refused(
        plan.model_copy(update={"assignments": assignments}), f"{shared[0].workload} package share"
    )
    a = plan.assignments[0]
    more = a.model_copy(update={"storage": a.storage + fen, "cost": a.cost + fen})
    refused(
        plan.model_copy(update={"assignments": [more, *plan.assignments[1:]]}),
        f"{a.workload} storage",
    )
    b = plan.cost_breakdown
    unused = b.model_copy(update={"held_unused": b.held_unused + fen})
    refused(plan.model_copy(update={"cost_breakdown": unused}), "cost_breakdown.held_unused")
    refused(plan.model_copy(update={"total_cost": plan.total_cost + fen}), "total")
