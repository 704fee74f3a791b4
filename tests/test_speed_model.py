"""Speed terms against hand-worked figures: compute-bound decode at large batches, prefills
shared out over a request's output, and the training speed margin (planned and checked)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from planner.domain.recipes import TrainKnobs, recipe_knobs
from planner.estimate.bands import LOWER, lower_band_for
from planner.estimate.memory import ServeSetup, TrainSetup
from planner.estimate.serve import (
    prefill_seconds,
    replica_capacity,
    serving_throughput,
    token_seconds,
)
from planner.estimate.speed import (
    compute_efficiency,
    decode_step_seconds,
    dequantise_seconds,
    engine_step_seconds,
    executed_flops_per_token,
    fixed_seconds,
    scaling_efficiency,
    tp_allreduce_seconds,
    train_speed,
)
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


def test_lora_executes_the_frozen_base_forward_and_backward_but_no_weight_gradients() -> None:
    # Llama-3.1-8B, 2,048-token sequences: attention is 4·L·h·s = 4·32·4096·2048 FLOPs a
    # forward per token, twice that in the backward; a linear pass is 2·P
    m = model("llama-3.1-8b")
    p, attention = 8_030_261_248, 4 * 32 * 4096 * 2048
    knobs = TrainKnobs(checkpointing=False, compile=True)  # compiled: no adapter latency
    lora = TrainSetup("lora", recipe_knobs("lora", None, knobs))
    assert executed_flops_per_token(m, lora)[0] == 4 * p + 3 * attention
    # checkpointing adds one more forward, linear and attention alike
    recomputed = replace(lora, knobs=lora.knobs.model_copy(update={"checkpointing": True}))
    assert executed_flops_per_token(m, recomputed)[0] == 6 * p + 4 * attention
    full = TrainSetup("full", recipe_knobs("full", None, TrainKnobs(checkpointing=True)))
    assert executed_flops_per_token(m, full)[0] == 8 * p + 4 * attention
    # so a checkpointed LoRA runs 8/6 of a checkpointed full fine-tune's speed (less attention)
    c = card("a100-80g")
    ratio = train_speed(m, c, 1, recomputed).tokens_per_s / train_speed(m, c, 1, full).tokens_per_s
    assert ratio == pytest.approx((8 * p + 4 * attention) / (6 * p + 4 * attention))


def test_qlora_pays_one_dequantisation_of_its_base_a_pass() -> None:
    # Llama-3.1-8B in NF4 on an RTX 4090 (1,008 GB/s at 70%): three passes (forward,
    # backward, recompute) each read the quantised matrices (8.03B params less the 16-bit
    # embeddings and LM head, 2 × 128,256 × 4,096) at 4.127 bits and write them at 2 B
    m, c = model("llama-3.1-8b"), card("rtx4090")
    setup = TrainSetup("qlora", recipe_knobs("qlora", None, TrainKnobs(checkpointing=True)))
    quantised = 8_030_261_248 - 2 * 128_256 * 4_096
    seconds = 3 * quantised * (4.127 / 8 + 2) / (1008e9 * 0.7)
    assert dequantise_seconds(m, c, setup) == pytest.approx(seconds)  # 75 ms
    lora = replace(setup, method="lora")
    step = setup.tokens / train_speed(m, c, 1, lora).tokens_per_s
    assert train_speed(m, c, 1, setup).tokens_per_s == pytest.approx(
        setup.tokens / (step + seconds)
    )


def test_tensor_parallel_all_reduces_carry_the_steps_activations() -> None:
    # Llama-3.1-8B over 8 H100s (NVLink 450 GB/s a direction, 80% reached): each of the 64
    # all-reduces a step moves 1,000 tokens × 4,096 × 2 B × 2·7/8 per card, plus 22 µs
    m, c = model("llama-3.1-8b"), card("h100-80g")
    each = 22e-6 + 1000 * 4096 * 2 * 2 * 7 / 8 / (450e9 * 0.8)
    assert tp_allreduce_seconds(m, c, 8, 1000) == pytest.approx(64 * each)
    assert tp_allreduce_seconds(m, c, 1, 1000) == 0.0


def test_batched_serving_is_a_roofline_over_steps_with_chunked_prefill() -> None:
    # 256 requests of 128 prompt + 512 output tokens, an 8,192-token step budget: 7,936 prompt
    # tokens ride beside the 256 decoding sequences in 256 × 128 ÷ 7,936 steps; the other
    # steps decode alone
    m, c = model("llama-3.1-8b"), card("h100-80g")
    setup = ServeSetup(concurrency=256, batched_tokens=8192)
    mean = replace(setup, context_tokens=128 + 256)
    chunk_steps = 256 * 128 / 7936
    assert 256 < 8192 * 512 // (128 + 512)  # the budget sustains the batch
    chunked = engine_step_seconds(m, c, 1, mean, 256, 7936, 128)
    plain = engine_step_seconds(m, c, 1, mean, 256)
    expected = 256 * 512 / (chunk_steps * chunked + (512 - chunk_steps) * plain)
    assert serving_throughput(m, c, 1, setup, 128, 512) == pytest.approx(expected)
    # a prompt chunk makes the step compute bound: 8,192 tokens of 2·P at the batched share
    assert chunked > 2 * m.active_params * 8192 / (989e12 * 0.55)
    # one request alone: its prefill, then 512 steps
    alone = replace(setup, concurrency=1)
    single = prefill_seconds(m, c, 1, alone, 128) + 512 * decode_step_seconds(m, c, 1, mean, 1)
    assert serving_throughput(m, c, 1, alone, 128, 512) == pytest.approx(512 / single)


def test_gpt_fast_quantised_linears_pay_a_latency_a_layer(monkeypatch: Any) -> None:
    # weight-only int8 in gpt-fast: 30 µs a layer beyond the bytes, 32 layers for the 8B;
    # 16-bit weights and vLLM's quantised kernels pay none
    import planner.estimate.speed as speed

    m, c = model("llama-3.1-8b"), card("a100-80g")
    int8 = ServeSetup(precision="int8", engine="gpt-fast", context_tokens=16)
    setups = (int8, replace(int8, precision="bf16"), replace(int8, engine="vllm"))
    steps = [decode_step_seconds(m, c, 1, s, 1) for s in setups]
    monkeypatch.setattr(speed, "LAYER_SECONDS", {})
    bare = [decode_step_seconds(m, c, 1, s, 1) for s in setups]
    assert steps[0] - bare[0] == pytest.approx(32 * 30e-6)
    assert steps[1:] == bare[1:]


def test_eager_lora_pays_a_latency_per_adapter_per_pass() -> None:
    # Llama-3.1-8B, LoRA on every linear (7 a layer, 32 layers), checkpointed (3 passes),
    # uncompiled: 672 adapter passes × 120 µs beside the FLOPs; compiled, none
    m, c = model("llama-3.1-8b"), card("a100-80g")
    knobs = TrainKnobs(lora_targets="all", checkpointing=True, compile=False)
    eager = TrainSetup("lora", recipe_knobs("lora", None, knobs), seq_len=256)
    compiled = replace(eager, knobs=eager.knobs.model_copy(update={"compile": True}))
    latency = 32 * 7 * 3 * 120e-6  # 81 ms a micro-batch
    assert fixed_seconds(m, eager)[0] == pytest.approx(latency)
    assert fixed_seconds(m, compiled)[0] == 0.0
    flops_time = 256 / train_speed(m, c, 1, compiled).tokens_per_s
    assert train_speed(m, c, 1, eager).tokens_per_s == pytest.approx(256 / (flops_time + latency))


def test_zero3_gathers_each_layer_a_pass_beside_the_bytes() -> None:
    # Llama-3.1-8B full fine-tune under ZeRO-3 on 2 A100s: the collectives move 3 × 16 GB
    # halved over NVLink (240 GB/s), plus 32 layers × 3 passes × 4 ms of gather latency
    m, c = model("llama-3.1-8b"), card("a100-80g")
    setup = TrainSetup("full", recipe_knobs("full", None, TrainKnobs(zero=3, checkpointing=True)))
    one = 10_000.0
    seconds = 3 * 8_030_261_248 * 2.0 / 2 / (600e9 / 2 * 0.8) + 32 * 3 * 4e-3
    compute = setup.tokens / one
    exposed = max(0.0, seconds - 0.5 * compute)
    efficiency, _ = scaling_efficiency(m, c, 2, setup, one_card=one)
    assert efficiency == pytest.approx(compute / (compute + exposed))


def _model_flops(name: str, task: str, seq_len: int) -> float:
    """Model FLOPs per token as the docs define MFU's: 6P (full) or 4P (LoRA, QLoRA) with
    P the active parameters, plus attention's 12·L·h·s."""
    m = model(name)
    factor = {"full": 6, "lora": 4, "qlora": 4}[task]
    return factor * m.active_params + 12 * m.layers * m.hidden * seq_len


def test_the_mfu_stated_is_the_one_the_tokens_per_s_shown_implies(cli: Any) -> None:
    """A 13B LoRA of 256-token micro-batches on an RTX 4090 48G: 1,215.1 tokens/s of 4 ×
    13.0B + 12 × 40 × 5120 × 256 = 52.7 GFLOPs each on a 165 TFLOPS peak is MFU 38.8%; the
    eager adapters' 58 ms a micro-batch are out of it, so the 53.4% of the compute alone is
    said beside it, not as the MFU (it was: "MFU 53%")."""
    import json
    import re

    args = ("llama-2-13b", "--task", "lora", "--card", "rtx4090-48g", "--cards", "1")
    result = cli("fit", *args, "--seq-len", "256", "--json", "-")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    flops = _model_flops("llama-2-13b", "lora", 256)
    assert card("rtx4090-48g").bf16_tflops.value == 165
    assert row["tokens_per_s"] == 1215.1
    assert round(1215.1 * flops / 165e12, 3) == row["mfu"] == 0.388
    [note] = [a for a in row["assumptions"] if "MFU" in a]
    assert re.search(r": MFU 38\.8% at the tokens/s shown \(53\.4% in the compute alone", note)


@pytest.mark.parametrize(
    ("name", "task", "card_id", "cards", "flags"),
    [
        ("llama-2-7b", "full", "a100-80g", 1, ()),
        ("llama-2-7b", "full", "h100-80g", 16, ("--fsdp",)),  # across nodes: efficiency < 1
        ("llama-2-13b", "lora", "rtx4090-48g", 2, ("--seq-len", "256")),
        ("llama-3.1-8b", "lora", "h100-80g", 1, ("--mfu", "0.4", "--seq-len", "512")),
        ("llama-3.1-8b", "qlora", "a100-80g", 1, ("--precision", "nf4")),
        ("llama-3.1-8b", "qlora", "rtx4090", 1, ("--precision", "nf4", "--seq-len", "512")),
        ("llama-3.1-8b", "qlora", "l40s", 1, ("--unpacked", "--mean-seq-len", "700")),
        ("llama-2-7b", "full", "a100-80g", 4, ("--zero", "3", "--offload", "optimizer")),
        ("llama-2-13b", "lora", "a100-80g", 2, ("--pipeline",)),  # its cards take turns
    ],
)
def test_mfu_times_the_peak_over_the_model_flops_is_the_tokens_per_s(
    cli: Any, name: str, task: str, card_id: str, cards: int, flags: tuple[str, ...]
) -> None:
    """tokens/s = cards computing (1 with --pipeline) × peak × MFU ÷ model FLOPs per token,
    within the rounding of the figures shown, for the JSON's `mfu` and the assumption's
    percentage: the MFU the tokens/s shown imply, the scaling efficiency in it."""
    import json
    import re

    args = ("fit", name, "--task", task, "--card", card_id, "--cards", str(cards), *flags)
    result = cli(*args, "--json", "-")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    seq_len = int(flags[flags.index("--seq-len") + 1]) if "--seq-len" in flags else 2048
    flops = _model_flops(name, task, seq_len)
    peak = card(card_id).bf16_tflops.value * 1e12
    efficiency = row["scaling_efficiency"]
    computing = 1 if "--pipeline" in flags else cards
    per_card = row["tokens_per_s"] / computing
    # the JSON's mfu: 4 decimals; tokens/s: 1 decimal
    rounding = 0.00005 / row["mfu"] + 0.05 / row["tokens_per_s"]
    assert row["mfu"] * peak / flops == pytest.approx(per_card, rel=rounding)
    [note] = [a for a in row["assumptions"] if "MFU" in a]
    found = re.search(r"MFU (\d+\.\d)% at the tokens/s shown", note)
    assert found is not None, note
    stated = float(found.group(1)) / 100
    assert stated == pytest.approx(row["mfu"], abs=0.0005 + 1e-9)
    assert stated * peak / flops == pytest.approx(per_card, rel=rounding + 0.0005 / stated)
    # where multi-card overhead takes a share, the MFU before it is said beside
    if efficiency < 0.999:
        said = re.search(r"\((\d+\.\d)% before the scaling efficiency of (\d+)%", note)
        assert said is not None, note
        before = row["mfu"] / efficiency
        off = 0.00005 / row["mfu"] + 0.0005 / efficiency + 0.0005 / before
        assert float(said.group(1)) / 100 == pytest.approx(before, rel=off)


@pytest.mark.parametrize(
    ("name", "card_id", "cards", "flags"),
    [
        ("llama-2-7b", "h100-80g", 16, ("--fsdp",)),  # two nodes: NVLink and the network
        ("llama-2-7b", "a100-80g", 4, ()),  # gradients all-reduced in one node
    ],
)
def test_the_traffic_said_is_the_traffic_timed(
    cli: Any, name: str, card_id: str, cards: int, flags: tuple[str, ...]
) -> None:
    """The collectives' seconds in the scaling note follow from the figures it states: the
    GB each card moves over its link at the rate said, the gathers at their latency, the GB
    over the network at the share of its rate said, plus the latency a node."""
    import json
    import re

    args = ("fit", name, "--task", "full", "--card", card_id, "--cards", str(cards), *flags)
    result = cli(*args, "--json", "-")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    [note] = [a for a in row["assumptions"] if a.startswith("scaling efficiency")]
    link = re.search(r"each card moving ([\d.]+) GB of it over \S+ at (\d+) GB/s", note)
    assert link is not None, note
    seconds = float(link.group(1)) / float(link.group(2))
    gathers = re.search(r"(\d+) layers gathered (\d+) times \(([\d.]+) ms each\)", note)
    if gathers:
        seconds += int(gathers.group(1)) * int(gathers.group(2)) * float(gathers.group(3)) / 1e3
    net = re.search(r"([\d.]+) GB over a ([\d.]+) Gb/s network.* at (\d+)% of its rate, "
                    r"([\d.]+) ms a node", note)  # fmt: skip
    if net:
        nodes = -(-cards // 8)
        rate = float(net.group(2)) / 8 * int(net.group(3)) / 100
        seconds += float(net.group(1)) / rate + nodes * float(net.group(4)) / 1e3
    timed = re.search(r"; ([\d.]+) s against", note)
    assert timed is not None
    assert float(timed.group(1)) == pytest.approx(seconds, abs=0.01 + 0.002 * seconds)


def test_the_prefills_a_request_waits_for_are_said_with_their_time_and_share(cli: Any) -> None:
    """At a speed floor with output_tokens, each request also waits for the prompts'
    prefills: the note gives one prefill's time, which is the documented formula at the
    documented share (Hopper 33% of the 16-bit peak, × 1.36 of the doubled peak on FP8)."""
    import json
    import re

    args = ("fit", "qwen2.5-32b", "--task", "serve", "--precision", "fp8", "--card",
            "h200-141g", "--cards", "1", "--context-tokens", "6144", "--output-tokens", "600",
            "--min-tokens-per-s", "15", "--concurrency", "8")  # fmt: skip
    result = cli(*args, "--json", "-")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    [note] = [a for a in row["assumptions"] if "prefills" in a]
    said = re.search(r"the (\d+)-token prompts .* \((\d+) ms each: .* at (\d+)% of the dense", note)
    assert said is not None, note
    s = int(said.group(1))
    assert s == 6144 - 600
    m = model("qwen2.5-32b")
    flops = 2 * m.active_params * s + 2 * m.layers * m.hidden * s * s
    rate = card("h200-141g").bf16_tflops.value * 1e12 * 2 * 0.33 * 1.36
    assert int(said.group(2)) == round(flops / rate * 1e3)
    assert int(said.group(3)) == round(0.33 * 1.36 * 100)


def test_a_tensor_parallel_replica_says_its_all_reduce_latency_and_whether_it_was_measured(
    cli: Any,
) -> None:
    """The all-reduce latency a tensor-parallel replica pays is said with its link: NVLink's
    measured, PCIe's assumed (and the row then counts as low confidence)."""
    import json

    def note(card_id: str) -> tuple[str, list[str]]:
        args = ("fit", "llama-3.1-8b", "--task", "serve", "--card", card_id, "--cards", "2",
                "--context-tokens", "8192", "--concurrency", "4", "--json", "-")  # fmt: skip
        result = cli(*args)
        assert result.exit_code == 0, result.output
        [row] = json.loads(result.stdout)
        [said] = [a for a in row["assumptions"] if "all-reduces" in a]
        return said, row["low_confidence"]

    nvlink, low = note("a100-80g")
    assert "22 µs each over nvlink, measured" in nvlink
    assert not any("all-reduces" in a for a in low)
    pcie, low = note("rtx4090")
    assert "100 µs each over pcie-no-p2p, assumed" in pcie
    assert any("all-reduces" in a for a in low)


def test_a_short_prompts_prefill_is_said_as_the_weight_read_it_is(cli: Any) -> None:
    # 10 prompt tokens of a 70B in int4 on one H100: their FLOPs take about 4 ms at the
    # prefill share, reading the weights once 24 ms: the note says the read, not a share of
    # an "int4 peak" (int4 runs on the 16-bit peak)
    import json

    args = ("fit", "llama-3.1-70b", "--task", "serve", "--precision", "int4", "--card",
            "h100-80g", "--cards", "1", "--context-tokens", "610", "--output-tokens", "600",
            "--min-tokens-per-s", "10", "--json", "-")  # fmt: skip
    result = cli(*args)
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    [note] = [a for a in row["assumptions"] if "prefills" in a]
    assert "ms each: reading the weights once, longer than its FLOPs" in note
    assert "int4 peak" not in note
