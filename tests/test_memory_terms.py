"""Mixture-of-experts training memory, term by term, against hand-worked figures: all experts
resident, activations only for the routed experts, adapters on every targeted expert."""

from __future__ import annotations

import pytest

from planner.domain.recipes import TrainKnobs, recipe_knobs
from planner.estimate.memory import TrainSetup, lora_params, train_memory
from tests.measurements import card, model


def lora(**knobs: object) -> TrainSetup:
    stated = TrainKnobs.model_validate(knobs)
    return TrainSetup("lora", recipe_knobs("lora", None, stated), "bf16", 2048, 1)


def test_moe_activations_hold_only_the_routed_experts() -> None:
    # Qwen3-30B-A3B: h 2048, 4 KV heads × 128, top-8 of 128 experts 768 wide. Per token per
    # layer: 12h + 4h_kv + 8 × (8 × 768) + router logits 4 × 128 + dispatched copies 4 × 8h
    # = 24,576 + 2,048 + 49,152 + 512 + 65,536 = 141,824 B, not the 128 experts' 786,432 B
    # of FFN alone; checkpointing keeps each of the 48 layers' 2h-byte input besides
    m = model("qwen3-30b-a3b")
    per_token = 12 * 2048 + 4 * 512 + 8 * (8 * 768) + 4 * 128 + 4 * 8 * 2048
    assert per_token == 141_824
    estimate = train_memory(m, card("a100-80g"), 1, lora())
    assert estimate.breakdown["activations"] == 48 * 2048 * 2 * 2048 + 2048 * per_token


def test_moe_weights_hold_every_expert() -> None:
    # 16-bit LoRA base: all 30.5B parameters resident, not the 3.35B a token uses
    m = model("qwen3-30b-a3b")
    setup = lora(lora_rank=8, lora_targets="qv", lora_precision="bf16")
    estimate = train_memory(m, card("a100-80g"), 1, setup)
    adapters = 48 * (8 * (2048 + 4096) + 8 * (2048 + 512))
    assert estimate.breakdown["weights"] == pytest.approx(m.params * 2 + adapters * 2)


def test_adapters_on_every_linear_layer_reach_every_expert() -> None:
    # rank 16 on q (2048→4096), k and v (2048→512), o (4096→2048), and each of the 128
    # experts' gate, up (2048→768) and down (768→2048): 278,528 + 17,301,504 per layer
    attention = 16 * ((2048 + 4096) + 2 * (2048 + 512) + (4096 + 2048))
    experts = 128 * 3 * 16 * (2048 + 768)
    assert (attention, experts) == (278_528, 17_301_504)
    assert lora_params(model("qwen3-30b-a3b"), 16, "all") == 48 * (attention + experts)
    assert lora_params(model("qwen3-30b-a3b"), 16, "attn") == 48 * attention


@pytest.mark.parametrize(
    ("name", "idle_experts", "expert_params"),
    [
        # Qwen2-57B-A14B: 56 idle routed experts per layer of 3 × 3584 × 2560, 28 layers
        ("qwen2-57b-a14b", 56, 3 * 3584 * 2560),
        # OLMoE-1B-7B: 56 idle of 64 experts, 3 × 2048 × 1024, 16 layers
        ("olmoe-1b-7b", 56, 3 * 2048 * 1024),
        # gpt-oss-120b: 124 idle of 128 experts, 3 × 2880 × 2880 + 8640 biases, 36 layers
        ("gpt-oss-120b", 124, 3 * 2880 * 2880 + 8640),
    ],
)
def test_new_moe_cards_add_up(name: str, idle_experts: int, expert_params: int) -> None:
    m = model(name)
    assert m.moe is not None
    # the stated count is the architecture's plus what the card's fields leave out (shared
    # expert gates, q/k norms, biases and attention sinks): under 0.1%
    assert abs(m.architecture_params() - m.params) / m.params < 1e-3
    assert m.moe.active_params == m.params - m.layers * idle_experts * expert_params


def test_mixed_fsdp_units_keep_gradients_for_the_frozen_base() -> None:
    # Llama-2-7B LoRA (q,v rank 8, bf16 adapters) sharded by FSDP over 2 cards. With each
    # block's adapters and frozen weights in one FSDP unit, the unit's gradient is kept whole:
    # the base's 6.74B params × 2 B ÷ 2 cards again as gradients, and the 2 gathered units
    # (a block: 4 × 4096² + 3 × 4096 × 11008 + 2 × 4096 params) carry their gradients too.
    m = model("llama-2-7b")
    knobs = dict(zero=3, lora_rank=8, lora_targets="qv", lora_precision="bf16")
    apart = train_memory(m, card("a100-40g"), 2, lora(**knobs))
    mixed = train_memory(m, card("a100-40g"), 2, lora(**knobs, mixed_units=True))
    unit = 4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096
    base = m.params * 2.0 / 2
    assert mixed.breakdown["gradients"] - apart.breakdown["gradients"] == pytest.approx(base)
    assert mixed.breakdown["weights"] - apart.breakdown["weights"] == pytest.approx(2 * unit * 2.0)
    assert "mixed_units" in {a.name for a in mixed.assumptions}
    # Without FSDP sharding (no flat parameters) frozen weights have no gradients
    plain = train_memory(m, card("a100-40g"), 2, lora(lora_rank=8))
    said = train_memory(m, card("a100-40g"), 2, lora(lora_rank=8, mixed_units=True))
    assert said.total == plain.total


def test_expert_loop_holds_copies_of_one_layers_experts() -> None:
    # gpt-oss-20b: 32 experts of 3 × 2880 × 2880 per layer = 796,262,400 params. A full
    # fine-tune with checkpointing holds one layer's 16-bit copies (1,592,524,800 B) and one
    # fused gate_up gradient in flight, two thirds of them (1,061,683,200 B); without
    # checkpointing a LoRA job holds every one of the 24 layers' copies and no such gradient.
    m = model("gpt-oss-20b")
    layer = 32 * 3 * 2880 * 2880
    assert layer == 796_262_400
    full = TrainKnobs(zero=3, expert_loop=True)
    setup = TrainSetup("full", recipe_knobs("full", None, full), "bf16", 4096, 1)
    estimate = train_memory(m, card("h100-80g"), 8, setup)
    assert estimate.breakdown["experts"] == 1_592_524_800 + 1_061_683_200
    eager = train_memory(m, card("h100-80g"), 1, lora(checkpointing=False, expert_loop=True))
    assert eager.breakdown["experts"] == 24 * layer * 2
    # Without the loop (fused or grouped expert kernels) the term is absent
    assert "experts" not in train_memory(m, card("h100-80g"), 1, lora()).breakdown
