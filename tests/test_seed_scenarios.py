"""The seeds' worked example 1 restated: gpuplan's answer against the seed's ¥582 and ¥1,120."""

from __future__ import annotations

from decimal import Decimal

from planner.domain.load import load_scenario
from planner.domain.money import money
from planner.problem import quote_job
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


def test_two_4090_48g_finish_in_the_two_weeks_and_cost_less_than_the_seed_says() -> None:
    scenario = load_scenario(REPO / "scenarios" / "seed-13b-finetune.yaml")
    # The work is measured on the 910B (1,000 tokens/s, 313 dense TFLOPS); two 4090 48G
    # (165 each) carry it by the ratio of peaks, and a LoRA's gradients (26M adapters) cross
    # PCIe in a hundredth of a step: 1,054 tokens/s, 185.9 h of the 196 h window.
    pair = next(
        c
        for c in quote_job(scenario, "legal-13b-finetune").configs
        if (c.card, c.cards, c.offer, c.mode) == ("rtx4090-48g", 2, "jz-rtx4090-48g", "hourly")
    )
    assert 180 <= pair.compute_hours <= 192
    cost = money(pair.cost, "CNY")
    assert cost == Decimal("1063.92")  # 2 × ¥2.86 × 186 billed hours
    assert cost < Decimal("1120")  # the seed assumed the 910B's 196 h
    assert cost > Decimal("582.12")  # the 910B still wins


def _seed_70b(tmp_path, concurrency: int):  # type: ignore[no-untyped-def]
    import shutil

    for name in ("seed-70b-serving.yaml", "seed-70b-catalog.yaml"):
        shutil.copy(REPO / "scenarios" / name, tmp_path / name)
    path = tmp_path / "seed-70b-serving.yaml"
    path.write_text(path.read_text().replace("concurrency: 40", f"concurrency: {concurrency}"))
    return load_scenario(path)


def test_seed_70b_serving_prices_each_step_of_h200s(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Per replica (fp8 on H200, int8 on A100; 4,096 tokens at ≥ 20 tok/s): one H200 carries
    # 45 requests, two in tensor parallel 145, four 279; an 8 × A100 80G machine (¥40,000)
    # 172 as one replica, 186 as two of four cards, so it never undercuts the H200s: one
    # card (¥10,036) to 45, TP2 (¥20,072) to 145, TP2 + one card (¥30,108) to 190, two TP2
    # replicas (¥40,144) to 290, then one more card (¥50,180).
    expected = {
        40: ("h200-141g", "10036.00"),
        145: ("h200-141g", "20072.00"),
        190: ("h200-141g", "30108.00"),
        191: ("h200-141g", "40144.00"),
        290: ("h200-141g", "40144.00"),
        291: ("h200-141g", "50180.00"),
    }
    for concurrency, (card, cost) in expected.items():
        result = solved(_seed_70b(tmp_path, concurrency))
        assert result.status == "optimal" and result.plan is not None, concurrency
        [serve] = result.plan.replica
        assert {u.card for u in serve.uses} == {card}, concurrency
        assert result.plan.total_cost == Decimal(cost), concurrency
    # bf16 70B does not serve on one H200: its weights alone exceed the usable memory
    from planner.configs import replica_configs

    scenario = _seed_70b(tmp_path, 40)
    bf16 = scenario.workload("chat-70b").model_copy(update={"precision": ("bf16",)})
    assert not any(c.card == "h200-141g" and c.cards == 1 for c in replica_configs(scenario, bf16))
