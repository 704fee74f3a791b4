"""`plan solve` on the three infeasible examples (tests/scenarios/infeasible-*.yaml): exit 2,
one line per conflict with its relaxation, the conflicts as objects in --json, and the
relaxation applied to the file gives a plan (exit 0)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.domain.merge import deep_merge
from tests.conftest import REPO
from tests.planning import priced_train

EXAMPLES = REPO / "tests" / "scenarios"

# Each example's conflict and relaxation, by hand:
# - memory: a full FSDP fine-tune of Llama 3.1 70B at its max_cards of 4 needs 277.3 GiB a
#   card (weights, gradients and AdamW states, 16 B × 70.6e9 params ÷ 4 cards = 263 GiB,
#   plus activations and overhead); the largest card sold, a B300, may use 279 GiB × 0.90
#   = 251.1 GiB. At 8 cards (145.8 GiB) it fits a B300 machine.
# - deadline: 1.44e10 tokens, 4,000 h on the 910B where they were measured; 8 H100s (989
#   dense TFLOPS each against the 910B's 313; a LoRA's gradients all-reduce within a
#   hundredth of a step, so no scaling loss) run them in 158.2 h (+ 0.08 h of download
#   setup), 159 occupied hours from 07-06 00:00, ending 07-12 15:00; the deadline 07-08
#   00:00 gives 48 h: 159 − 48 = 111 h short.
# - stock: 6 reserved H200s at 09:00 on weekdays; 4 H200 containers for rent, no package:
#   add 6 − 4 = 2 units.
CASES = {
    "memory": (
        "[memory] full-70b: needs 277.3 GiB per card at 4 cards, its most (max_cards 4;",
        "relax: allow 8 cards (max_cards 4) or a card with at least 277.3 GiB usable",
    ),
    "deadline": (
        "[deadline] legal-13b: needs 159 h from 2026-07-06 00:00 on its fastest config "
        "(8× h100-80g on jz-h100 hourly: 158.2 h of work + 0.08 h setup",
        "relax: move the deadline of legal-13b to 2026-07-12 15:00 (+111 h)",
    ),
    "stock": (
        "[stock] research-desks: needs 6 cards at 2026-07-06 09:00; available: 4 cards at "
        "most on all stock together (jz-h200 hourly: 4 units;",
        "relax: add 2 units of jz-h200 hourly stock (peak needs 6, stock 4)",
    ),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_an_infeasible_example_exits_2_with_its_conflict_and_relaxation(
    cli: Any, tmp_path: Path, kind: str
) -> None:
    example = EXAMPLES / f"infeasible-{kind}.yaml"
    out = tmp_path / "no-plan.json"
    result = cli("solve", example, "--workers", "2", "--deterministic", "--json", out)
    assert result.exit_code == 2, result.output
    conflict_line, relax_line = CASES[kind]
    text = " ".join(result.stderr.split())  # rich wraps long lines
    assert "infeasible: no plan exists; 1 conflict:" in text
    assert conflict_line in text and relax_line in text
    # a workload's own conflict is found first: the joint ones are said to come after
    assert "workloads are weighed together (a joint conflict) once none of these stands" in text
    data = json.loads(out.read_text())
    assert data["status"] == "infeasible"
    [conflict] = data["conflicts"]
    assert set(conflict) == {
        "kind",
        "workloads",
        "needed",
        "available",
        "relaxation",
        "relaxations",
    }
    assert conflict["kind"] == kind
    assert relax_line.removeprefix("relax: ").startswith(conflict["relaxations"][0]["text"])
    # the first relaxation, applied to the file as a what-if, makes it feasible
    fixed = deep_merge(yaml.safe_load(example.read_text()), conflict["relaxations"][0]["patch"])
    path = tmp_path / "relaxed.yaml"
    path.write_text(yaml.safe_dump(fixed, sort_keys=False))
    solved = cli("solve", path, "--workers", "2", "--deterministic", "--json", "-")
    assert solved.exit_code == 0, solved.output
    assert json.loads(solved.stdout)["status"] == "optimal"


def test_a_windowed_job_short_of_time_is_offered_the_fewest_cards_that_finish_it(
    cli: Any, tmp_path: Path
) -> None:
    # 1.2e9 LoRA tokens of a 13B on one card take 49 h of 08:00-22:00 windows from 07-07
    # at the fastest; its deadline of 07-08 00:00 leaves one window. Besides a later
    # deadline, the fewest cards that finish inside that window: 4 (max_cards 1), and the
    # patch applied gives a plan
    scenario = priced_train(
        "windowed",
        13,
        {
            "name": "tune",
            "model": "llama-2-13b",
            "tokens": 1.2e9,
            "earliest_start": "2026-07-07",
            "deadline": "2026-07-08",
            "daily_hours": "08:00-22:00",
            "max_cards": 1,
        },
    )
    path = tmp_path / "windowed.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    result = cli("solve", path, "--workers", "2", "--deterministic", "--json", "-")
    assert result.exit_code == 2, result.output
    [conflict] = json.loads(result.stdout)["conflicts"]
    texts = [r["text"] for r in conflict["relaxations"]]
    assert texts[0].startswith("move the deadline of tune to ")
    assert texts[1:] == ["allow 4 cards (max_cards 1)"]
    fixed = deep_merge(scenario, conflict["relaxations"][1]["patch"])
    path.write_text(yaml.safe_dump(fixed, sort_keys=False))
    solved = cli("solve", path, "--workers", "2", "--deterministic", "--json", "-")
    assert solved.exit_code == 0, solved.output
    assert json.loads(solved.stdout)["status"] == "optimal"
    # three cards do not finish it: the fewest is four
    fewer = deep_merge(scenario, {"workloads": [{"name": "tune", "max_cards": 3}]})
    path.write_text(yaml.safe_dump(fewer, sort_keys=False))
    assert cli("solve", path, "--workers", "2", "--deterministic").exit_code == 2
