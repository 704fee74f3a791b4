"""What people read: the CSV files add up to the plan JSON, the HTML report stands alone
and renders its charts with data in a real browser, and the headline warnings name what a
budget holder must see first."""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
import struct
import subprocess
import zlib
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from planner.export.csvfiles import FILES, write_csv
from planner.export.page import CHARTS, render
from planner.report import headline_warnings
from tests.planning import job, offer, reserve, solved


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _money(rows: list[dict[str, str]], column: str = "cost") -> Decimal:
    return sum((Decimal(r[column]) for r in rows if r[column]), Decimal(0))


def test_the_csv_files_add_up_to_the_plan_json(
    cli: Any, make_scenario: Any, tmp_path: Path
) -> None:
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4}, daily={"price": 40, "stock": 4})],
        [reserve("desk", cards=2, hours="09:00-12:00", days=10)],
    )
    out, saved = tmp_path / "csv", tmp_path / "plan.json"
    result = cli("solve", s.path, "--deterministic", "--time-limit", "5", "--csv", out,
                 "--json", saved)  # fmt: skip
    assert result.exit_code == 0, result.output
    plan = json.loads(saved.read_text())
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    total = Decimal(str(plan["total_cost"]))
    breakdown = _rows(out / "breakdown.csv")
    (row,) = [r for r in breakdown if r["section"] == "total"]
    assert Decimal(row["cost"]) == total
    assert _money([r for r in breakdown if r["section"] == "paid"]) == total
    storage = next(r for r in breakdown if r["term"] == "storage")
    assert _money(_rows(out / "rentals.csv")) + Decimal(storage["cost"]) == total
    assert _money(_rows(out / "orders.csv")) == total  # rentals and storage
    assert _money(_rows(out / "workloads.csv"), "by_use") == total
    monthly = _rows(out / "monthly.csv")
    cash = sum(Decimal(str(v)) for v in plan["cost_breakdown"]["by_month"].values())
    assert _money(monthly, "cash") == cash == _money(monthly, "by_use")
    # 2 cards × 3 h × 10 days held and used, as the JSON's utilisation says
    capacity = _rows(out / "capacity.csv")
    held = sum(int(r["held_cards"]) for r in capacity)
    assert held == plan["utilisation"]["a100-80g"]["held_card_hours"] == 60
    assert sum(int(r["used_cards"]) for r in capacity) == 60
    assert {r["currency"] for r in _rows(out / "rentals.csv")} == {"CNY"}


def test_the_q3_csv_totals_equal_the_plan(q3_plan: Any, tmp_path: Path) -> None:
    scenario, plan = q3_plan
    write_csv(tmp_path, scenario.axis, plan)
    assert _money(_rows(tmp_path / "rentals.csv")) == sum(r.cost for r in plan.rentals)
    assert len(_rows(tmp_path / "rentals.csv")) == len(plan.rentals)
    monthly = _rows(tmp_path / "monthly.csv")
    assert _money(monthly, "cash") == sum(plan.cost_breakdown.by_month.values())
    assert _money(monthly, "by_use") == _money(monthly, "cash")
    capacity = _rows(tmp_path / "capacity.csv")
    assert sum(int(r["held_cards"]) for r in capacity) == sum(
        u.held_card_hours for u in plan.utilisation.values()
    )
    # every amount in fen, a workload without a package share too (it was written "0")
    money_cells = ("rentals", "storage", "held", "cost", "package_share", "by_use")
    for row in _rows(tmp_path / "workloads.csv"):
        assert all(re.fullmatch(r"-?\d+\.\d\d", row[k]) for k in money_cells), row
    # and a month without cash (q3's last: the machine is bought in an earlier month)
    for row in monthly:
        assert all(re.fullmatch(r"-?\d+\.\d\d", row[k]) for k in ("cash", "by_use")), row


def _fetched(page: str) -> list[str]:
    """The URLs a page's tags load: script and img src, link href."""
    found: list[str] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            named = dict(attrs)
            url = named.get("src") if tag in ("script", "img", "iframe") else None
            url = named.get("href") if tag == "link" else url
            if url:
                found.append(url)

    Tags().feed(page)
    return found


def test_the_report_stands_alone(q3_plan: Any) -> None:
    scenario, plan = q3_plan
    page = render(scenario.axis, plan, headline_warnings(scenario, plan))
    assert _fetched(page) == []  # nothing is fetched when the page is viewed
    for chart in CHARTS:
        assert f'id="{chart}"' in page
    assert "What to order" in page and "jz-b300-machine" in page


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _png_colours(path: Path) -> int:
    """How many distinct byte values the decoded PNG rows hold (1: a blank page)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(idat)))


def test_the_report_renders_its_charts_in_a_real_browser(q3_plan: Any, tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium)")
    scenario, plan = q3_plan
    page = tmp_path / "plan.html"
    page.write_text(render(scenario.axis, plan, headline_warnings(scenario, plan)))
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=20000"]  # fmt: skip
    dom = subprocess.run(
        [*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180
    ).stdout
    marker = dom.split('data-charts="', 1)[1].split('"', 1)[0].replace("&quot;", '"')
    points = json.loads(marker)
    assert set(points) == set(CHARTS) and all(points[c] > 0 for c in CHARTS), points
    shot = tmp_path / "plan.png"
    subprocess.run(
        [*flags, "--window-size=1280,2000", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=180,
    )
    assert _png_colours(shot) > 16  # not a blank page


def _committed_desk(make_scenario: Any) -> tuple[Any, Any]:
    """A daily package committed for 10 days (400.00) that a desk uses 3 h of each 24, and
    its plan."""
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4}, daily={"price": 40, "stock": 4})],
        [reserve("desk", cards=1, hours="09:00-12:00", days=10)],
        commitments=[{"offer": "o", "mode": "daily", "units": 1, "start": "2026-07-01"}],
    )
    plan = solved(s).plan
    assert plan is not None
    return s, plan


def test_a_mostly_idle_package_is_the_first_warning(make_scenario: Any) -> None:
    s, plan = _committed_desk(make_scenario)
    (warning,) = headline_warnings(s, plan)
    assert warning.startswith("o daily: CNY 400.00 of packages held at 12% use")
    assert "(210 of 240 card-hours in the horizon idle), for desk" in warning


def test_idle_committed_hourly_units_are_not_called_packages(make_scenario: Any) -> None:
    # one hourly unit committed for the whole 10 days (2,400.00) for a desk that uses 3 h of
    # each 24: warned of as committed units held at 12% use, not as packages
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4})],
        [reserve("desk", cards=1, hours="09:00-12:00", days=10)],
        commitments=[{"offer": "o", "mode": "hourly", "units": 1, "start": "2026-07-01"}],
    )
    plan = solved(s).plan
    assert plan is not None
    [warning] = [w for w in headline_warnings(s, plan) if w.startswith("o hourly")]
    assert warning.startswith("o hourly: CNY 2,400.00 of committed units held at 12% use")


def test_a_committed_package_is_said_to_be_committed_not_bought(make_scenario: Any) -> None:
    # the committed daily package above: the package decisions call it committed, used by
    # the desk, not "bought for" it (the plan buys nothing; the scenario commits to it)
    from planner.problem import build_problem
    from planner.report import decisions

    s, plan = _committed_desk(make_scenario)
    problem = build_problem(s, serving=True)
    [line] = [x for x in decisions(problem, plan) if x.startswith("o daily")]
    assert "; committed (the plan must include it), used by desk; they use 30 of 240" in line
    assert "bought" not in line


def test_sequences_past_the_models_context_are_warned_of(make_scenario: Any, cli: Any) -> None:
    # llama-2-7b was trained on 4,096 positions: a job at 8,192 is planned (the estimate
    # assumes extended positions work) and warned of; one at 4,096 is not. plan fit too.
    long = make_scenario([offer("o", hourly={"price": 10})], [job("a", 3, seq_len=8192)], days=2)
    plan = solved(long).plan
    assert plan is not None
    said = [w for w in headline_warnings(long, plan) if "max_position_embeddings" in w]
    assert said == [
        "a: a sequence of 8,192 tokens is past llama-2-7b's context of 4,096 "
        "(max_position_embeddings): at that length its positions must be extended (RoPE "
        "scaling or a long-context variant), which the estimates assume works"
    ]
    fits = make_scenario([offer("o", hourly={"price": 10})], [job("a", 3, seq_len=4096)], days=2)
    plan = solved(fits).plan
    assert plan is not None
    assert not [w for w in headline_warnings(fits, plan) if "max_position_embeddings" in w]
    args = ("fit", "llama-2-7b", "--task", "lora", "--card", "a100-80g", "--seq-len")
    assert "past llama-2-7b's context of 4,096" in " ".join(cli(*args, "8192").stdout.split())
    assert "max_position_embeddings" not in cli(*args, "4096").stdout


def test_a_stale_catalog_is_named(make_scenario: Any) -> None:
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4})],
        [reserve("desk", cards=1, hours="09:00-12:00", days=2)],
        days=2,
    )
    catalog = s.catalogs[0].model_copy(update={"date": dt.date(2026, 1, 2)})
    stale = s.model_copy(update={"catalogs": (catalog,)})
    plan = solved(s).plan
    assert plan is not None
    assert headline_warnings(s, plan) == []
    (warning,) = headline_warnings(stale, plan)
    assert "dated 2026-01-02, 180 days before the horizon starts" in warning


def test_an_unwritable_report_path_is_one_clear_error(
    cli: Any, make_scenario: Any, tmp_path: Path
) -> None:
    s = make_scenario([offer("o", hourly={"price": 10})], [reserve("desk", days=1)], days=1)
    missing = tmp_path / "a-file"  # not a folder: nothing can be written under it
    missing.write_text("")
    for flag, name in (("--report", "plan.html"), ("--json", "plan.json"), ("--csv", "out")):
        result = cli("solve", s.path, "--time-limit", "5", flag, missing / name)
        assert result.exit_code == 1, flag
        assert "Traceback" not in result.output
        # a file's folder is known before the solve; --csv makes its own folder, so only
        # writing finds out
        said = f"{flag}: folder '{missing}' is not a folder" if name != "out" else "cannot write"
        assert said in " ".join(result.output.split()), flag


def test_a_sweep_with_a_report_is_refused_before_solving(
    cli: Any, make_scenario: Any, tmp_path: Path
) -> None:
    s = make_scenario([offer("o", daily={"price": 40})], [reserve("desk", days=1)], days=1)
    result = cli("whatif", s.path, "--commit", "o=1..2:daily", "--report", tmp_path / "w.html")
    assert result.exit_code == 1
    assert "not a commitment sweep" in result.output and "solving" not in result.output
    assert not (tmp_path / "w.html").exists()


def test_a_whatif_report_puts_base_and_variant_side_by_side(
    cli: Any, make_scenario: Any, tmp_path: Path
) -> None:
    # the desk on hourly (300.00) against a committed daily package (400.00): +100.00, exact
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4}, daily={"price": 40, "stock": 4})],
        [reserve("desk", cards=1, hours="09:00-12:00", days=10)],
    )
    page = tmp_path / "whatif.html"
    result = cli("whatif", s.path, "--commit", "o=1:daily", "--deterministic", "--workers",
                 "1", "--time-limit", "5", "--jobs", "1", "--report", page)  # fmt: skip
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert "delta CNY +100.00: exact (both plans proven optimal)" in text
    for side in ("base", "variant"):
        assert all(f'id="{side}-{chart}"' in text for chart in CHARTS)
    assert _fetched(text) == []
    # the variant's idle package is its headline warning, on its side only
    assert text.count("o daily: CNY 400.00 of packages held at 12% use") == 1


def test_a_month_without_cash_is_written_as_zero_in_fen(make_scenario: Any, tmp_path: Path) -> None:
    # one monthly package bought 07-20 carries a desk to 08-10: July has all the cash, and
    # August only use; its cash cell is 0.00 like every amount (it was written "0")
    o = offer("o", hourly={"price": 10}, monthly={"price": 1000})
    desk = reserve("desk", 1, "00:00-24:00", days=21, start="2026-07-20", end="2026-08-10")
    s = make_scenario([o], [desk], days=21, start="2026-07-20")
    plan = solved(s).plan
    assert plan is not None and {r.mode for r in plan.rentals} == {"monthly"}
    write_csv(tmp_path, s.axis, plan)
    monthly = {r["month"]: r for r in _rows(tmp_path / "monthly.csv")}
    assert monthly["2026-08"]["cash"] == "0.00" and monthly["2026-08"]["by_use"] != "0.00"
