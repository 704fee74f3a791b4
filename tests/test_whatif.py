"""`plan whatif` and `plan reprice`: the variant equals the patched scenario solved directly,
the delta is exact only when both sides are optimal, the break-even price is where the
totals cross, and re-pricing equals the checker's recomputation."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.check import check_plan
from planner.cli.common import read_plan
from planner.cli.reprice import saving
from planner.cli.variant import Change, _builder
from planner.domain.load import load_scenario
from planner.whatif.compare import Delta, Side, delta
from tests.conftest import REPO
from tests.planning import job, offer, reserve, solved

Q3 = REPO / "scenarios" / "q3.yaml"

FAST = ("--deterministic", "--workers", "1", "--time-limit", "5", "--jobs", "1")


def _desk_scenario(tmp_path: Path, make_scenario: Any) -> Path:
    """One a100-80g card for people, 09:00-12:00 on each of 10 days. Hourly at 10.00 costs
    3 h × 10.00 = 30.00 a day, 300.00 in all; a daily package costs 40.00 a day."""
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4}, daily={"price": 40, "stock": 4})],
        [reserve("desk", cards=1, hours="09:00-12:00", days=10)],
    )
    assert s.path is not None
    return s.path


COMMIT = {"commitments": [{"offer": "o", "mode": "daily", "units": 1, "start": "2026-07-01"}]}


def _patch(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "patch.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _whatif(cli: Any, *args: Any) -> dict[str, Any]:
    result = cli("whatif", *args, *FAST, "--json", "-")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_break_even_of_a_commitment_worked_by_hand(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    path = _desk_scenario(tmp_path, make_scenario)
    patch = tmp_path / "commit.yaml"
    patch.write_text(yaml.safe_dump(COMMIT))
    report = _whatif(cli, path, "--patch", patch)
    # base: 10 days × 3 h × 10.00 = 300.00 hourly; the variant pays 10 daily packages
    # (enough to reach the horizon end) × 40.00 = 400.00 and the desk uses them: +100.00
    assert report["base"]["total_cost"] == 300.0 and report["variant"]["total_cost"] == 400.0
    assert report["delta"] == {
        "found": 100.0,
        "low": 100.0,
        "high": 100.0,
        "exact": True,
        "sign_unknown": False,
    }
    # the commitment pays while 10 × p ≤ 300.00: p ≤ 30.00 a package
    (b,) = report["break_even"]
    assert (b["offer"], b["mode"], b["low"], b["high"], b["exact"]) == (
        "o",
        "daily",
        30.0,
        30.0,
        True,
    )
    assert b["quantity"] == 10.0
    (pool,) = report["committed"]
    # 10 packages × 24 h held, 3 h a day used
    assert pool["variant"] == {
        "held_card_hours": 240.0,
        "used_card_hours": 30.0,
        "utilisation": 0.125,
    }
    assert pool["base"]["held_card_hours"] == 0
    # its net effect: the packages cost 400.00 and take the desk's 300.00 of hourly spend
    assert (pool["commitment_cost"], pool["other_spend"], pool["net"]) == (400.0, -300.0, 100.0)
    # the printed price is where the variant's total crosses the base's
    at = _whatif(cli, path, "--patch", patch, "--price", "o.daily=30")
    assert at["delta"]["found"] == 0.0
    above = _whatif(cli, path, "--patch", patch, "--price", "o.daily=30.01")
    assert above["delta"]["found"] == 0.1  # 10 × 0.01


def test_the_variant_equals_the_patched_scenario_solved_directly(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    path = _desk_scenario(tmp_path, make_scenario)
    patch = tmp_path / "commit.yaml"
    patch.write_text(yaml.safe_dump(COMMIT))
    report = _whatif(cli, path, "--patch", patch)
    merged = yaml.safe_load(path.read_text()) | COMMIT
    direct = path.with_name("merged.yaml")  # beside it: the catalog is a relative path
    direct.write_text(yaml.safe_dump(merged))
    plan = solved(load_scenario(direct), 5).plan
    assert plan is not None
    assert report["variant"]["total_cost"] == float(plan.total_cost)
    assert report["variant"]["status"] == plan.status


def test_the_delta_is_an_interval_unless_both_sides_are_optimal() -> None:
    optimal = Side("base", "optimal", total=Fraction(100), bound=Fraction(100))
    found = Side("variant", "feasible", total=Fraction(110), bound=Fraction(90))
    assert delta(optimal, optimal) == Delta(Fraction(0), Fraction(0), Fraction(0))
    d = delta(optimal, found)
    # the variant's optimum lies in [90, 110]: the difference in [-10, +10]
    assert d == Delta(Fraction(10), Fraction(-10), Fraction(10))
    assert not d.exact and d.sign_unknown
    far = Side("variant", "feasible", total=Fraction(150), bound=Fraction(120))
    d = delta(found, far)
    # base optimum in [90, 110], variant's in [120, 150]: [120 - 110, 150 - 90]
    assert (d.low, d.high, d.sign_unknown) == (Fraction(10), Fraction(60), False)


def test_a_break_even_names_the_same_modes_other_purchases_it_holds_at_the_price(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # five daily packages committed at @20 (the days after them are bought daily too, at
    # the same 20.00 the flag sets for the whole mode, cheaper than 3 h × 10.00 hourly):
    # base 300.00, variant 10 × 20.00 = 200.00. With only the commitment's price moving,
    # it pays while 5 × p + 100.00 ≤ 300.00: p ≤ 40.00, and the line says that the other
    # five packages (100.00) were held at 20.00 (a rerun at @40 moves them too)
    path = _desk_scenario(tmp_path, make_scenario)
    report = _whatif(cli, path, "--commit", "o=1:daily@20x5")
    assert (report["base"]["total_cost"], report["variant"]["total_cost"]) == (300.0, 200.0)
    (b,) = report["break_even"]
    assert (b["low"], b["high"], b["others"]) == (40.0, 40.0, 100.0)
    text = cli("whatif", path, "--commit", "o=1:daily@20x5", *FAST).stdout
    said = " ".join(text.split())
    assert "its other daily purchases of o, CNY 100.00, kept at that price" in said


def test_a_curve_scaled_hour_by_hour_is_said_in_one_change_line() -> None:
    # --scale-demand changes a curve's every hour (168 lines for a weekly curve): the
    # terminal says one line per field past a handful, the others as they are
    from planner.cli.whatif import CHANGES_SHOWN, _compact

    hours = [
        f"workloads.api.requests_per_s.fri.{h:02d}-{h + 1:02d}: 0.5 -> 0.25" for h in range(24)
    ]
    other = "offers.o.hourly.price: 10 -> 12"
    said = _compact([*hours, other])
    assert said == [
        "workloads.api.requests_per_s: 24 values changed, e.g. fri.00-01: 0.5 -> 0.25",
        other,
    ]
    assert _compact(hours[:CHANGES_SHOWN]) == hours[:CHANGES_SHOWN]


def test_reprices_saving_is_the_difference_of_the_figures_shown() -> None:
    # a replan bound of 405,117.635 is shown as 405,117.64 (half-even); the most re-planning
    # could save is 414,223.33 less that, 9,105.69, not the exact difference rounded
    # (9,105.695 -> 9,105.70), which does not reconcile with the figures printed
    side = Side(
        "replan", "feasible", total=Fraction(40_700_000, 100), bound=Fraction(405_117_635, 1000)
    )
    found = saving(Fraction(41_422_333, 100), side, "CNY")
    assert str(found["at_most"]) == "9105.69" and str(found["found"]) == "7223.33"
    assert not found["exact"]
    proven = replace(side, status="optimal", bound=side.total)
    assert saving(Fraction(41_422_333, 100), proven, "CNY")["at_most"] == found["found"]


def test_reprice_equals_the_checkers_recomputation(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    path = _desk_scenario(tmp_path, make_scenario)
    saved = tmp_path / "plan.json"
    assert cli("solve", path, "--deterministic", "--workers", "1", "--json", saved).exit_code == 0
    same = cli("reprice", path, saved, "--no-replan", "--json", "-")
    assert same.exit_code == 0, same.output
    report = json.loads(same.stdout)
    assert report["repriced_total"] == report["stated_total"] == 300.0 and report["feasible"]
    # hourly up 30%: 30 h × 13.00 = 390.00, and re-planning moves nothing (daily is 400.00)
    dearer = cli("reprice", path, saved, "--price", "o.hourly=×1.3", *FAST[:5], "--json", "-")
    assert dearer.exit_code == 0, dearer.output
    report = json.loads(dearer.stdout)
    assert report["repriced_total"] == 390.0 and report["feasible"]
    assert report["replan"]["total_cost"] == 390.0
    assert report["saving"] == {"found": 0.0, "at_most": 0.0, "exact": True}
    # at 15.00 an hour (45.00 a day) the daily package wins: re-planning saves 50.00
    report = json.loads(
        cli("reprice", path, saved, "--price", "o.hourly=15", *FAST[:5], "--json", "-").stdout
    )
    assert (report["repriced_total"], report["replan"]["total_cost"]) == (450.0, 400.0)
    assert report["saving"]["found"] == 50.0
    # the same price written as a patch file, and the saved plan checked against it: the
    # checker recomputes the same total (and flags the stated 300.00 as a cost mismatch)
    dear = tmp_path / "dear.yaml"
    dear.write_text(yaml.safe_dump({"offers": [{"id": "o", "hourly": {"price": 15}}]}))
    checked = check_plan(load_scenario(path, [dear]), read_plan(saved))
    assert float(checked.total) == report["repriced_total"]
    assert {v.rule for v in checked.violations} == {"cost"}
    # no hourly stock: the plan breaks, and says where
    result = cli("reprice", path, saved, "--stock", "o.hourly=0", "--no-replan", "--json", "-")
    assert result.exit_code == 1  # a failed check, as plan check exits
    broken = json.loads(result.stdout)
    assert not broken["feasible"] and {v["rule"] for v in broken["violations"]} == {"stock"}
    printed = " ".join(
        cli("reprice", path, saved, "--stock", "o.hourly=0", "--no-replan").stdout.split()
    )
    assert "the plan breaks (it states" in printed and "the plan costs" not in printed
    # a shift the horizon holds says so, in the JSON and the printed line (the desk starts
    # with the horizon, so nothing moves)
    result = cli("reprice", path, saved, "--shift", "desk=-1d", "--no-replan")
    assert result.exit_code == 0, result.output
    note = "nothing moves: start held at the horizon's start, 2026-07-01, not 2026-06-30"
    assert f"(--shift desk=-1d ({note})): the plan costs" in " ".join(result.stdout.split())


# Each shorthand flag, and the patch file it stands for: the same variant. The patch is the
# flag's own (computed from q3), written to a YAML file and merged as `--patch` merges one;
# a flag that rewrote something the file cannot say (a Decimal, a date) would differ here.
SHORTHANDS = [
    ("price", "*.spot=×1.3"),
    ("price", "jz-h200.hourly=12.5"),
    ("stock", "jz-h200.hourly=40"),
    ("commit", "jz-h200=8:monthly"),
    ("commit", "jz-h200=4:monthly@9000/2026-08-01x1"),
    ("shift", "chat-70b=-14d"),
    ("drop", "legal-13b-eval"),
    ("scale-demand", "0.8"),
    ("scale-demand", "assistant-8b=1.5"),
    ("set", "workloads.legal-70b-cpt.deadline=2026-09-15T00:00"),
]


@pytest.mark.parametrize(("flag", "text"), SHORTHANDS)
def test_each_shorthand_equals_its_patch_file(flag: str, text: str, tmp_path: Path) -> None:
    base = load_scenario(Q3)
    by_flag = Change.of(None, **{flag.replace("-", "_"): [text]}).apply(Q3, base)
    patch = tmp_path / "patch.yaml"
    patch.write_text(yaml.safe_dump(_builder(flag)(base, text), sort_keys=False))
    by_file = Change.of([patch]).apply(Q3, base)
    assert (by_flag.spec, by_flag.catalogs) == (by_file.spec, by_file.catalogs)
    assert (by_flag.spec, by_flag.catalogs) != (base.spec, base.catalogs)  # it changed q3


def test_a_flag_and_its_patch_give_the_same_whatif(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    path = _desk_scenario(tmp_path, make_scenario)
    flag = _whatif(cli, path, "--commit", "o=1:daily")
    patch = tmp_path / "commit.yaml"
    patch.write_text(yaml.safe_dump(COMMIT))
    by_file = _whatif(cli, path, "--patch", patch)
    for report in (flag, by_file):
        del report["variant"]["solve_seconds"], report["base"]["solve_seconds"]
    assert flag["variant"] == by_file["variant"] and flag["delta"] == by_file["delta"]
    assert flag["break_even"] == by_file["break_even"] != []


def test_a_flag_and_its_patch_give_the_same_whatif_on_a_classed_service(
    cli: Any, tmp_path: Path
) -> None:
    # the flag names the service as the file does; scaling its demand scales both classes
    # (their shares of its curve): the same what-if as the patch doubling its concurrency
    split = REPO / "scenarios" / "classes-chat-long.yaml"
    patch = _patch(tmp_path, {"workloads": [{"name": "assistant", "concurrency": 400}]})
    by_file = _whatif(cli, split, "--patch", patch)
    for flag in ("2", "assistant=2"):
        report = _whatif(cli, split, "--scale-demand", flag)
        for r in (report, by_file):
            r["variant"].pop("solve_seconds", None), r["base"].pop("solve_seconds", None)
        assert report["variant"] == by_file["variant"] and report["delta"] == by_file["delta"]
        assert report["changes"] == by_file["changes"]
    assert by_file["delta"]["found"] == 842.88 and by_file["delta"]["exact"]


def test_an_untouched_workload_keeps_its_base_place_where_that_costs_nothing(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # One card, two 10-hour jobs: w runs first (it is listed first), x from hour 10. Drop
    # w and rule 12 alone would start x at hour 0 (earlier finishes), at the same cost;
    # the what-if keeps x where the base had it, so only the change shows as moved.
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 1})],
        [job("w", 10), job("x", 10)],
        days=2,
    )
    assert s.path is not None
    report = _whatif(cli, s.path, "--drop", "w")
    assert [row["workload"] for row in report["moved"]] == ["w"]
    assert report["delta"]["found"] == -100.0 and report["delta"]["exact"]
    dropped = _patch(tmp_path, {"workloads": [{"name": "w", "delete": True}]})
    alone = solved(load_scenario(s.path, [dropped]), 5).plan
    assert alone is not None
    (x,) = alone.train
    assert x.start.hour == 0  # without the base as a reference x would have moved


def test_the_help_shows_each_flags_grammar(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # wide enough that rich does not cut a line short
    for command in ("whatif", "reprice"):
        result = cli(command, "--help")
        assert result.exit_code == 0, result.output
        text = "".join(c for c in result.output if c not in "│ \n")  # the table's wrapping
        # rich markup would eat (or choke on) the grammar's optional parts
        assert "MODE[@PRICE][/FROM][xCOUNT]" in text and "[WORKLOAD=]K" in text


def _timeless(report: dict[str, Any]) -> dict[str, Any]:
    """A whatif report without its timing fields."""
    text = json.dumps(report, sort_keys=True)
    return json.loads(re.sub(r'"solve_seconds": [0-9.e+-]+', '"solve_seconds": 0', text))  # type: ignore[no-any-return]


@pytest.mark.slow
def test_a_sweep_on_ray_equals_the_local_run(
    cli: Any,
    tmp_path: Path,
    make_scenario: Any,
    ray_here: None,
) -> None:
    path = _desk_scenario(tmp_path, make_scenario)
    sweep = ("--commit", "o=1..2:daily", "--deterministic", "--workers", "1", "--time-limit", "5")
    local = cli("whatif", path, *sweep, "--jobs", "1", "--json", "-")
    assert local.exit_code == 0, local.output
    on_ray = cli("whatif", path, *sweep, "--executor", "ray", "--jobs", "2", "--json", "-")
    assert on_ray.exit_code == 0, on_ray.output
    report = json.loads(on_ray.stdout)
    # N daily packages held 10 days cost N × 10 × 40.00 (the desk fits on the first), against
    # 300.00 hourly, whichever machine solved it
    assert [row["summary"]["total_cost"] for row in report["levels"]] == [400.0, 800.0]
    assert _timeless(report) == _timeless(json.loads(local.stdout))


def test_a_sweep_with_a_level_without_a_plan_answers_and_says_why(
    cli: Any, tmp_path: Path, make_scenario: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the last level found no plan (made so here): the sweep still answers (exit 0), says
    # why under its table, once, and only a base without a plan fails the command
    import planner.cli.whatif as cli_whatif
    from planner.whatif.compare import Side

    real = cli_whatif.solve_sides

    def last_fails(recipes: Any, *args: Any) -> list[Side]:
        sides = real(recipes, *args)
        reasons = ["no plan at this level", "no plan at this level"]
        return [*sides[:-1], Side(sides[-1].label, "infeasible", reasons=reasons)]

    monkeypatch.setattr(cli_whatif, "solve_sides", last_fails)
    path = _desk_scenario(tmp_path, make_scenario)
    sweep = ("--commit", "o=1..2:daily", "--deterministic", "--workers", "1", "--time-limit", "5")
    result = cli("whatif", path, *sweep, "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("2 units, infeasible: no plan at this level") == 1
    report = json.loads(cli("whatif", path, *sweep, "--jobs", "1", "--json", "-").stdout)
    assert report["levels"][-1]["summary"]["reasons"] == ["no plan at this level"]


def test_an_address_without_ray_is_refused(cli: Any, tmp_path: Path, make_scenario: Any) -> None:
    path = _desk_scenario(tmp_path, make_scenario)
    result = cli("whatif", path, "--price", "o.daily=30", "--address", "auto", *FAST)
    assert result.exit_code == 1
    assert "--executor ray" in result.output


def _weekly_desk(make_scenario: Any, **extra: Any) -> Any:
    """The desk of `_desk_scenario` on an offer selling weekly packages at 250."""
    return make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4}, weekly={"price": 250, "stock": 4})],
        [reserve("desk", cards=1, hours="09:00-12:00", days=10)],
        **extra,
    )


def _committed_weekly_desk(make_scenario: Any) -> Any:
    """`_weekly_desk` with 1 weekly unit committed from 07-01 (two packages reach the 10-day
    horizon's end)."""
    committed = {"offer": "o", "mode": "weekly", "units": 1, "start": "2026-07-01"}
    return _weekly_desk(make_scenario, commitments=[committed])


def test_the_whatif_lists_what_changed_and_what_it_bought(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # a 10-day horizon (07-01 to 07-11); a weekly commitment from 07-01 reaches the horizon
    # end with two packages back to back, 07-01 to 07-15: the last runs 4 days past it
    s = _weekly_desk(make_scenario)
    assert s.path is not None
    commit = {"offer": "o", "mode": "weekly", "units": 1, "start": "2026-07-01", "name": "w"}
    patch = _patch(tmp_path, {"commitments": [commit]})
    report = _whatif(cli, s.path, "--patch", patch, "--price", "o.hourly=12")
    assert report["changes"] == [
        "commitments.w: added {name: w, offer: o, mode: weekly, units: 1, start: 2026-07-01}",
        "offers.o.hourly.price: 10 -> 12",
    ]
    (b,) = report["bought"]
    assert (b["offer"], b["mode"], b["committed"], b["rentals"], b["units"]) == (
        "o",
        "weekly",
        True,
        2,
        [1],
    )
    assert b["days_past_horizon"] == 4.0 and b["cost"] == 500.0
    printed = cli("whatif", s.path, "--patch", patch, "--price", "o.hourly=12", *FAST)
    assert "the last runs 4 days past the horizon's end" in printed.stdout
    assert "offers.o.hourly.price: 10 -> 12" in printed.stdout


def test_plans_valid_on_the_other_side_and_the_direction_narrow_the_delta() -> None:
    base = Side("base", "feasible", total=Fraction(110), bound=Fraction(90))
    variant = Side("variant", "feasible", total=Fraction(120), bound=Fraction(80))
    # alone: variant optimum in [80, 120], base's in [90, 110]: the difference in [-30, +30]
    assert delta(base, variant) == Delta(Fraction(10), Fraction(-30), Fraction(30))
    # the base's plan carried to the variant costs 100 there, the variant's carried to the
    # base 105: each side takes the cheaper (planner.cli.variant `crossed`), so variant
    # optimum ≤ 100, base optimum ≤ 105, and the difference lies in [80 - 105, 100 - 90]
    base, variant = replace(base, total=Fraction(105)), replace(variant, total=Fraction(100))
    d = delta(base, variant)
    assert (d.low, d.high) == (Fraction(-25), Fraction(10))
    # a change that can only lower the optimum: the difference is at most 0
    d = delta(base, variant, direction=-1)
    assert (d.low, d.high, d.sign_unknown) == (Fraction(-25), Fraction(0), False)
    d = delta(replace(base, total=Fraction(110)), replace(variant, total=Fraction(120)), 1)
    assert (d.low, d.high, d.sign_unknown) == (Fraction(0), Fraction(30), False)


@pytest.mark.parametrize(
    ("flags", "direction"),
    [
        (("--price", "o.hourly=9"), -1),
        (("--price", "o.hourly=11"), 1),
        (("--stock", "o.hourly=8"), -1),
        (("--stock", "o.hourly=2"), 1),
        (("--price", "o.hourly=9", "--stock", "o.hourly=8"), -1),
        (("--price", "o.hourly=9", "--price", "o.daily=50"), 0),
        (("--commit", "o=1:daily"), 0),
        (("--shift", "desk=+1d"), 0),
    ],
)
def test_the_direction_of_a_change(
    cli: Any, tmp_path: Path, make_scenario: Any, flags: tuple[str, ...], direction: int
) -> None:
    path = _desk_scenario(tmp_path, make_scenario)
    assert _whatif(cli, path, *flags)["direction"] == direction


def test_a_break_even_whose_lower_end_is_open_says_so() -> None:
    from planner.cli.whatif import _break_even_text

    row = {"offer": "o", "mode": "monthly", "price": 100.0, "exact": False}
    text = _break_even_text({**row, "low": 0.0, "high": 80.0}, "CNY")
    assert "at most CNY 80.00 per package, how far below not known" in text
    assert "0.00 and" not in text
    text = _break_even_text({**row, "low": 60.0, "high": 80.0}, "CNY")
    assert "between CNY 60.00 and 80.00 per package" in text


def test_bought_counts_only_the_units_beyond_the_bases(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # base: 1 weekly unit committed from 07-01 (two packages reach the 10-day horizon's end,
    # 250 each); the variant commits 2: one more unit in each package, 250 + 250
    s = _committed_weekly_desk(make_scenario)
    assert s.path is not None
    more = {"offer": "o", "mode": "weekly", "units": 2, "start": "2026-07-01"}
    report = _whatif(cli, s.path, "--patch", _patch(tmp_path, {"commitments": [more]}))
    (b,) = report["bought"]
    assert (b["rentals"], b["units"], b["cost"]) == (2, [1], 500.0)


def test_the_base_plan_repriced_is_exact_and_ties_are_not_listed_as_moves(
    cli: Any, make_scenario: Any
) -> None:
    # A 5 h job on a (10 an hour) or b (12): the base runs on a, 50.00.
    s = make_scenario(
        [
            offer("a", hourly={"price": 10, "stock": 1}),
            offer("b", hourly={"price": 12, "stock": 1}),
        ],
        [job("j", 5)],
        days=1,
    )
    assert s.path is not None
    # b down to 6: the base plan re-priced still costs 50.00 (a untouched), exactly +0.00;
    # the variant moves j to b, 30.00, a real move
    cut = _whatif(cli, s.path, "--price", "b.hourly=×0.5")
    assert cut["repriced"] == {"base_plan": 50.0, "repriced": 50.0, "change": 0.0, "ties": False}
    assert [row["workload"] for row in cut["moved"]] == ["j"]
    assert cut["delta"]["found"] == -20.0
    # a down to 9: keeping the plan saves exactly 5.00, and the variant's plan is that plan
    own = _whatif(cli, s.path, "--price", "a.hourly=×0.9")
    assert own["repriced"] == {"base_plan": 50.0, "repriced": 45.0, "change": -5.0, "ties": True}
    assert own["moved"] == []
    text = cli("whatif", s.path, "--price", "a.hourly=×0.9", *FAST).stdout
    assert "keeping the base plan: it costs CNY 45.00 under the change, exactly CNY -5.00" in (
        " ".join(text.split())
    )


# --- a dropped workload: the base plan kept without its work ---------------------------------
# docs/whatif.md: a dropped workload relaxes the problem, every base plan stays a plan at no
# higher cost; keeping the base plan is always one answer. The plan kept loses the dropped
# workload's assignments and the hourly and spot rentals that carried them (each a
# workload's own); its packages and committed rentals stay, paid in full.


@pytest.mark.parametrize(
    "name",
    [
        "chat-70b",  # a service on hourly replicas
        "dev-boxes",  # a reserve
        "legal-13b-lora",  # a train job another job runs `after`
        "support-qwen14b-lora",  # a train job on package cards
    ],
)
def test_reprice_keeps_the_q3_plan_without_a_dropped_workload(
    name: str, q3_plan: Any, cli: Any, tmp_path: Path
) -> None:
    _, plan = q3_plan
    saved = tmp_path / "plan.json"
    saved.write_text(plan.model_dump_json(), encoding="utf-8")
    result = cli("reprice", Q3, saved, "--drop", name, "--no-replan", "--json", "-")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["feasible"] and report["violations"] == []
    assert report["repriced_total"] <= report["stated_total"]
    assert report["dropped"]["workloads"] == [name]
    own = {r.id for r in plan.rentals if r.workload == name}
    assert set(report["dropped"]["rentals"]) == own  # the hourly or spot ones it ran on
    ordered = [r.id for r in plan.rentals if r.mode in ("daily", "weekly", "monthly")]
    assert ordered and not set(ordered) & set(report["dropped"]["rentals"])
    printed = cli("reprice", Q3, saved, "--drop", name, "--no-replan")
    assert "it still works" in printed.stdout


def _desk_and_job(make_scenario: Any, hours: str, job_hours: int) -> Path:
    """A card for people each of 10 days in `hours`, and a job, on one offer sold hourly at
    10.00 and daily at 40.00."""
    s = make_scenario(
        [offer("o", hourly={"price": 10, "stock": 4}, daily={"price": 40, "stock": 4})],
        [reserve("desk", cards=1, hours=hours, days=10), job("j", job_hours)],
    )
    assert s.path is not None
    return s.path


def test_whatif_drop_has_the_base_plan_kept_as_an_answer(cli: Any, make_scenario: Any) -> None:
    # the desk 1 h a day by the hour, 100.00; the 2 h job 20.00 (a day's package, 40.00,
    # would cost more than the desk's and the job's hours that day, 30.00)
    path = _desk_and_job(make_scenario, "09:00-10:00", 2)
    report = _whatif(cli, path, "--drop", "desk")
    assert report["direction"] == -1
    # the desk's 10 hourly rentals leave with it: the job's 20.00 is left, exactly the
    # variant's optimum, so what the variant moved is a tie
    assert report["repriced"] == {
        "base_plan": 120.0,
        "repriced": 20.0,
        "change": -100.0,
        "ties": True,
    }
    assert report["delta"]["found"] == -100.0 and report["delta"]["exact"]
    assert [row["workload"] for row in report["moved"]] == ["desk"]  # the change's own


def test_a_dropped_workloads_packages_stay_in_the_plan_kept(
    cli: Any, make_scenario: Any, tmp_path: Path
) -> None:
    # the desk all day holds a daily package each day (400.00, against 2,400.00 by the hour)
    # and the 3 h job is 30.00 by the hour; dropped, the desk's packages stay, paid in full
    # and idle: keeping the plan costs what it did, re-planning saves 400.00
    path = _desk_and_job(make_scenario, "00:00-24:00", 3)
    report = _whatif(cli, path, "--drop", "desk")
    assert report["repriced"] == {
        "base_plan": 430.0,
        "repriced": 430.0,
        "change": 0.0,
        "ties": False,
    }
    assert report["delta"]["found"] == -400.0
    saved = tmp_path / "plan.json"
    assert cli("solve", path, *FAST[:5], "--json", saved).exit_code == 0
    result = cli("reprice", path, saved, "--drop", "desk", *FAST[:5], "--json", "-")
    assert result.exit_code == 0, result.output
    kept = json.loads(result.stdout)
    assert kept["feasible"] and kept["repriced_total"] == kept["stated_total"] == 430.0
    assert kept["dropped"] == {"workloads": ["desk"], "rentals": []}
    assert kept["saving"] == {"found": 400.0, "at_most": 400.0, "exact": True}


def test_reprice_drops_every_class_of_a_dropped_service(cli: Any, write: Any) -> None:
    data = yaml.safe_load((REPO / "scenarios" / "classes-chat-long.yaml").read_text())
    data["workloads"].append(
        {"name": "desk", "kind": "reserve", "card": "rtx4090", "cards": 1,
         "hours": "09:00-12:00", "start": "2026-10-01", "end": "2026-10-02"}
    )  # fmt: skip
    path = write(data)
    saved = path.parent / "plan.json"
    assert cli("solve", path, *FAST[:5], "--json", saved).exit_code == 0
    result = cli("reprice", path, saved, "--drop", "assistant", "--no-replan", "--json", "-")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["feasible"] and report["repriced_total"] < report["stated_total"]
    assert report["dropped"]["workloads"] == ["assistant.chat", "assistant.long"]


def test_a_package_the_base_holds_on_other_days_is_said_as_moved(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # base: 1 weekly unit committed from 07-01; the variant commits it from 07-03 instead.
    # The variant's packages are new on their days, and the base held the same offer and
    # mode on others: said beside them, not as one more package
    s = _committed_weekly_desk(make_scenario)
    assert s.path is not None
    later = {"offer": "o", "mode": "weekly", "units": 1, "start": "2026-07-03"}
    patch = _patch(tmp_path, {"commitments": [later]})
    report = _whatif(cli, s.path, "--patch", patch)
    (b,) = report["bought"]
    assert b["first_start"].startswith("2026-07-03")
    assert b["base_elsewhere"] is not None and b["base_elsewhere"]["rentals"] == 2
    assert b["base_elsewhere"]["first_start"].startswith("2026-07-01")
    printed = " ".join(cli("whatif", s.path, "--patch", patch, *FAST).stdout.split())
    assert "the base holds 2 such rentals on other days, 07-01 to" in printed


def test_one_more_package_is_not_said_as_moved(make_scenario: Any) -> None:
    # the variant holds the base's weekly packages and one more starting a day later: that
    # one is new, and nothing the base holds is elsewhere (it read as "moved")
    from planner.whatif.report import bought

    s = _committed_weekly_desk(make_scenario)
    plan = solved(s).plan
    assert plan is not None
    packages = [r for r in plan.rentals if r.mode == "weekly"]
    day = dt.timedelta(days=1)
    extra = packages[0].model_copy(
        update={"id": "extra", "start": packages[0].start + day, "end": packages[0].end + day}
    )
    more = plan.model_copy(update={"rentals": [*plan.rentals, extra]})
    (b,) = bought(s, plan, more)
    assert (b["rentals"], b["base_elsewhere"]) == (1, None)
    # and the base's packages moved a day later are said as moved
    moved = [r.model_copy(update={"start": r.start + day, "end": r.end + day}) for r in packages]
    later = plan.model_copy(
        update={"rentals": [r for r in plan.rentals if r.mode != "weekly"] + moved}
    )
    (b,) = bought(s, plan, later)
    assert b["base_elsewhere"] is not None and b["base_elsewhere"]["rentals"] == len(packages)


def test_a_break_even_between_minor_units_is_rounded_down_and_said_so(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # the desk's 30 h at 10.00 hourly, 300.00; one hourly unit committed from 07-04 05:00
    # to the horizon's end, 163 unit-hours, carries the desk's last 7 days (210.00 of base
    # spend): it pays while 163 × p ≤ 210.00, p ≤ 210/163 = 1.28834…, so at 1.29 it no
    # longer pays (1.29 × 163 = 210.27): the highest price that pays is 1.28, rounded down
    path = _desk_scenario(tmp_path, make_scenario)
    commit = "o=1:hourly/2026-07-04T05:00"
    report = _whatif(cli, path, "--commit", commit)
    (b,) = report["break_even"]
    assert (b["low"], b["high"], b["exact"]) == (1.28, 1.28, True)
    assert b["fraction"] == {"low": "210/163", "high": "210/163"}
    said = " ".join(cli("whatif", path, "--commit", commit, *FAST).stdout.split())
    assert "it pays only at or below CNY 1.28 per unit-hour (exactly 1.2883…" in said
    assert "at 1.29 it no longer pays" in said
    # the sweep rounds the same way, and marks a price between minor units
    sweep = cli("whatif", path, "--commit", "o=1..1:hourly/2026-07-04T05:00", *FAST)
    assert sweep.exit_code == 0, sweep.output
    assert "1.28…" in sweep.stdout and "1.29" not in sweep.stdout
    assert "the price shown is it rounded down" in " ".join(sweep.stdout.split())


def test_a_commitment_with_another_change_is_priced_against_that_change_alone(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # hourly down to 5.00 and 10 daily packages committed: the desk's 30 h cost 150.00
    # hourly without the commitment, so it pays while 10 × p ≤ 150.00, p ≤ 15.00, not the
    # 30.00 that blaming the price cut on it gave (against the base's 300.00)
    path = _desk_scenario(tmp_path, make_scenario)
    report = _whatif(cli, path, "--commit", "o=1:daily", "--price", "o.hourly=5")
    (b,) = report["break_even"]
    assert (b["low"], b["high"], b["exact"], b["never_pays"]) == (15.0, 15.0, True, False)
    assert report["without_commitment"]["total_cost"] == 150.0
    # the same question as a one-level sweep gives the same price
    sweep = _whatif(cli, path, "--commit", "o=1..1:daily", "--price", "o.hourly=5")
    assert sweep["levels"][0]["break_even"]["low"] == b["low"]
    said = " ".join(
        cli("whatif", path, "--commit", "o=1:daily", "--price", "o.hourly=5", *FAST).stdout.split()
    )
    assert "(against the change without it: CNY 150.00, optimal): it pays only at or below" in said
    # a patch that commits and cuts the price: the same, the base's commitments set again
    both = _patch(tmp_path, {**COMMIT, "offers": [{"id": "o", "hourly": {"price": 5}}]})
    by_file = _whatif(cli, path, "--patch", both)
    assert by_file["break_even"][0]["low"] == 15.0
    assert by_file["without_commitment"]["total_cost"] == 150.0
    # the commitment alone is priced against the base: no third solve
    alone = _whatif(cli, path, "--commit", "o=1:daily")
    assert "without_commitment" not in alone and alone["break_even"][0]["low"] == 30.0
    # two pools committed at once: each one's price would carry the other's effect
    two = _whatif(cli, path, "--commit", "o=1:daily", "--commit", "o=1:hourly")
    assert two["break_even"] == [] and "one-level sweep" in two["break_even_note"]


def test_a_commitment_that_pays_at_no_price_says_so() -> None:
    from planner.cli.whatif import _break_even_text, _sweep_price

    row = {"offer": "o", "mode": "monthly", "price": 100.0, "never_pays": True}
    for exact in (True, False):
        b = {**row, "exact": exact, "low": -50.0, "high": -20.0 if not exact else -50.0}
        text = _break_even_text(b, "CNY")
        assert "it pays at no price: even free, the plan with it costs more" in text
        assert "below CNY" not in text and "-" not in text.replace("Break-even", "")
        assert _sweep_price(b, "CNY") == "never"


def test_ray_asked_for_and_not_installed_is_bad_input(
    cli: Any, tmp_path: Path, make_scenario: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the environment, not a bug: exit 1 with what to install, before any solve
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    path = _desk_scenario(tmp_path, make_scenario)
    result = cli("whatif", path, "--price", "o.daily=30", "--executor", "ray", *FAST)
    assert result.exit_code == 1, result.output
    assert "Ray is not installed: pip install 'gpuplan[ray]'" in result.output
    assert "internal error" not in result.output and "solving" not in result.output


def test_reprice_says_an_offer_the_plan_uses_was_removed_by_the_change(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # the desk on o (10.00 an hour; p asks 12.00); the patch deletes o: each rental on it,
    # and the desk's replicas, break because the change removed o, not because o "does not
    # sell hourly"
    s = make_scenario(
        [
            offer("o", hourly={"price": 10, "stock": 4}),
            offer("p", hourly={"price": 12, "stock": 4}),
        ],
        [reserve("desk", cards=1, hours="09:00-12:00", days=2)],
    )
    assert s.path is not None
    saved = tmp_path / "plan.json"
    assert cli("solve", s.path, *FAST[:5], "--json", saved).exit_code == 0
    gone = _patch(tmp_path, {"offers": [{"id": "o", "delete": True}]})
    result = cli("reprice", s.path, saved, "--patch", gone, "--no-replan", "--json", "-")
    assert result.exit_code == 1, result.output
    broken = json.loads(result.stdout)["violations"]
    because = f"offer o is removed by the change (--patch {gone})"
    said = {(v["rule"], v["subject"]) for v in broken if v["message"] == because}
    rentals = {r["id"] for r in json.loads(saved.read_text())["rentals"]}
    assert said == {("rental", r) for r in rentals} | {("config", "desk")}, broken
    assert not any("does not sell" in v["message"] for v in broken)


def test_a_sweep_level_that_fails_is_said_as_the_flag_was_written(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # the desk's daily stock is 4: the level of 5 units fails, said as --commit o=3..5:daily
    # and the level (it was said as --commit o=5:daily, which no one wrote)
    path = _desk_scenario(tmp_path, make_scenario)
    result = cli("whatif", path, "--commit", "o=3..5:daily", *FAST)
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "--commit o=3..5:daily: commitments[0].units: at 5 units: commitments hold 5" in said
    assert "o=5:daily" not in said


def test_a_demand_the_same_every_hour_is_said_as_one_value() -> None:
    # concurrency: 40 scaled by 4 was "168 values changed, e.g. fri.00-01: 40.0 -> 160.0"
    from planner.whatif.report import changes

    path = REPO / "scenarios" / "seed-70b-serving.yaml"
    base = load_scenario(path)
    variant = Change.of(None, scale_demand=["4"]).apply(path, base)
    assert changes(base, variant) == ["workloads.chat-70b.concurrency: 40 -> 160"]
    # a curve that varies keeps its hours
    q3 = load_scenario(Q3)
    scaled = changes(q3, Change.of(None, scale_demand=["assistant-8b=2"]).apply(Q3, q3))
    assert len(scaled) > 1 and all(".concurrency." in line for line in scaled)


def test_reprice_refuses_a_commitment_range_and_says_where_ranges_go(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    path = _desk_scenario(tmp_path, make_scenario)
    result = cli("reprice", path, tmp_path / "plan.json", "--commit", "o=1..2:daily")
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "--commit o=1..2:daily: a range A..B sweeps the commitment level" in said
    assert "plan whatif" in said and "expected OFFER=UNITS:MODE" not in said


def test_reprice_keeps_the_plan_with_a_commitment_the_change_adds(
    cli: Any, tmp_path: Path, make_scenario: Any
) -> None:
    # it reported "committed but not in the plan" and exit 1 whatever the plan held.
    # The desk all day buys a daily package each of the 10 days (400.00) and the job 30.00
    # by the hour: committing one daily unit marks those packages committed, same money
    path = _desk_and_job(make_scenario, "00:00-24:00", 3)
    saved = tmp_path / "plan.json"
    assert cli("solve", path, *FAST[:5], "--json", saved).exit_code == 0
    result = cli("reprice", path, saved, "--commit", "o=1:daily", "--no-replan", "--json", "-")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["feasible"] and report["repriced_total"] == report["stated_total"] == 430.0
    packages = [r["id"] for r in json.loads(saved.read_text())["rentals"] if r["mode"] == "daily"]
    assert len(packages) == 10
    assert report["committed"] == {"marked": packages, "added": []}
    # the desk of 09:00-12:00 runs by the hour (300.00): the 10 committed packages are
    # added idle, paid in full (400.00), and re-planning moves the desk onto them
    path = _desk_scenario(tmp_path, make_scenario)
    assert cli("solve", path, *FAST[:5], "--json", saved).exit_code == 0
    result = cli("reprice", path, saved, "--commit", "o=1:daily", *FAST[:5], "--json", "-")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["feasible"] and report["repriced_total"] == 700.0
    assert report["committed"]["marked"] == [] and len(report["committed"]["added"]) == 10
    assert report["saving"] == {"found": 300.0, "at_most": 300.0, "exact": True}
    printed = cli("reprice", path, saved, "--commit", "o=1:daily", "--no-replan").stdout
    assert "added, idle (the plan does not use them" in " ".join(printed.split())
