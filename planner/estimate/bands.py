"""Error bands: how far estimates of each kind were from published measurements.

A band is the 90th percentile of |measured − estimate| ÷ estimate over the *evaluation* set
(benchmarks/measurements/evaluation.yaml), which no constant is tuned on: a share of the
estimate, so that estimate × (1 + band) covers nine in ten of the figures measured above
it (a band over 100% says the estimate can be off by more than itself). Kinds nest
(`memory:qlora:moe` → `memory:qlora` → `memory`); a kind with fewer than MIN_CASES
evaluation figures takes its parent's band. `python benchmarks/estimate_accuracy.py
--bands --write` regenerates BANDS and LOWER; a test fails when the tables and the
evaluation set disagree.

A lower band (LOWER) says how far below an estimate the truth has lain: the 90th percentile
over the kind's figures of max(0, (estimate − measured) ÷ estimate), each figure measured
at or above the estimate counting 0. The low end a user may plan at (`--memory-margin
-band`) shrinks a memory estimate's estimated terms by it, never its exact ones (the KV
cache, gradients, optimizer states: MemoryEstimate.need_at): a card the estimate overfills
but the low end fits is "marginal", never a silent "no"."""

from __future__ import annotations

import math

MIN_CASES = 3
MEMORY = ("serve_memory", "serve_weights", "kv_budget", "serve_activations", "train_memory")

# kind: (band as a fraction, evaluation figures it rests on). Generated; do not edit by hand.
BANDS: dict[str, tuple[float, int]] = {
    "decode": (0.16, 30),
    "decode:hf": (1.05, 2),
    "decode:vllm": (0.16, 28),
    "memory": (0.32, 96),
    "memory:full": (0.25, 13),
    "memory:full:moe": (0.21, 3),
    "memory:lora": (0.37, 22),
    "memory:lora:moe": (0.02, 2),
    "memory:qlora": (0.4, 30),
    "memory:qlora:moe": (0.44, 4),
    "memory:serve": (0.04, 31),
    "memory:serve:hf": (0.04, 23),
    "memory:serve:vllm": (0.31, 8),
    "prefill": (0.18, 4),
    "throughput": (0.2, 52),
    "train_speed": (0.22, 44),
    "train_speed:full": (0.28, 20),
    "train_speed:lora": (0.18, 12),
    "train_speed:qlora": (0.05, 12),
}


# kind: (lower band as a fraction, evaluation figures it rests on). Generated likewise.
LOWER: dict[str, tuple[float, int]] = {
    "decode": (0.1, 30),
    "decode:hf": (0.07, 2),
    "decode:vllm": (0.16, 28),
    "memory": (0.08, 96),
    "memory:full": (0.05, 13),
    "memory:full:moe": (0.0, 3),
    "memory:lora": (0.04, 22),
    "memory:lora:moe": (0.0, 2),
    "memory:qlora": (0.15, 30),
    "memory:qlora:moe": (0.44, 4),
    "memory:serve": (0.03, 31),
    "memory:serve:hf": (0.03, 23),
    "memory:serve:vllm": (0.01, 8),
    "prefill": (0.18, 4),
    "throughput": (0.14, 52),
    "train_speed": (0.15, 44),
    "train_speed:full": (0.22, 20),
    "train_speed:lora": (0.13, 12),
    "train_speed:qlora": (0.05, 12),
}


def kind_of(quantity: str, task: str, engine: str, moe: bool) -> str:
    """The most specific band kind of an estimate."""
    served = "hf" if engine == "hf" else "vllm"  # gpt-fast, SGLang, TensorRT-LLM: as vLLM
    if quantity in MEMORY:
        if task == "serve":
            return f"memory:serve:{served}"
        return f"memory:{task}" + (":moe" if moe else "")
    if quantity == "decode_tok_s":
        return f"decode:{served}"
    if quantity == "train_tok_s":
        return f"train_speed:{task}"
    return {"serve_throughput": "throughput", "prefill_s": "prefill", "fits": "verdict"}[quantity]


def parents(kind: str) -> list[str]:
    """The kind, then each coarser kind it falls back to."""
    parts = kind.split(":")
    return [":".join(parts[:n]) for n in range(len(parts), 0, -1)]


def band_for(
    kind: str, table: dict[str, tuple[float, int]] | None = None
) -> tuple[float, str] | None:
    """The band (from BANDS, or `table`) of the most specific kind with enough evaluation
    figures, and that kind."""
    for candidate in parents(kind):
        entry = (BANDS if table is None else table).get(candidate)
        if entry is not None and entry[1] >= MIN_CASES:
            return entry[0], candidate
    return None


def lower_band_for(kind: str) -> tuple[float, str] | None:
    """The lower band of the most specific kind with enough evaluation figures."""
    return band_for(kind, LOWER)


def p90(errors: list[float]) -> float:
    """The 90th percentile of absolute errors (nearest rank), rounded up to a whole percent."""
    ranked = sorted(abs(e) for e in errors)
    value = ranked[max(0, math.ceil(0.9 * len(ranked)) - 1)]
    return math.ceil(round(value * 100, 6)) / 100


def build(
    errors_by_kind: dict[str, list[float]], lower: bool = False
) -> dict[str, tuple[float, int]]:
    """BANDS (or with `lower`, LOWER) from evaluation deviations (measured − estimate) ÷
    estimate: every kind and each of its parents pools its figures."""
    pooled: dict[str, list[float]] = {}
    for kind, errors in errors_by_kind.items():
        for parent in parents(kind):
            pooled.setdefault(parent, []).extend(errors)
    if lower:
        pooled = {k: [max(0.0, -e) for e in errors] for k, errors in pooled.items()}
    return {kind: (p90(errors), len(errors)) for kind, errors in sorted(pooled.items())}


def speed_margin(setting: float | str, kind: str) -> float:
    """The share a planned speed is below its estimate: a stated fraction, or with "band" the
    lower band of the estimate's kind (0 where none is known)."""
    if setting != "band":
        return float(setting)
    found = lower_band_for(kind)
    return found[0] if found is not None else 0.0


def memory_margin(setting: float | str, kind: str) -> float:
    """The margin a memory verdict applies (MemoryEstimate.need_at: above 0 the whole
    estimate grows by it, below 0 only its estimated terms shrink): a stated fraction; with
    "band" the error band of the estimate's kind; with "-band" minus its lower band, the low
    end of what was measured (0 where no band is known)."""
    if setting not in ("band", "-band"):
        return float(setting)
    found = band_for(kind) if setting == "band" else lower_band_for(kind)
    if found is None:
        return 0.0
    return found[0] if setting == "band" else -found[0]
