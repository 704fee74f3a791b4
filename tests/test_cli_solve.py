"""plan solve / check / quote through the CLI: exit codes, JSON, progress on stderr."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.quote import train_quotes
from tests.conftest import REPO
from tests.planning import job, offer, priced_train, reserve

SEED = REPO / "scenarios" / "seed-13b-finetune.yaml"


def test_seed_scenario_solves_checks_and_breaks(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    result = cli("solve", SEED, "--workers", "2", "--deterministic", "--json", out)
    assert result.exit_code == 0, result.output
    assert "optimal, total CNY 582.12" in result.stdout
    assert "incumbent" in result.stderr and "incumbent" not in result.stdout  # progress
    # a deterministic limit is not seconds, and the header says so
    assert "limit 60 units of deterministic time (not wall seconds)" in result.stderr
    assert "Package decisions" in result.stdout and "not bought" in result.stdout
    assert "What to order (1 line for 14 rentals;" in result.stdout  # counted words agree
    plan = json.loads(out.read_text())
    assert plan["status"] == "optimal" and Decimal(str(plan["total_cost"])) == Decimal("582.12")
    assert cli("check", SEED, out).exit_code == 0
    plan["rentals"] = plan["rentals"][1:]  # one rental removed
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(plan))
    result = cli("check", SEED, broken)
    assert result.exit_code == 1 and "[rental]" in result.stderr


def test_json_to_stdout_is_the_plan_alone(cli: Any) -> None:
    result = cli("solve", SEED, "--workers", "1", "--deterministic", "--json", "-")
    assert result.exit_code == 0
    plan = json.loads(result.stdout)
    assert {
        "scenario",
        "status",
        "total_cost",
        "naive_cost",
        "heuristic_cost",
        "currency",
        "gap",
        "bound",
        "solve_seconds",
        "rentals",
        "assignments",
        "cost_breakdown",
        "utilisation",
    } <= set(plan)
    assert plan["rentals"][0]["start"].endswith("+08:00")


def test_output_files_in_missing_folders_are_refused_before_the_solve(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --json and --report into folders that do not exist: exit 1 at once, each named, no
    # solve started and nothing written (they failed only after the whole solve)
    import planner.cli.solve as cli_solve

    def no_solve(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the solve started")

    monkeypatch.setattr(cli_solve, "solve", no_solve)
    gone = tmp_path / "gone"
    result = cli("solve", SEED, "--json", gone / "p.json", "--report", gone / "r" / "r.html")
    assert result.exit_code == 1
    said = " ".join(result.stderr.split())
    assert f"--json: folder '{gone}' does not exist" in said
    assert f"--report: folder '{gone / 'r'}' does not exist" in said
    assert not gone.exists()
    what = cli("whatif", SEED, "--price", "*.hourly=×2", "--json", gone / "w.json")
    assert what.exit_code == 1 and "--json: folder" in what.stderr
    # --csv makes its folder, but not over a file
    afile = tmp_path / "afile"
    afile.write_text("")
    csv = cli("solve", SEED, "--csv", afile)
    assert csv.exit_code == 1
    assert f"--csv: '{afile}' is a file, not a folder" in " ".join(csv.stderr.split())


def test_a_plan_made_with_margins_is_checked_and_replayed_with_them(
    cli: Any, tmp_path: Path
) -> None:
    # 2e8 LoRA tokens of an 8B, its speed estimated: at 20% slower its runs are longer, so
    # the plan is only valid with that margin. The plan records it; plan check and plan
    # simulate apply it, a different one given by flag is refused, and the same plan read
    # as made without it breaks the durations
    scenario = priced_train(
        "margined", 7, {"name": "ft8b", "model": "llama-3.1-8b", "tokens": 2.0e8}
    )
    path = tmp_path / "margined.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    saved = tmp_path / "plan.json"
    solved = cli("solve", path, "--speed-margin", "20%", "--deterministic", "--json", saved)
    assert solved.exit_code == 0, solved.output
    plan = json.loads(saved.read_text())
    assert (plan["speed_margin"], plan["memory_margin"]) == ("20%", None)
    assert cli("check", path, saved).exit_code == 0
    assert cli("check", path, saved, "--speed-margin", "20%").exit_code == 0
    assert cli("check", path, saved, "--speed-margin", "0.2").exit_code == 0  # 20%, as a share
    assert cli("check", path, saved, "--memory-margin", "0").exit_code == 0  # 0 is none
    other = cli("check", path, saved, "--speed-margin", "10%")
    assert other.exit_code == 1
    assert "the plan was made with --speed-margin 20%" in " ".join(other.stderr.split())
    assert cli("simulate", path, saved, "--runs", "5").exit_code == 0
    same = cli("reprice", path, saved, "--no-replan", "--json", "-")
    assert same.exit_code == 0 and json.loads(same.stdout)["feasible"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({**plan, "speed_margin": None}))
    broken = cli("check", path, bare)
    assert broken.exit_code == 1 and "[duration] ft8b" in broken.stderr


def test_a_reserve_scenario_solves_and_checks(cli: Any, tmp_path: Path, make_scenario: Any) -> None:
    offers = [offer("o", hourly={"price": 10, "stock": 8}, weekly={"price": 900, "stock": 8})]
    people = {
        "name": "devs",
        "kind": "reserve",
        "card": "a100-80g",
        "cards": 2,
        "hours": "09:00-19:00",
        "days": "weekdays",
        "start": "2026-07-01",
        "end": "2026-07-08",
    }
    s = make_scenario(offers, [people, job("j", 3)], days=7)
    out = tmp_path / "plan.json"
    result = cli("solve", s.path, "--workers", "2", "--deterministic", "--json", out)
    assert result.exit_code == 0, result.output
    assert "Serving and reserved cards" in result.stdout and "devs" in result.stdout
    assert cli("check", s.path, out).exit_code == 0
    plan = json.loads(out.read_text())
    [devs] = [a for a in plan["assignments"] if a["kind"] == "reserve"]
    assert devs["peak_replicas"] == 2


def test_infeasible_exits_2(cli: Any, tmp_path: Path, make_scenario: Any) -> None:
    # 30 h of work on one card, 24 h before the deadline: 6 h short
    s = make_scenario([offer("o", hourly={"price": 10})], [job("a", 30, deadline="2026-07-02")])
    result = cli("solve", s.path, "--time-limit", "20")
    assert "worker(s), limit 20 s …" in result.stderr
    assert result.exit_code == 2 and "[deadline] a: needs 30 h" in result.stderr
    assert "relax: move the deadline of a to 2026-07-02 06:00 (+6 h)" in result.stderr


def test_quote_lists_configs_cheapest_first(cli: Any) -> None:
    result = cli("quote", SEED, "legal-13b-finetune", "--json", "-")
    assert result.exit_code == 0
    quote = json.loads(result.stdout)
    assert (quote["workload"], quote["kind"], quote["currency"]) == (
        "legal-13b-finetune",
        "train",
        "CNY",
    )
    rows = quote["rows"]
    hourly = next(r for r in rows if r["mode"] == "hourly")
    assert isinstance(hourly["billed_hours"], float) and hourly["packages"] is None
    costs = [Decimal(str(r["cost"])) for r in rows]
    assert costs == sorted(costs) and costs[0] == Decimal("582.12")
    assert rows[0]["offer"] == "jz-910b-83" and rows[0]["cards"] == 1
    missing = cli("quote", SEED, "legal-13b")
    assert missing.exit_code == 1 and "did you mean legal-13b-finetune?" in missing.stderr


def test_quote_lists_only_configs_within_stock(cli: Any, make_scenario: Any) -> None:
    # 2 hourly units, 1 spot, 1 weekly; a 1-card offer. A job that fits 1 to 8 cards is
    # quoted on 1-2 hourly cards, 1 spot card and 1 weekly card only: 4 or 8 cards of any
    # mode, 2 spot or 2 weekly units need more than the offer sells.
    o = offer(
        "o",
        hourly={"price": 10, "stock": 2},
        spot={"price": 5, "preemptions_per_hour": 0.05, "stock": 1},
        weekly={"price": 1200, "stock": 1},
    )
    s = make_scenario([o], [job("j", 16, max_cards=8, checkpoint_every="30m")], days=14)
    rows = json.loads(cli("quote", s.path, "j", "--json", "-").stdout)["rows"]
    assert {(r["mode"], r["units"]) for r in rows} == {
        ("hourly", 1),
        ("hourly", 2),
        ("spot", 1),
        ("weekly", 1),
    }
    # a reserve of 3 cards runs on 2 hourly and 1 weekly unit together (plan solve mixes
    # them), so its quote lists every mode, each marked beyond the stock it passes
    three = make_scenario([o], [reserve("desk", cards=3), reserve("pair", cards=2)], days=14)
    desk = cli("quote", three.path, "desk")
    assert desk.exit_code == 0 and "^ its peak needs more units at once" in desk.stdout
    desk_rows = json.loads(cli("quote", three.path, "desk", "--json", "-").stdout)["rows"]
    assert {r["mode"]: r["within_stock"] for r in desk_rows} == {"hourly": False, "weekly": False}
    pair = json.loads(cli("quote", three.path, "pair", "--json", "-").stdout)["rows"]
    assert {r["mode"]: r["within_stock"] for r in pair} == {"hourly": True, "weekly": False}
    quoted = train_quotes(s, "j")
    assert all(
        q.config.units <= {"hourly": 2, "spot": 1, "weekly": 1}[q.config.mode] for q in quoted
    )


def test_quote_shows_configs_alike_in_every_figure_once(cli: Any) -> None:
    # q3's office-hours QLoRA job runs in a daily window: its configs for each hour the runs
    # may start at are alike in every figure quoted, and shown once with their count
    from planner.domain.load import load_scenario
    from planner.quote import train_quotes

    q3 = REPO / "scenarios" / "q3.yaml"
    result = cli("quote", q3, "support-qwen7b-qlora", "--json", "-")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    figures = [tuple(sorted((k, v) for k, v in r.items() if k != "configs")) for r in rows]
    assert len(set(figures)) == len(rows)
    configs = train_quotes(load_scenario(q3), "support-qwen7b-qlora")
    assert sum(r["configs"] for r in rows) == len(configs) > len(rows)
    shown = cli("quote", q3, "support-qwen7b-qlora")
    assert "a row may stand for several configs" in " ".join(shown.stdout.split())


def test_quote_of_a_workload_nothing_runs_says_why_and_exits_2(cli: Any, tmp_path: Path) -> None:
    # a 70B full fine-tune on one card, and a service asking a decode speed no card has
    data = yaml.safe_load(SEED.read_text())
    data["workloads"] = [
        {**data["workloads"][0], "name": "big", "model": "llama-3.1-70b", "method": "full",
         "max_cards": 1, "measured": None},
        {"name": "fast", "kind": "serve", "model": "llama-3.1-8b", "start": "2026-10-01",
         "end": "2026-10-03", "concurrency": 4, "min_tokens_per_s": 5000,
         "context_tokens": 4096},
    ]  # fmt: skip
    path = tmp_path / "none.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    for name, kind in (("big", "memory"), ("fast", "demand")):
        result = cli("quote", path, name, "--json", "-")
        assert result.exit_code == 2, result.output
        document = json.loads(result.stdout)
        assert document["rows"] == [] and document["workload"] == name
        assert [c["kind"] for c in document["conflicts"]] == [kind]
        assert f"no config can run {name} even alone" in result.stderr
        assert f"[{kind}] {name}:" in result.stderr and "relax:" in result.stderr


def test_check_rejects_an_attribution_its_lines_do_not_give(cli: Any, tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    assert cli("solve", SEED, "--deterministic", "--json", saved).exit_code == 0
    assert cli("check", SEED, saved).exit_code == 0
    data = json.loads(saved.read_text())
    [name] = data["attribution"]
    data["attribution"][name] = 9999.0
    saved.write_text(json.dumps(data))
    result = cli("check", SEED, saved)
    assert result.exit_code == 1
    said = " ".join(result.stderr.split())
    assert f"[cost] attribution {name}: attribution of {name} states 9999" in said
    # a workload the plan does not have, and one left out, are said as such
    del data["attribution"][name]
    data["attribution"]["ghost"] = 0.0
    saved.write_text(json.dumps(data))
    said = " ".join(cli("check", SEED, saved).stderr.split())
    assert "attribution names ghost, a workload the plan has no lines for" in said
    assert f"attribution leaves out {name}, whose lines give 582.12" in said


def test_check_rejects_a_file_that_is_not_a_plan(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"hello": 1}))
    result = cli("check", SEED, bad)
    assert result.exit_code == 1 and "Field required" in result.stderr
    assert yaml  # the scenario stays valid YAML


@pytest.mark.slow
def test_same_seed_and_workers_give_the_same_json(cli: Any) -> None:
    runs = []
    for _ in range(2):
        result = cli(
            "solve", SEED, "--workers", "2", "--seed", "7", "--deterministic", "--json", "-"
        )
        assert result.exit_code == 0
        plan = json.loads(result.stdout)
        plan.pop("solve_seconds")
        runs.append(plan)
    assert runs[0] == runs[1]


def test_default_workers_are_physical_cores_but_at_least_four() -> None:
    import os

    from planner.solve import MIN_DEFAULT_WORKERS, SolveParams, physical_cores

    cores = physical_cores()
    assert 1 <= cores <= (os.cpu_count() or cores)
    assert SolveParams().settings().workers == max(cores, MIN_DEFAULT_WORKERS)
    assert SolveParams(workers=3).settings().workers == 3


def test_quote_covers_serve_workloads(cli: Any) -> None:
    seed70 = REPO / "scenarios" / "seed-70b-serving.yaml"
    result = cli("quote", seed70, "chat-70b", "--json", "-")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert (rows[0]["card"], rows[0]["mode"], rows[0]["cost"]) == ("h200-141g", "monthly", 10036.0)
    a100 = next(r for r in rows if r["card"] == "a100-80g" and r["cards"] == 4)
    # the capacity is the estimate's (KV memory and the 20 tok/s floor), as the checker has it
    from planner.check.contract import serve_capacity
    from planner.domain.load import load_scenario

    s = load_scenario(seed70)
    chat = next(w for w in s.spec.workloads if w.name == "chat-70b")
    expected = serve_capacity(s, chat, s.cards["a100-80g"], 4, "int8")  # type: ignore[arg-type]
    # one replica carries the 40 requests alone
    assert a100["precision"] == "int8" and a100["capacity"] == expected > 40
    assert a100["cost"] == 40000.0
    # one hourly H200 all month: 720 held hours + 1 h of setup at its single start
    hourly = next(
        r for r in rows if r["card"] == "h200-141g" and r["cards"] == 1 and r["mode"] == "hourly"
    )
    assert hourly["billed_unit_hours"] == 721 and abs(hourly["cost"] - 721 * 13.94) < 0.01
    human = cli("quote", seed70, "chat-70b")
    assert "carries: requests in flight per replica (serve) or cards (reserve)" in human.stdout


def test_utilisation_has_a_daily_series_of_cards_held_and_used(cli: Any) -> None:
    result = cli("solve", SEED, "--workers", "1", "--deterministic", "--json", "-")
    plan = json.loads(result.stdout)
    daily = plan["utilisation"]["ascend-910b"]["daily"]
    assert len(daily) == 14 and daily[0] == {
        "date": "2026-10-05",
        "held_card_hours": 14,
        "used_card_hours": 14,
    }


def _desk_solved(cli: Any, make_scenario: Any, daily: float) -> Any:
    """`plan solve` of a desk (1 card 09:00-12:00 on 3 days) that may rent hourly at 10.00
    (offer o) or buy daily packages at `daily` (offer p)."""
    offers = [
        offer("o", hourly={"price": 10, "stock": 4}),
        offer("p", daily={"price": daily, "stock": 1}),
    ]
    s = make_scenario(offers, [reserve("desk", 1, "09:00-12:00", days=3)], days=3)
    result = cli("solve", s.path, "--workers", "1", "--deterministic")
    assert result.exit_code == 0, result.output
    return result


def test_plan_solve_says_what_packages_save(cli: Any, make_scenario: Any) -> None:
    # a desk (1 card 09:00-12:00 on 3 days) on hourly cards (90 in all) or daily packages
    # (60): the plan buys the packages, and no plan without them costs less than 90
    result = _desk_solved(cli, make_scenario, daily=20)
    assert "optimal, total CNY 60.00" in result.stdout
    assert (
        "  without packages: no plan that buys no package costs less than CNY 90.00, so the "
        "packages this plan buys (p daily) save at least CNY 30.00"
    ) in result.stdout


def test_a_package_not_bought_is_explained_by_the_plans_own_hours(
    cli: Any, make_scenario: Any
) -> None:
    # a desk 09:00-12:00 on 3 days: hourly at 10.00, a daily package at 40.00 = 4 h of it;
    # one unit would take over 3 h of a day's hourly use: under the 4 h it needs to pay
    result = _desk_solved(cli, make_scenario, daily=40)
    assert (
        "not bought: in its best 1 day(s), from 2026-07-01, one unit would take over 3.0 h of "
        "the plan's hourly a100-80g use, under the 4.0 h it needs to pay"
    ) in " ".join(result.stdout.split())


def test_a_quarter_of_services_prints_no_empty_workloads_table(cli: Any) -> None:
    scenario = REPO / "scenarios" / "classes-chat-long.yaml"
    result = cli("solve", scenario, "--workers", "2", "--deterministic")
    assert result.exit_code == 0, result.output
    assert "Serving and reserved cards" in result.stdout
    assert "\nWorkloads" not in result.stdout  # no train job, so no train table
    with_jobs = cli("solve", SEED, "--workers", "2", "--deterministic")
    assert "\nWorkloads" in with_jobs.stdout


def test_long_workload_names_are_never_cut(cli: Any, make_scenario: Any) -> None:
    name = "support-qwen7b-qlora-with-a-long-suffix"
    s = make_scenario([offer("o", hourly={"price": 10})], [job(name, 3)], days=2)
    result = cli("solve", s.path, "--workers", "2", "--deterministic")
    assert result.exit_code == 0, result.output
    assert f"│ {name} │" in result.stdout and "…" not in result.stdout


def test_the_time_limit_counts_from_the_commands_launch(cli: Any, tmp_path: Path) -> None:
    # `plan` hands its import time to the command (planner.cli.app.main): a command launched
    # an hour before its 30 s limit has no time left to build a model, and keeps the
    # baselines' plan; the next command in this process counts from its own start again.
    import time

    from planner.cli.common import launched_at

    out = tmp_path / "plan.json"
    launched_at(time.perf_counter() - 3600)
    result = cli("solve", SEED, "--workers", "1", "--time-limit", "30", "--json", out)
    assert result.exit_code == 0, result.output
    late = json.loads(out.read_text())
    assert late["solve_seconds"] == 0 and late["solver"]["constraints"] == 0
    result = cli("solve", SEED, "--workers", "1", "--time-limit", "30", "--json", out)
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["solver"]["constraints"] > 0
