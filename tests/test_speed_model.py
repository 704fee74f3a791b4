"""Speed terms against hand-worked figures: compute-bound decode at large batches, prefills
shared out over a request's output, and the training speed margin (planned and checked)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from planner.domain.recipes import recipe_knobs
from planner.estimate.bands import LOWER, lower_band_for
from planner.estimate.memory import ServeSetup, TrainSetup
from planner.estimate.serve import prefill_seconds, replica_capacity, token_seconds
from planner.estimate.speed import compute_efficiency, decode_step_seconds, train_speed
from tests.measurements import card, model


def test_a_large_batch_decodes_at_its_compute_time() -> None:
    # Llama-3.1-8B on one H100: a step of 4,096 sequences is 2·P·4096 FLOPs at the batched
    # share of the peak (longer than reading the weights), then attention reads the 4,096
    # short KV caches in kernels of its own
    m, c = model("llama-3.1-8b"), card("h100-80g")
    setup = ServeSetup(context_tokens=16, engine="gpt-fast")
    share = compute_efficiency(c, "bf16", batched=True)
    assert share == 0.55
    compute = 2 * m.active_params * 4096 / (989e12 * share)  # 0.121 s
    kv = 4096 * 16 * 131072 / (3350e9 * 0.7)  # 128 KiB a token: 3.7 ms
    assert decode_step_seconds(m, c, 1, setup, 4096) == pytest.approx(compute + kv)
    # and a single sequence is bandwidth bound: well under its compute-time equivalent × 100
    assert decode_step_seconds(m, c, 1, setup, 1) > 100 * compute / 4096


def test_each_request_carries_its_share_of_the_prefills() -> None:
    # 32 requests of a 1,900-token prompt and 100 output tokens: while one writes its 100
    # tokens, about 32 others prefill, so each output token waits 32 × prefill ÷ 100 more
    m, c = model("llama-3.1-8b"), card("h100-80g")
    setup = ServeSetup(context_tokens=2000, output_tokens=100)
    step = decode_step_seconds(m, c, 1, setup, 32)
    prefill = prefill_seconds(m, c, 1, setup, 1900)
    assert token_seconds(m, c, 1, setup, 32) == pytest.approx(step + 32 * prefill / 100)
    # without the output length the prefills are not counted
    assert token_seconds(m, c, 1, replace(setup, output_tokens=None), 32) == step


def test_prefills_lower_what_a_replica_carries_at_a_speed_floor() -> None:
    m, c = model("llama-3.1-8b"), card("h100-80g")
    plain = ServeSetup(context_tokens=8192)
    long_prompts = replace(plain, output_tokens=256)
    alone = replica_capacity(m, c, 1, plain, min_tokens_per_s=30)
    shared = replica_capacity(m, c, 1, long_prompts, min_tokens_per_s=30)
    assert shared.by_speed is not None and alone.by_speed is not None
    assert 1 <= shared.by_speed < alone.by_speed
    # the answer is the largest batch that keeps 30 tokens/s
    assert token_seconds(m, c, 1, long_prompts, shared.by_speed) * 30 <= 1
    assert token_seconds(m, c, 1, long_prompts, shared.by_speed + 1) * 30 > 1


def test_speed_margin_plans_slower_than_the_estimate() -> None:
    m, c = model("llama-3.1-8b"), card("a100-80g")
    setup = TrainSetup("lora", recipe_knobs("lora", None))
    estimate = train_speed(m, c, 1, setup).tokens_per_s
    assert train_speed(m, c, 1, replace(setup, speed_margin=0.2)).tokens_per_s == pytest.approx(
        0.8 * estimate
    )
    band = train_speed(m, c, 1, replace(setup, speed_margin="band"))
    low = lower_band_for("train_speed:lora")
    assert low is not None and low[0] == LOWER[low[1]][0]
    assert band.tokens_per_s == pytest.approx((1 - low[0]) * estimate)
    assert any("speed margin" in a for a in band.assumptions)


def test_a_scenario_speed_margin_lengthens_the_plan_and_the_checker_agrees(
    make_scenario: Any,
) -> None:
    """Half the estimated speed: the job runs twice the hours, on the same card; the checker
    recomputes the same hours under the same scenario and accepts the plan."""
    from planner.check import check_plan
    from tests.planning import job, offer, solved

    offers = [offer("a", card="a100-80g", hourly={"price": 2})]
    jobs = [job("tune", 10, measured=None, earliest_start="2026-07-01")]
    plain = solved(make_scenario(offers, jobs, days=5))
    slow_scenario = make_scenario(offers, jobs, days=5, speed_margin=0.5)
    slow = solved(slow_scenario)
    assert plain.plan is not None and slow.plan is not None
    [a], [b] = plain.plan.train, slow.plan.train
    hours = (a.end - a.start).total_seconds() / 3600
    slow_hours = (b.end - b.start).total_seconds() / 3600
    assert slow_hours == pytest.approx(2 * hours, abs=1.0)  # whole hours
    assert check_plan(slow_scenario, slow.plan).ok


def test_a_trial_on_sixteen_cards_plans_as_measured_on_sixteen(make_scenario: Any) -> None:
    """A trial states its card and count, not its nodes or network: it is costed on the
    offer's, so the same card and count carry it unchanged (it was inflated five-fold when
    the trial was assumed to cross a 25 Gb/s network), and more cards only add."""
    from planner.check.contract import train_rate
    from tests.planning import job, offer

    trial = {"card": "a800-80g", "cards": 16, "tokens_per_s": 40_000}
    net = {"kind": "infiniband", "gbps": 400}
    offers = [offer("o", card="a800-80g", network=net, hourly={"price": 10})]
    w = job("big", 1, model="llama-3.1-8b", method="full", measured=trial, max_cards=32)
    w["tokens"] = 1.44e9
    s = make_scenario(offers, [w], days=2)
    [workload] = s.spec.workloads
    o, card = s.offers["o"], s.cards["a800-80g"]
    hours, _, _ = train_rate(s, workload, o, card, 16, "hourly")  # type: ignore[arg-type]
    assert float(hours) == pytest.approx(1.44e9 / 40_000 / 3600)
    more, _, _ = train_rate(s, workload, o, card, 32, "hourly")  # type: ignore[arg-type]
    assert hours / 2 <= more < hours


def test_a_negative_margin_never_shrinks_the_kv_cache() -> None:
    """Planning at the low end shrinks the estimated weights, workspace and overhead, not
    the exact KV cache: the budget is usable − (1 + m) × the rest, never more than the card."""
    from planner.estimate.memory import serve_memory

    m, c = model("llama-3.2-1b"), card("h100-80g")
    plain, budget = serve_memory(m, c, 1, ServeSetup(engine="hf"))
    _, low_budget = serve_memory(m, c, 1, ServeSetup(engine="hf", margin=-0.9))
    others = sum(v for k, v in plain.breakdown.items() if k != "kv_cache")
    assert budget == pytest.approx(plain.usable - others)
    assert low_budget == pytest.approx(plain.usable - 0.1 * others)
    assert low_budget < plain.usable


def test_output_tokens_must_leave_a_prompt(cli: Any) -> None:
    result = cli("fit", "llama-3.1-8b", "--context-tokens", "1000", "--output-tokens", "5000")
    assert result.exit_code == 1  # an input error, as for every other flag plan fit refuses
    assert "--output-tokens 5000 must be less than --context-tokens 1000" in result.output
