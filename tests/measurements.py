"""Published measurements of memory and speed, and gpuplan's estimate of each.

The records live in benchmarks/measurements/{calibration,evaluation}.yaml (fields:
benchmarks/measurements/README.md). Each cites its source with the row quoted and states the
knobs the source states; where the source is silent, the record's note names the choice.
The split is fixed by `split_of`: constants may be tuned on the calibration set only.
Used by tests/test_estimate_accuracy.py and benchmarks/estimate_accuracy.py.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from planner.domain.catalog import CardType, Network
from planner.domain.errors import Issue
from planner.domain.load import load_catalog, load_model
from planner.domain.model_card import ModelCard
from planner.domain.recipes import TrainKnobs, recipe_knobs
from planner.estimate.bands import kind_of
from planner.estimate.core import GB, GIB, Assumptions, MemoryEstimate
from planner.estimate.memory import ServeSetup, TrainSetup, serve_memory, train_memory
from planner.estimate.precision import weight_bytes
from planner.estimate.serve import generation_tokens_per_s, prefill_seconds, serving_throughput
from planner.estimate.speed import decode_step_seconds, train_speed

HERE = Path(__file__).resolve().parent.parent / "benchmarks" / "measurements"
IMPORT_CARDS = Path(__file__).resolve().parent.parent / "catalogs" / "import" / "cards.yaml"
SETS = ("calibration", "evaluation")
_, CARDS = load_catalog("jizhisuan-2026-09")


def model(name: str) -> ModelCard:
    return load_model(name, None, lambda _p, message: Issue("tests", None, None, (), message))


@cache
def _extra_cards() -> dict[str, CardType]:
    """Cards measured in the sources but not rented in the seeds' market (datasheets): those
    imported price lists carry too (catalogs/import/cards.yaml), and the rest."""
    imported = yaml.safe_load(IMPORT_CARDS.read_text())["cards"]
    rows = imported + yaml.safe_load((HERE / "cards.yaml").read_text())
    return {row["id"]: CardType.model_validate(row) for row in rows}


def card(name: str, memory_gib: float | None = None) -> CardType:
    """A card; `memory_gib` set to what the measuring run's framework reported."""
    spec = CARDS[name] if name in CARDS else _extra_cards()[name]
    if memory_gib is None:
        return spec
    return spec.model_copy(
        update={"memory_gib": spec.memory_gib.model_copy(update={"value": memory_gib})}
    )


def split_of(case_id: str) -> str:
    """The set a new record belongs to, fixed by its id: half of ids go to evaluation."""
    digest = hashlib.sha256(case_id.encode()).digest()
    return "evaluation" if digest[0] % 2 else "calibration"


@dataclass(frozen=True)
class Case:
    """One published figure and how gpuplan estimates the same thing."""

    record: dict[str, Any]
    set: str

    @property
    def id(self) -> str:
        return str(self.record["id"])

    @property
    def quantity(self) -> str:
        return str(self.record["quantity"])

    @property
    def measured(self) -> float:
        return float(self.record["measured"])

    @property
    def unit(self) -> str:
        return str(self.record["unit"])

    @property
    def tolerance(self) -> float | None:
        value = self.record.get("tolerance")
        return None if value is None else float(value)

    @property
    def source(self) -> str:
        return f"{self.record['source']}: {self.record['quote']}"

    @property
    def task(self) -> str:
        """The estimate's task: serve, or the training method."""
        return str(self.record.get("task", "serve"))

    @property
    def kind(self) -> str:
        """The band group (planner.estimate.bands): quantity × task × engine/recipe."""
        r = self.record
        return kind_of(
            self.quantity, self.task, r.get("engine", "vllm"), model(r["model"]).moe is not None
        )

    def estimate(self) -> float:
        return ESTIMATORS[self.quantity](self.record)

    def _pair(self) -> tuple[float, float]:
        """(estimate, measured) as compared: a time per training step is compared as the
        speed it means (its inverse), so that a speed band reads the same whatever the unit."""
        estimate, measured = self.estimate(), self.measured
        if self.unit == "s/step":
            return 1.0 / estimate, 1.0 / measured
        return estimate, measured

    def error(self) -> float:
        """(estimate − measured) ÷ measured: how wrong the estimate was."""
        estimate, measured = self._pair()
        return (estimate - measured) / measured

    def deviation(self) -> float:
        """(measured − estimate) ÷ estimate: how far the truth lay from the estimate, as a
        share of it. Bands use this, so that E × (1 + band) covers an underestimate."""
        estimate, measured = self._pair()
        return (measured - estimate) / estimate


# --- from a record to gpuplan's estimate ------------------------------------------------------


def _card(r: dict[str, Any]) -> CardType:
    return card(r["card"], r.get("card_memory_gib"))


def _memory_unit(r: dict[str, Any], value: float) -> float:
    return value / {"GiB": GIB, "GB": GB, "MiB": 2.0**20, "MB": 1e6}[r["unit"]]


def _usable_fraction(r: dict[str, Any]) -> float:
    """The card's share the engine may use. vLLM's gpu_memory_utilization is a share of the
    card; TensorRT-LLM's kv_cache_free_gpu_mem_fraction is a share of what the weights leave
    free, so it is carried to the card: (W + f × (M − W)) ÷ M."""
    fraction = float(r.get("usable_fraction", 0.90))
    if r.get("engine") != "trtllm" or "usable_fraction" not in r:
        return fraction
    memory = _card(r).memory_gib.value * GIB
    weights = weight_bytes(model(r["model"]), r.get("precision", "bf16"), Assumptions())
    share = weights / r.get("cards", 1) / memory
    return share + fraction * (1.0 - share)


def _serve_setup(r: dict[str, Any], **overrides: Any) -> ServeSetup:
    context = r.get("context_tokens") or r.get("input_tokens", 0) + r.get("output_tokens", 0)
    engine = r.get("engine") if r.get("engine") in ("hf", "gpt-fast") else "vllm"
    fields: dict[str, Any] = dict(
        precision=r.get("precision", "bf16"),
        engine=engine,
        context_tokens=context,
        concurrency=r.get("concurrency", 1),
        pipeline=bool(r.get("knobs", {}).get("pipeline", False)),
        usable_fraction=_usable_fraction(r),
    )
    if r.get("kv_precision"):
        fields["kv_precision"] = r["kv_precision"]
    fields.update(overrides)
    return ServeSetup(**fields)


def _peak(r: dict[str, Any], estimate: MemoryEstimate) -> float:
    """The part of the estimate the record's figure measures: a peak of allocated bytes
    (`metric: allocated`) counts no overhead; a reserved or device-level peak of a run with
    room to spare also counts the allocator's cached blocks (MemoryEstimate.roomy, overhead
    whole); a figure that does not say what it counts is compared with the total, the need,
    between the two."""
    metric = r.get("metric")
    return {"allocated": estimate.allocated, None: estimate.total}.get(metric, estimate.roomy)


def _serve_memory(r: dict[str, Any]) -> float:
    cards = r.get("cards", 1)
    estimate, _ = serve_memory(model(r["model"]), _card(r), cards, _serve_setup(r))
    peak = _peak(r, estimate) * (cards if r.get("scope") == "all-cards" else 1)
    return _memory_unit(r, peak)


def _serve_weights(r: dict[str, Any]) -> float:
    estimate, _ = serve_memory(model(r["model"]), _card(r), r.get("cards", 1), _serve_setup(r))
    return _memory_unit(r, estimate.breakdown["weights"])


def _vllm(r: dict[str, Any]) -> tuple[float, float]:
    setup = _serve_setup(
        r, batched_tokens=r["batched_tokens"], max_seqs=r["max_seqs"], concurrency=0
    )
    estimate, budget = serve_memory(model(r["model"]), _card(r), r.get("cards", 1), setup)
    return budget, estimate.breakdown["activations"]


# Adapter weights' format where a record states neither it nor a recipe: each framework's
# default. PEFT upcasts adapters to fp32, and so do the frameworks built on it (HF/TRL,
# ms-swift, axolotl); torchtune and litgpt (bf16-true) keep the model's bf16. The QLoRA
# paper's script casts them to bf16 (recipe qlora-paged). Answer.AI's fsdp_qlora train.py
# (precision bf16, its default) keeps them in bf16 too: its 4-bit weights are stored as bf16
# (Linear4bit quant_storage=torch_dtype), its LoRA bases are bf16, and the PEFT of its time
# (LoraLayer.update_layer) moved new adapters to the base weight's floating dtype.
ADAPTER_PRECISION = {
    **dict.fromkeys(("peft", "hf", "trl", "ms-swift", "axolotl"), "fp32"),
    **dict.fromkeys(("torchtune", "litgpt", "fsdp-qlora"), "bf16"),
}


# Frameworks whose FSDP units wrap whole blocks, LoRA adapters beside the frozen weights, so
# that FSDP keeps gradients for the frozen ones too (planner.estimate.memory.mixed_units):
# litgpt's finetune/lora.py, FSDPStrategy(auto_wrap_policy={Block}).
MIXED_FSDP_UNITS = ("litgpt",)
# Frameworks that train QLoRA in a plain PyTorch loop around PEFT and bitsandbytes, no trainer
# framework (knob plain_loop): Answer.AI's fsdp_qlora train.py (AnswerDotAI/fsdp_qlora @
# 05ed9f2) swaps nn.Linear for bitsandbytes' Linear4bit, wraps the model with PEFT's
# get_peft_model, and steps it itself (loss.backward(), optimizer.step()).
PLAIN_LOOPS = ("fsdp-qlora",)
# Frameworks that train with HF transformers' modelling code, whose gpt-oss experts
# (GptOssExperts, transformers 4.55) train through a loop that indexes fused expert weights
# (planner.estimate.memory._expert_loop_terms).
HF_MODELLING = ("hf", "trl", "peft", "axolotl", "ms-swift")


def _train_setup(r: dict[str, Any]) -> TrainSetup:
    task = r["task"]
    stated = dict(r.get("knobs", {}))
    if task in ("lora", "qlora") and not r.get("recipe") and r.get("engine") in ADAPTER_PRECISION:
        stated.setdefault("lora_precision", ADAPTER_PRECISION[r["engine"]])
    if task == "lora" and r.get("engine") in MIXED_FSDP_UNITS:
        stated.setdefault("mixed_units", True)
    if r.get("engine") in PLAIN_LOOPS:
        stated.setdefault("plain_loop", True)
    if r["model"].startswith("gpt-oss") and r.get("engine") in HF_MODELLING:
        stated.setdefault("expert_loop", True)
    for field in ("packed", "mean_seq_len"):  # the records state these beside the knobs
        if field in r:
            stated.setdefault(field, r[field])
    knobs = recipe_knobs(task, r.get("recipe"), TrainKnobs.model_validate(stated))
    precision = r.get("precision", "bf16")
    return TrainSetup(task, knobs, precision, r["seq_len"], r["micro_batch"])


def _train_memory(r: dict[str, Any]) -> float:
    estimate = train_memory(model(r["model"]), _card(r), r.get("cards", 1), _train_setup(r))
    return _memory_unit(r, _peak(r, estimate))


def _fits(r: dict[str, Any]) -> float:
    if r["task"] == "serve":
        served, _ = serve_memory(model(r["model"]), _card(r), r.get("cards", 1), _serve_setup(r))
        return 1.0 if served.fits else 0.0
    estimate = train_memory(model(r["model"]), _card(r), r.get("cards", 1), _train_setup(r))
    return 1.0 if estimate.fits else 0.0


def _decode(r: dict[str, Any]) -> float:
    """Generated tokens/s of one request: prefill included where the source times it."""
    setup, cards = _serve_setup(r), r.get("cards", 1)
    if "input_tokens" in r:
        return generation_tokens_per_s(
            model(r["model"]), _card(r), cards, setup, r["input_tokens"], r["output_tokens"]
        )
    return 1.0 / decode_step_seconds(model(r["model"]), _card(r), cards, setup, 1)


def _throughput(r: dict[str, Any]) -> float:
    """Output tokens/s; with no concurrency stated, as many requests as the KV cache holds."""
    setup = _serve_setup(r, concurrency=r.get("concurrency", 1 << 20))
    cards = r.get("cards", 1)
    total = serving_throughput(
        model(r["model"]), _card(r), cards, setup, r["input_tokens"], r["output_tokens"]
    )
    return total / cards if r["unit"] == "tok/s/card" else total


def _prefill(r: dict[str, Any]) -> float:
    setup = _serve_setup(r)
    seconds = prefill_seconds(
        model(r["model"]), _card(r), r.get("cards", 1), setup, r["input_tokens"]
    )
    return seconds * (1000.0 if r["unit"] == "ms" else 1.0)


def _train_tokens(r: dict[str, Any]) -> float:
    cards = r.get("cards", 1)
    network = Network(gbps=r["network_gbps"]) if "network_gbps" in r else None
    speed = train_speed(
        model(r["model"]),
        _card(r),
        cards,
        _train_setup(r),
        r.get("cards_per_node", 8),
        network,
    )
    if r["unit"] == "s/step":  # one optimizer step: grad_accum micro-batches on every card
        step_tokens = r["micro_batch"] * r.get("grad_accum", 1) * r["seq_len"] * cards
        return step_tokens / speed.tokens_per_s
    return speed.tokens_per_s / cards if r["unit"] == "tok/s/card" else speed.tokens_per_s


ESTIMATORS = {
    "serve_memory": _serve_memory,
    "serve_weights": _serve_weights,
    "kv_budget": lambda r: _vllm(r)[0] / GIB,
    "serve_activations": lambda r: _vllm(r)[1] / GIB,
    "train_memory": _train_memory,
    "fits": _fits,
    "decode_tok_s": _decode,
    "serve_throughput": _throughput,
    "prefill_s": _prefill,
    "train_tok_s": _train_tokens,
}


def load(name: str) -> list[Case]:
    """One set's records, in file order."""
    rows = yaml.safe_load((HERE / f"{name}.yaml").read_text()) or []
    return [Case(row, name) for row in rows if "excluded" not in row]


def excluded() -> list[dict[str, Any]]:
    """Records kept for the record but left out, each with its reason."""
    rows = [r for name in SETS for r in yaml.safe_load((HERE / f"{name}.yaml").read_text())]
    return [r for r in rows if "excluded" in r]


CALIBRATION = load("calibration")
EVALUATION = load("evaluation")
CASES = CALIBRATION + EVALUATION
