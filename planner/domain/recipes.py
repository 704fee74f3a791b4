"""Training knobs and the named recipes that bundle them (vocabulary; the estimator uses them)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from planner.domain.catalog import Frozen

Optimizer = Literal["adamw", "adamw-bf16", "adamw-8bit", "paged-adamw-8bit", "paged-adamw", "sgd"]
Offload = Literal["none", "optimizer", "optimizer+params"]


class TrainKnobs(Frozen):
    """What decides training memory and speed. `None` means: the recipe's value."""

    optimizer: Optimizer | None = None
    zero: Literal[0, 1, 2, 3] | None = None  # DeepSpeed ZeRO stage; FSDP full shard = 3
    offload: Offload | None = None
    checkpointing: bool | None = None  # activation checkpointing (recompute in backward)
    optimizer_in_backward: bool | None = None  # step each parameter as its gradient lands
    chunked_loss: bool | None = None  # cross-entropy over vocabulary chunks, no full fp32 logits
    fused_loss: bool | None = None  # LM head + loss fused chunk by chunk: no logits kept
    attention: Literal["flash", "eager"] | None = None
    lora_rank: Annotated[int, Field(ge=1)] | None = None
    lora_targets: Literal["qv", "attn", "all"] | None = None  # q,v; q,k,v,o; every linear
    lora_precision: Literal["fp32", "bf16"] | None = None  # adapter weights and gradients
    compile: bool | None = None  # torch.compile: fused kernels free intermediate activations
    activation_offload: bool | None = None  # saved activations wait in CPU RAM, not on the card
    packed: bool | None = None  # sequences packed to seq_len (false: padded to the longest)
    mean_seq_len: Annotated[int, Field(ge=1)] | None = None  # real tokens per sequence, unpacked
    pipeline: bool | None = None  # layers split in sequence over the cards, not data parallel
    # FSDP (FSDP1, flat parameters) units that hold frozen and trained weights together (LoRA
    # adapters in the same unit as the base): gradients kept for the whole unit, frozen included
    mixed_units: bool | None = None
    # A mixture of experts trained through a loop over its experts that indexes each one out
    # of fused expert weights (HF transformers' gpt-oss): a 16-bit copy per expert kept for
    # backward, and a full-size gradient of the fused weights per expert
    expert_loop: bool | None = None
    # A plain PyTorch loop around PEFT and bitsandbytes (no trainer framework): a quantised
    # base holds none of the working memory that published trainers' QLoRA peaks hold
    plain_loop: bool | None = None
    mfu: Annotated[float, Field(gt=0, le=1)] | None = None  # model FLOPs utilisation override

    def over(self, base: TrainKnobs) -> TrainKnobs:
        """These knobs where set, `base`'s elsewhere."""
        return base.model_copy(update=self.model_dump(exclude_none=True))


# What most recipes share; each recipe below states only how it differs.
_BASE = TrainKnobs(
    optimizer="adamw",
    zero=0,
    offload="none",
    checkpointing=True,
    optimizer_in_backward=False,
    chunked_loss=False,
    fused_loss=False,
    attention="flash",
    lora_precision="fp32",
    compile=False,
    activation_offload=False,
    packed=True,
    pipeline=False,
    mixed_units=False,
    expert_loop=False,
    plain_loop=False,
)


def _recipe(text: str, **differences: object) -> tuple[str, TrainKnobs]:
    return text, _BASE.model_copy(update=differences)


RECIPES: dict[str, tuple[str, TrainKnobs]] = {
    "ddp-adamw": _recipe(
        "plain data parallel, mixed-precision AdamW (16 B/param), no checkpointing",
        checkpointing=False,
    ),
    "hf-deepspeed-zero2": _recipe(
        "HF Trainer + DeepSpeed ZeRO-2: optimizer and gradients sharded, checkpointing on",
        zero=2,
    ),
    "hf-deepspeed-zero3": _recipe(
        "HF Trainer + DeepSpeed ZeRO-3: weights, gradients and optimizer sharded", zero=3
    ),
    "hf-deepspeed-zero3-offload": _recipe(
        "ZeRO-3 with optimizer and parameters offloaded to CPU RAM (slow, small)",
        zero=3,
        offload="optimizer+params",
    ),
    "fsdp-full-shard": _recipe(
        "PyTorch FSDP FULL_SHARD (= ZeRO-3), mixed-precision AdamW, checkpointing on", zero=3
    ),
    "low-memory-single-device": _recipe(
        "torchtune single-device full fine-tune: bf16 weights, paged 8-bit AdamW stepped "
        "in backward, checkpointing, chunked loss",
        optimizer="paged-adamw-8bit",
        optimizer_in_backward=True,
        chunked_loss=True,
    ),
    "peft-lora": _recipe(
        "PEFT LoRA rank 16 on q,k,v,o, AdamW on the adapters, checkpointing on",
        lora_rank=16,
        lora_targets="attn",
    ),
    "qlora-paged": _recipe(
        "QLoRA paper (artidoro/qlora): NF4 base with double quantisation, rank 64 on every "
        "linear layer in bf16, paged AdamW, checkpointing on",
        optimizer="paged-adamw",
        lora_rank=64,
        lora_targets="all",
        lora_precision="bf16",
    ),
    "unsloth": _recipe(
        "Unsloth: LoRA rank 16 on every linear layer, checkpointed layer inputs offloaded "
        "to CPU RAM, fused Triton kernels (as torch.compile), fused linear + cross-entropy, "
        "8-bit AdamW (unslothai/unsloth README)",
        optimizer="adamw-8bit",
        lora_rank=16,
        lora_targets="all",
        activation_offload=True,
        compile=True,
        chunked_loss=True,
        fused_loss=True,
    ),
    "torchtune-compiled": _recipe(
        "torchtune fine-tune with compile=True: fused kernels, chunked cross-entropy, "
        "activation checkpointing, packed batches",
        compile=True,
        chunked_loss=True,
    ),
    "hf-device-map": _recipe(
        "HF Trainer on a model loaded with device_map='auto': layers split in sequence over "
        "the cards (naive pipeline, one card busy at a time)",
        pipeline=True,
    ),
    "forward-only": _recipe(
        "evaluation: forward passes without gradients", optimizer="sgd", checkpointing=False
    ),
}

METHOD_RECIPES = {
    "full": "hf-deepspeed-zero2",
    "lora": "peft-lora",
    "qlora": "qlora-paged",
    "eval": "forward-only",
}


def recipe_knobs(method: str, recipe: str | None, knobs: TrainKnobs | None = None) -> TrainKnobs:
    """The knobs in force: the method's default recipe, the named recipe over it, then `knobs`.

    Layering keeps LoRA knobs when a LoRA job names a recipe that does not set them.
    """
    _, merged = RECIPES[METHOD_RECIPES[method]]
    if recipe is not None:
        merged = RECIPES[recipe][1].over(merged)
    return knobs.over(merged) if knobs is not None else merged


def check_recipe(value: Any) -> Any:
    """A field validator body: the name of a known recipe."""
    if value is not None and value not in RECIPES:
        from planner.domain.suggest import did_you_mean

        raise ValueError(
            f"unknown recipe {value!r}{did_you_mean(value, RECIPES)}; known: {', '.join(RECIPES)}"
        )
    return value
