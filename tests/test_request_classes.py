"""Serving by request classes: each class is planned as a workload of its own on the
configs that serve its lengths within its targets (docs/scenarios.md, "Request classes")."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.check import check_plan
from planner.domain.errors import LoadError
from planner.domain.load import load_scenario
from planner.domain.workload import ServeWorkload
from planner.prices import unit_price
from planner.problem import build_problem
from tests.planning import solved

REPO = Path(__file__).resolve().parents[1]
SPLIT = REPO / "scenarios" / "classes-chat-long.yaml"
NIGHT = REPO / "scenarios" / "classes-night-batch.yaml"


def _write(tmp_path: Path, data: dict[str, Any], name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_classes_become_workloads_of_their_own() -> None:
    s = load_scenario(SPLIT)
    chat, long = (s.workload(n) for n in ("assistant.chat", "assistant.long"))
    assert isinstance(chat, ServeWorkload) and isinstance(long, ServeWorkload)
    assert (chat.demand_share, chat.context_tokens, chat.output_tokens, chat.ttft_s) == (
        0.9,
        2048,
        512,
        1,
    )
    assert (long.demand_share, long.context_tokens, long.class_of) == (0.1, 65536, "assistant")
    assert s.models["assistant.long"].name == "llama-3.1-8b"
    assert "assistant" not in [w.name for w in s.spec.workloads]


def test_classes_that_give_their_output_lengths_serve_a_requests_per_s_curve(
    tmp_path: Path,
) -> None:
    # the shipped chat/long split with its demand as arrivals: every class names its
    # output, so the workload needs none of its own (it was refused: "requests_per_s needs
    # output_tokens"), and each class's demand follows from its own output by Little's law
    data = yaml.safe_load(SPLIT.read_text())
    [assistant] = data["workloads"]
    del assistant["concurrency"]
    assistant["requests_per_s"] = 4
    s = load_scenario(_write(tmp_path, data))
    chat, long = (s.workload(n) for n in ("assistant.chat", "assistant.long"))
    assert isinstance(chat, ServeWorkload) and isinstance(long, ServeWorkload)
    assert (chat.output_tokens, long.output_tokens) == (512, 1024)


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        ([{"name": "a", "share": 0.5}, {"name": "b", "share": 0.4}], "add up to 0.9, not 1"),
        ([{"name": "a", "share": 0.5, "concurrency": 3}], "give exactly one of share"),
        ([{"name": "a", "share": 0.5}, {"name": "a", "share": 0.5}], "class names repeat"),
        (
            [{"name": "a", "share": 1, "context_tokens": 100, "output_tokens": 200}],
            "must be less than context_tokens",
        ),
    ],
)
def test_bad_classes_are_refused_by_name(
    tmp_path: Path, classes: list[dict[str, Any]], message: str
) -> None:
    data = yaml.safe_load(SPLIT.read_text())
    lengths = {"context_tokens": 2048, "min_tokens_per_s": 20}
    data["workloads"][0]["classes"] = [lengths | c for c in classes]
    with pytest.raises(LoadError) as caught:
        load_scenario(_write(tmp_path, data))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("change", "field", "written", "message"),
    [
        # the shares and names are the classes' together: said at `classes:`
        (
            lambda classes: classes[1].update(share=0.35),
            "workloads[0].classes",
            "  classes:",
            "the classes' shares add up to 1.25, not 1",
        ),
        (
            lambda classes: classes[1].update(name="chat"),
            "workloads[0].classes",
            "  classes:",
            "request class names repeat: chat, chat",
        ),
        # a length the workload leaves to its classes, missing on one: said at that class
        (
            lambda classes: classes[1].pop("context_tokens"),
            "workloads[0].classes[1].context_tokens",
            "  - name: long",
            "required field is missing",
        ),
        (
            lambda classes: classes[1].pop("min_tokens_per_s"),
            "workloads[0].classes[1].min_tokens_per_s",
            "  - name: long",
            "required field is missing (or tpot_ms)",
        ),
        # written, but 0: said as the bad value it is, not as missing
        (
            lambda classes: classes[1].update(context_tokens=0),
            "workloads[0].classes[1].context_tokens",
            "    context_tokens: 0",
            "greater than or equal to 1",
        ),
    ],
    ids=["shares", "names", "context", "speed", "zero"],
)
def test_class_problems_are_said_at_the_field_and_line_that_wrote_them(
    tmp_path: Path, change: Any, field: str, written: str, message: str
) -> None:
    data = yaml.safe_load(SPLIT.read_text())
    change(data["workloads"][0]["classes"])
    path = _write(tmp_path, data)
    with pytest.raises(LoadError) as caught:
        load_scenario(path)
    [issue] = caught.value.issues
    line = path.read_text().splitlines().index(written) + 1
    assert (issue.field, issue.line) == (field, line) and message in issue.message


def test_the_split_beats_the_best_single_card_type_by_the_hand_worked_amount() -> None:
    """200 requests in flight all day, hourly, no setup: a class's cheapest plan alone is
    its cheapest config's ceil(demand ÷ capacity) replicas × 24 h × price per replica-hour,
    and the classes share nothing, so the optimum is the sum of the classes' cheapest. On
    one card type the best is the least, over card types, of the same sum on that type."""
    s = load_scenario(SPLIT)
    problem = build_problem(s, serving=True)

    def cheapest(name: str, demand: int) -> dict[str, Fraction]:
        job = next(j for j in problem.replica_jobs if j.name == name)
        best: dict[str, Fraction] = {}
        for c in job.configs:
            if c.rented:
                price = unit_price(s.offers[c.offer], "hourly") * c.units
                cost = math.ceil(demand / c.capacity) * 24 * price
                best[c.card] = min(best.get(c.card, cost), cost)
        return best

    chat, long = cheapest("assistant.chat", 180), cheapest("assistant.long", 20)
    split = min(chat.values()) + min(long.values())
    single = min(chat[card] + long[card] for card in chat.keys() & long.keys())
    result = solved(s)
    assert result.plan is not None and result.status == "optimal"
    assert result.plan.total_cost == round(Decimal(split.numerator) / split.denominator, 2)
    # the figures in docs/scenarios.md: chat on four 1-card RTX 4090 replicas (150.72),
    # long on three 1-card H100 ones (934.56): 1,085.28; on H100s alone 1,246.08
    assert (float(split), float(single - split)) == (1085.28, 160.80)
    uses = {a.workload: {u.card for u in a.uses} for a in result.plan.replica}
    assert uses == {"assistant.chat": {"rtx4090"}, "assistant.long": {"h100-80g"}}


def test_one_class_plans_as_the_single_stream(tmp_path: Path) -> None:
    data = yaml.safe_load(SPLIT.read_text())
    w = data["workloads"][0]
    single = {**{k: v for k, v in w.items() if k != "classes"}, **w["classes"][1]}
    single |= {"name": "assistant", "concurrency": 20}
    single.pop("share")
    classed = {**w, "concurrency": 20, "classes": [{**w["classes"][1], "share": 1}]}
    totals = []
    for workload in (single, classed):
        scenario = load_scenario(_write(tmp_path, {**data, "workloads": [workload]}))
        plan = solved(scenario).plan
        assert plan is not None
        totals.append(plan.total_cost)
    assert totals[0] == totals[1]


def test_a_night_batch_class_fills_idle_cards_of_a_held_machine(tmp_path: Path) -> None:
    # The held machine (10,400.00) carries chat all month and the batch class at night:
    # the plan costs the machine alone, exactly what it costs without the batch class.
    # Alone, the batch class would rent its cheapest hourly replicas (its quote).
    s = load_scenario(NIGHT)
    plan = solved(s).plan
    assert plan is not None and plan.total_cost == Decimal("10400.00")
    batch = next(a for a in plan.replica if a.workload == "assistant.batch")
    assert all(u.held for u in batch.uses) and batch.peak_replicas >= 1
    data = yaml.safe_load(NIGHT.read_text())
    data["workloads"][0]["classes"] = data["workloads"][0]["classes"][:1]
    without = solved(load_scenario(_write(tmp_path, data))).plan
    assert without is not None and without.total_cost == Decimal("10400.00")


def test_a_class_no_config_serves_in_time_is_refused_with_the_nearest_target(
    tmp_path: Path,
) -> None:
    data = yaml.safe_load(SPLIT.read_text())
    data["workloads"][0]["classes"][1] |= {"context_tokens": 120000, "ttft_s": 0.1}
    result = solved(load_scenario(_write(tmp_path, data)))
    assert result.status == "infeasible"
    [conflict] = result.conflicts
    assert conflict.workloads == ("assistant.long",)
    assert conflict.needed.startswith("the first token within 0.1 s")
    [relaxation] = conflict.relaxations
    assert relaxation.text.startswith("ttft_s ") and "for assistant, class long" in relaxation.text


def test_the_checker_recomputes_a_class_latency(tmp_path: Path) -> None:
    # The plan for ttft_s 10 on the long class, checked against a scenario that asks 2 s:
    # its replicas then carry fewer long prompts each, and the checker finds demand short.
    plan = solved(load_scenario(SPLIT)).plan
    assert plan is not None
    data = yaml.safe_load(SPLIT.read_text())
    data["workloads"][0]["classes"][1]["ttft_s"] = 2
    check = check_plan(load_scenario(_write(tmp_path, data)), plan)
    assert any(
        v.rule == "demand" and v.subject.startswith("assistant.long") for v in check.violations
    )


def test_a_class_with_buckets_is_planned_bucket_by_bucket(tmp_path: Path) -> None:
    # The long class as two buckets, 60% at 16k and 40% at 64k context: two workloads,
    # assistant.long.1 and .2, carrying 0.1 × 0.6 and 0.1 × 0.4 of the curve.
    data = yaml.safe_load(SPLIT.read_text())
    long = data["workloads"][0]["classes"][1]
    long.pop("context_tokens")
    long["buckets"] = [
        {"share": 0.6, "context_tokens": 16384},
        {"share": 0.4, "context_tokens": 65536},
    ]
    s = load_scenario(_write(tmp_path, data))
    parts = [w for w in s.spec.workloads if w.name.startswith("assistant.long")]
    assert [(w.name, round(w.demand_share, 9), w.context_tokens) for w in parts] == [  # type: ignore[union-attr]
        ("assistant.long.1", 0.06, 16384),
        ("assistant.long.2", 0.04, 65536),
    ]
    plan = solved(s).plan
    assert plan is not None and check_plan(s, plan).ok
    long["buckets"][0]["share"] = 0.5
    with pytest.raises(LoadError, match=r"buckets' shares add up to 0\.9, not 1"):
        load_scenario(_write(tmp_path, data))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # class "b.1" beside class "b" in buckets: assistant.b.1 twice
        (
            {
                "classes": [
                    {"name": "b.1", "share": 0.5},
                    {
                        "name": "b",
                        "share": 0.5,
                        "buckets": [
                            {"share": 0.5, "context_tokens": 2048},
                            {"share": 0.5, "context_tokens": 4096},
                        ],
                    },
                ]
            },
            "assistant.b.1, a request class's name, is taken already",
        ),
        # a class's own curve past the demand limit, checked like a workload's
        (
            {"classes": [{"name": "big", "concurrency": 1e12}], "concurrency": None},
            "big: peak demand",
        ),
        # own curves on every class leave the workload's curve to no one
        ({"classes": [{"name": "a", "concurrency": 5}]}, "would serve no one"),
    ],
)
def test_class_names_limits_and_curves_are_checked(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    data = yaml.safe_load(SPLIT.read_text())
    w = data["workloads"][0]
    w |= {"context_tokens": 2048, "min_tokens_per_s": 20}
    w |= {k: v for k, v in change.items() if v is not None}
    for k in [k for k, v in change.items() if v is None]:
        w.pop(k)
    with pytest.raises(LoadError) as caught:
        load_scenario(_write(tmp_path, data))
    assert message in str(caught.value)


def test_a_class_minimum_of_replicas_counts_once_over_its_buckets(tmp_path: Path) -> None:
    data = yaml.safe_load(SPLIT.read_text())
    long = data["workloads"][0]["classes"][1]
    long.pop("context_tokens")
    long |= {
        "min_replicas": 1,
        "buckets": [{"share": 0.5, "context_tokens": c} for c in (8192, 16384)],
    }
    s = load_scenario(_write(tmp_path, data))
    minimums = {
        w.name: w.min_replicas for w in s.spec.workloads if w.name.startswith("assistant.long")
    }  # type: ignore[union-attr]
    assert minimums == {"assistant.long.1": 1, "assistant.long.2": 0}


def test_fields_that_classes_set_are_not_written_by_hand(tmp_path: Path) -> None:
    data = yaml.safe_load(SPLIT.read_text())
    data["workloads"][0]["demand_share"] = 0.01
    with pytest.raises(LoadError, match="demand_share is set by request classes"):
        load_scenario(_write(tmp_path, data))


def test_quote_of_a_class_with_buckets_quotes_each_bucket(cli: Any, tmp_path: Path) -> None:
    data = yaml.safe_load(SPLIT.read_text())
    long = data["workloads"][0]["classes"][1]
    long.pop("context_tokens")
    long["buckets"] = [{"share": 0.5, "context_tokens": c} for c in (8192, 16384)]
    result = cli("quote", _write(tmp_path, data), "assistant.long", "--json", "-")
    assert result.exit_code == 0, result.output
    quoted = json.loads(result.stdout)
    assert [d["workload"] for d in quoted["classes"]] == ["assistant.long.1", "assistant.long.2"]
