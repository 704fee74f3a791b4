"""The seeds' worked example 1 restated: gpuplan's answer against the seed's ¥582 and ¥1,120."""

from __future__ import annotations

from decimal import Decimal

from planner.domain.load import load_scenario
from planner.problem import quote_job
from planner.solution import money
from tests.conftest import REPO
from tests.planning import solved


def test_910b_at_list_83_percent_is_the_seeds_582() -> None:
    scenario = load_scenario(REPO / "scenarios" / "seed-13b-finetune.yaml")
    result = solved(scenario)
    assert result.status == "optimal" and result.plan is not None
    plan = result.plan
    # ¥2.97 × 14 h × 14 days = ¥582.12 (the seed rounds to ¥582)
    assert plan.total_cost == Decimal("582.12")
    [a] = plan.assignments
    assert (a.card, a.cards, a.offer, a.mode) == ("ascend-910b", 1, "jz-910b-83", "hourly")
    assert len(plan.rentals) == 14 and all(r.billed_hours == 14 for r in plan.rentals)
    # the plan names what it rests on: assumed billing figures, the 910B's soft specs
    joined = "\n".join(plan.assumptions)
    assert "jz-910b-83 hourly: cards_per_node, increment_hours, min_hours, stock assumed" in joined
    assert "ascend-910b bf16_tflops = 313 is low confidence" in joined


def test_two_4090_48g_are_slower_and_dearer_than_the_seed_says() -> None:
    scenario = load_scenario(REPO / "scenarios" / "seed-13b-finetune.yaml")
    # Within the two weeks two 4090 48G cannot finish: the quote has no such config.
    assert not any(
        c.card == "rtx4090-48g" and c.cards == 2
        for c in quote_job(scenario, "legal-13b-finetune").configs
    )
    # Given three weeks they can: ~214 h (not 196) × 2 cards × ¥2.86 ≈ ¥1,224 (seed: ¥1,120).
    spec = scenario.spec
    longer = spec.workloads[0].model_copy(
        update={"deadline": spec.workloads[0].deadline.replace(day=26)}
    )
    relaxed = scenario.model_copy(update={"spec": spec.model_copy(update={"workloads": [longer]})})
    pair = next(
        c
        for c in quote_job(relaxed, "legal-13b-finetune").configs
        if (c.card, c.cards, c.offer, c.mode) == ("rtx4090-48g", 2, "jz-rtx4090-48g", "hourly")
    )
    assert 205 <= pair.compute_hours <= 220
    cost = money(pair.cost, "CNY")
    assert Decimal("1150") < cost < Decimal("1300")
    assert cost > Decimal("1120")  # the seed assumed the same 196 h as the 910B
