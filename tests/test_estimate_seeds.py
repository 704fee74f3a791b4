"""The source articles' memory claims as tests: our figure, its inputs, and where we disagree,
why."""

from __future__ import annotations

from typing import Any

import pytest

from planner.domain.recipes import recipe_knobs
from planner.estimate.core import GB, GIB
from planner.estimate.memory import ServeSetup, TrainSetup, serve_memory, train_memory
from planner.estimate.seed_rules import disagreement
from tests.measurements import card, model


def serve(name: str, card_id: str, cards: int, precision: str, concurrency: int) -> Any:
    setup = ServeSetup(precision=precision, concurrency=concurrency, context_tokens=4096)
    estimate, _ = serve_memory(model(name), card(card_id), cards, setup)
    return estimate


def full_adamw(name: str, card_id: str) -> Any:
    setup = TrainSetup("full", recipe_knobs("full", "ddp-adamw"), "bf16", 2048, 1)
    return train_memory(model(name), card(card_id), 1, setup)


def test_7b_full_finetune_with_mixed_precision_adamw() -> None:
    # Seeds: 14 + 14 + 28 GB ≥ 56 GB → OOM on 40 GB, fits 80 GB with a small batch.
    # Ours: 16 B/param (bf16 weights + grads, fp32 master + m + v) = 6.74e9 × 16 = 107.8 GB
    # before activations: it fits neither card unsharded.
    on_40 = full_adamw("llama-2-7b", "a100-40g")
    on_80 = full_adamw("llama-2-7b", "a100-80g")
    assert not on_40.fits and not on_80.fits
    states = sum(on_80.breakdown[t] for t in ("weights", "gradients", "optimizer"))
    assert states == pytest.approx(6_738_415_616 * 16)
    why = disagreement(model("llama-2-7b"), card("a100-80g"), 1, "full", "bf16", on_80)
    assert why is not None and "says it fits; gpuplan says it does not fit" in why
    assert "optimizer" in why and "fp32 master copy" in why
    assert disagreement(model("llama-2-7b"), card("a100-40g"), 1, "full", "bf16", on_40) is None


def test_fp32_training_keeps_no_separate_master_copy() -> None:
    """In fp32 the weights are AdamW's master copy: 4 + 4 + 8 B/param, the same 16 B as
    mixed precision (a CPU probe of one Llama layer measured exactly this)."""
    setup = TrainSetup("full", recipe_knobs("full", "ddp-adamw"), "fp32", 2048, 1)
    fp32 = train_memory(model("llama-2-7b"), card("a100-80g"), 1, setup)
    params = 6_738_415_616
    assert fp32.breakdown["optimizer"] == pytest.approx(params * 8)
    states = sum(fp32.breakdown[t] for t in ("weights", "gradients", "optimizer"))
    assert states == pytest.approx(params * 16)


def test_70b_bf16_serving_needs_two_h200_and_fp8_fits_one() -> None:
    # 70.55e9 × 2 B = 131.4 GiB of weights > 0.90 × 140.4 GiB = 126.4 GiB usable.
    assert not serve("llama-3.1-70b", "h200-141g", 1, "bf16", 8).fits
    two = serve("llama-3.1-70b", "h200-141g", 2, "bf16", 8)
    assert two.fits
    # KV: 8 × 4096 tokens × 2 × 80 layers × (8 ÷ 2) heads × 128 × 2 B = 5 GiB per card
    assert two.breakdown["kv_cache"] == pytest.approx(5 * GIB)
    fp8 = serve("llama-3.1-70b", "h200-141g", 1, "fp8", 8)
    assert fp8.fits and fp8.breakdown["weights"] / GB == pytest.approx(72.66, abs=0.01)


def test_13b_bf16_serving_fits_40g_only_at_low_concurrency() -> None:
    # 13B weights 26.0 GB; KV 800 KiB/token (MHA): 3.125 GiB per 4096-token request.
    assert serve("llama-2-13b", "a100-40g", 1, "bf16", 1).fits
    assert not serve("llama-2-13b", "rtx4090", 1, "bf16", 1).fits
    busy = serve("llama-2-13b", "a100-40g", 1, "bf16", 8)
    assert not busy.fits  # the seeds' "little room": 8 requests need 25 GiB of KV
    assert busy.breakdown["kv_cache"] == pytest.approx(25 * GIB)
    assert serve("llama-2-13b", "a100-80g", 1, "bf16", 8).fits  # "80 GB allows bigger batches"


def test_13b_lora_fits_a_48g_card() -> None:
    # PEFT LoRA r16 on q,k,v,o with checkpointing, sequence 2048, batch 1.
    setup = TrainSetup("lora", recipe_knobs("lora", None), "bf16", 2048, 1)
    estimate = train_memory(model("llama-2-13b"), card("rtx4090-48g"), 1, setup)
    assert estimate.fits
    assert estimate.breakdown["weights"] / GB == pytest.approx(26.03 + 0.1, abs=0.1)
    assert any(a.low_confidence for a in estimate.assumptions)  # the modified board's memory


def test_7b_quantised_inference_fits_40g_with_room_for_replicas() -> None:
    # Seeds example 3: INT4/INT8 7B inference 6-10 GB in all; several replicas fit 40 GB.
    for precision in ("int8", "int4"):
        estimate = serve("llama-2-7b", "a100-40g", 1, precision, 1)
        assert 4 * GB < estimate.total < 12 * GB
        assert estimate.total * 3 < estimate.usable


def test_a_marginal_serving_verdict_is_said_as_marginal_and_its_term_named_plainly() -> None:
    # Llama 3.1 70B in bf16 on 8 RTX 3090s, one request: the seeds' "weights × 2" says it
    # does not fit 24 GB; gpuplan fits it, marginally (the table's verdict), and names the
    # rule's "headroom" for what it is: all memory beside the weights (KV cache, workspace,
    # overhead), not what the card has left over (the table's headroom column)
    from planner.estimate.fit import verdict

    estimate = serve("llama-3.1-70b", "rtx3090", 8, "bf16", 1)
    assert estimate.fits and verdict(estimate) == "marginal"
    why = disagreement(
        model("llama-3.1-70b"), card("rtx3090"), 8, "serve", "bf16", estimate, marginal=True
    )
    assert why is not None
    assert "gpuplan says it fits, marginally (within its error band): memory beside" in why
    assert "headroom is" not in why
