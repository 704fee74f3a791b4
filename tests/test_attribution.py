"""One attribution everywhere: each workload's cost is the same figure in the plan JSON, the
tables, the CSV files and the HTML report, and the figures add up to the total."""

from __future__ import annotations

import csv
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from planner.views import UNUSED, spend_by_workload
from tests.planning import forcing_fortnight, offer, reserve, scenario, solved


def test_a_forced_pool_is_charged_to_who_forces_it_in_every_view(tmp_path: Path, cli: Any) -> None:
    # forcing_fortnight: j forces the weekly h200 package (1,400); chat rides on its spare
    # cards on days 0-6 and rents a100s hourly on days 7-13 (7 × 24 × 2 = 336): j costs
    # 1,400.00 (the package in full, idle included), chat 336.00, total 1,736.00.
    offers, workloads = forcing_fortnight()
    s = scenario(tmp_path, offers, workloads, days=14)
    result = solved(s)
    assert result.plan is not None and str(result.plan.total_cost) == "1736.00"
    expected = {"j": Decimal("1400.00"), "chat": Decimal("336.00")}
    assert result.plan.attribution == expected
    rows = {r.workload: r for r in spend_by_workload(result.plan)}
    assert rows["chat"].by_use > rows["chat"].cost  # by use it pays for the package cards
    assert rows[UNUSED].cost == 0
    out, page, saved = tmp_path / "csv", tmp_path / "plan.html", tmp_path / "plan.json"
    run = cli("solve", s.path, "--deterministic", "--workers", "2", "--json", saved,
              "--csv", out, "--report", page)  # fmt: skip
    assert run.exit_code == 0, run.output
    data = json.loads(saved.read_text())
    assert {k: Decimal(str(v)) for k, v in data["attribution"].items()} == expected
    with (out / "workloads.csv").open() as f:
        table = {r["workload"]: Decimal(r["cost"]) for r in csv.DictReader(f)}
    assert {k: v for k, v in table.items() if k != UNUSED} == expected
    with (out / "assignments.csv").open() as f:
        firsts = {r["workload"]: Decimal(r["cost"]) for r in csv.DictReader(f) if r["cost"]}
    assert firsts == expected
    text = " ".join(run.stdout.split())
    assert re.search(r"│ j .*│\s+1,400\.00 │\s+81% │", run.stdout), run.stdout
    assert re.search(r"│ chat .*│\s+336\.00 │\s+19% │", run.stdout), run.stdout
    assert "Costs: train 1,400.00 + serving and reserved 336.00 = total 1,736.00" in text
    assert "1,400.00, 81% of the plan" in text  # the forced purchase, the same share
    html = page.read_text(encoding="utf-8")
    workloads = html.split("<h2>Workloads")[1].split("</table>")[0]
    assert "<td>j</td><td>train</td><td>1,400.00</td><td>81%</td>" in workloads


def test_a_shared_pool_is_charged_to_its_users_by_card_hours_idle_included(
    tmp_path: Path,
) -> None:
    # One daily package (100) held for a day; two desks use its one card 09:00-12:00 and
    # 13:00-19:00 (3 and 6 card-hours): the package's 100.00, idle hours included, splits
    # 1:2 (33.33 and 66.67, the left-over fen to the larger remainder).
    offers = [offer("o", daily={"price": 100, "stock": 1})]
    desks = [
        reserve("am", hours="09:00-12:00", days=1),
        reserve("pm", hours="13:00-19:00", days=1),
    ]
    result = solved(scenario(tmp_path, offers, desks, days=1))
    assert result.plan is not None and str(result.plan.total_cost) == "100.00"
    assert result.plan.attribution == {"am": Decimal("33.33"), "pm": Decimal("66.67")}


def test_only_the_forced_packages_are_charged_to_who_forces_them(tmp_path: Path) -> None:
    # forcing_fortnight with hourly a100s at 10 and stock for two weekly packages: the plan
    # holds the package both weeks (2,800.00); j forces one (1,400.00), the second is
    # bought for chat alone, which pays it: j 1,400.00, chat 1,400.00, as the forced
    # warning's 1,400.00 (50%) says.
    offers, workloads = forcing_fortnight()
    offers[0]["weekly"]["stock"] = 2
    offers[1]["hourly"]["price"] = 10
    result = solved(scenario(tmp_path, offers, workloads, days=14))
    assert result.plan is not None and str(result.plan.total_cost) == "2800.00"
    assert result.plan.attribution == {"j": Decimal("1400.00"), "chat": Decimal("1400.00")}
