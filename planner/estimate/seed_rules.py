"""The seeds' rules of thumb, computed for the same question, and why gpuplan differs.

The source articles: FP16 weights ≈ params × 2 B; serving: "once the weights fit, keep as
much again as headroom"; full fine-tuning with Adam: weights 2 + gradients 2 + moments 4
B/param plus a few GB of activations; LoRA: "the full base model still sits in memory" plus
activations.
"""

from __future__ import annotations

from planner.domain.catalog import CardType
from planner.domain.model_card import ModelCard
from planner.estimate.core import GB, GIB, MemoryEstimate

RULE_BYTES = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "nf4": 0.5,
}
RULE_ACTIVATIONS = 5 * GB  # "a few GB to >10 GB, by batch and sequence"


def rule_breakdown(model: ModelCard, task: str, precision: str, cards: int) -> dict[str, float]:
    """The seeds' arithmetic, per card (weights split evenly over the cards), in bytes."""
    weights = model.params * RULE_BYTES["nf4" if task == "qlora" else precision] / cards
    if task == "serve":
        return {"weights": weights, "headroom": weights}
    if task == "full":
        params = model.params / cards
        return {
            "weights": weights,
            "gradients": 2.0 * params,
            "optimizer": 4.0 * params,
            "activations": RULE_ACTIVATIONS,
        }
    return {"weights": weights, "activations": RULE_ACTIVATIONS}


def rule_text(task: str, precision: str = "bf16") -> str:
    weights = RULE_BYTES[precision]
    return {
        "serve": "weights × 2 (as much again as headroom)",
        "full": f"{weights:g} + 2 + 4 B/param (weights, gradients, Adam moments) + ~5 GB "
        "activations",
    }.get(task, "base weights + ~5 GB activations")


def disagreement(
    model: ModelCard,
    card: CardType,
    cards: int,
    task: str,
    precision: str,
    ours: MemoryEstimate,
    marginal: bool = False,
) -> str | None:
    """One line saying why gpuplan's verdict differs from the seeds' rule, or None if it
    agrees. `marginal`: gpuplan's verdict is marginal (within its error band either way),
    said as such."""
    rule = rule_breakdown(model, task, precision, cards)
    rule_total = sum(rule.values())
    rule_fits = rule_total <= card.memory_gb.value * GB
    if rule_fits == ours.fits:
        return None
    mine = dict(ours.breakdown)
    if task == "serve":  # the rule's headroom stands for everything beside the weights
        mine = {"weights": mine["weights"], "headroom": ours.total - mine["weights"]}
    # The term whose difference pushes hardest toward our verdict explains it.
    sign = 1.0 if not ours.fits else -1.0
    terms = set(rule) | set(mine)
    term = max(terms, key=lambda t: sign * (mine.get(t, 0.0) - rule.get(t, 0.0)))
    verdict = "fits" if ours.fits else "does not fit"
    if marginal:
        verdict = f"{'fits' if ours.fits else 'overfills it'}, marginally (within its error band)"
    rule_says = f"{rule_text(task, precision)} = {rule_total / GB:.1f} GB"
    memory = f"{card.memory_gb.value:g} GB"
    label = TERM_LABELS.get(term, term.replace("_", " "))
    line = (
        f"seeds' rule ({rule_says} vs {memory}) says it {'fits' if rule_fits else 'does not'}; "
        f"gpuplan says it {verdict}: {label} is "
        f"{mine.get(term, 0.0) / GB:.1f} GB here vs {rule.get(term, 0.0) / GB:.1f} GB in the "
        f"rule ({_why(term, task, ours)})"
    )
    # where that term is not the whole difference, the rest of it, largest first
    gap = ours.total - rule_total
    moves = sorted(
        ((mine.get(t, 0.0) - rule.get(t, 0.0), t) for t in terms),
        key=lambda m: -sign * m[0],
    )
    others = [
        f"{TERM_LABELS.get(t, t)} {d / GB:+.1f}"
        for d, t in moves
        if t != term and abs(d) >= 0.05 * GB
    ]
    if others and abs(mine.get(term, 0.0) - rule.get(term, 0.0)) < 0.8 * abs(gap):
        line += f"; in all {gap / GB:+.1f} GB, the rest from {', '.join(others[:4])} GB"
    # the reserve decides where the total would fit the whole card but not its usable part
    card_bytes = card.memory_gib.value * GIB
    if not ours.fits and ours.need <= card_bytes:
        line += (
            f"; and gpuplan fits against the usable {ours.usable / GIB:.1f} GiB, not the "
            f"card's {card.memory_gib.value:g}: the rest is kept for fragmentation and spikes"
        )
    return line


# the rule's "headroom" is all memory beside the weights, not what a card has left over
TERM_LABELS = {"headroom": "memory beside the weights"}


def _why(term: str, task: str, ours: MemoryEstimate) -> str:
    states = next((a.text for a in ours.assumptions if a.name == "states"), None)
    if term in ("optimizer", "gradients") and states is not None:
        return states  # what this recipe keeps per parameter, in its own words
    return {
        "optimizer": "mixed-precision AdamW keeps an fp32 master copy and fp32 m and v: 12 B/param",
        "headroom": "KV cache for the stated concurrency and context, workspace and overhead",
        "activations": "activations for the stated micro-batch and sequence length",
        "logits": "fp32 logits over the whole vocabulary",
        "weights": "16-bit embeddings in quantised models; sharding"
        if task != "serve"
        else "16-bit embeddings and LM head in quantised models",
        "gradients": "gradient precision and sharding",
        "overhead": "CUDA context and allocator slack",
        "working": "what QLoRA trainers hold beyond every other term, fitted on their peaks",
        "dequant": "a quantised base's matrices dequantised to 16 bit one at a time",
    }.get(term, term)
