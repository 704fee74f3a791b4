"""What every estimate returns: a value with the named assumptions that produced it."""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.domain.catalog import CardType

GIB = float(2**30)
GB = 1e9
# A container image pulled at each start (assumed; a workload's or offer's setup_minutes
# overrides the computed download time). Setup downloads it plus the 16-bit weights.
IMAGE_GB = 10.0


@dataclass(frozen=True)
class Assumption:
    """One figure or rule an estimate rests on. `name` is stable; `text` says it for people."""

    name: str
    text: str
    low_confidence: bool = False

    def __str__(self) -> str:
        return self.text + (" (low confidence)" if self.low_confidence else "")


@dataclass
class Assumptions:
    """An ordered, de-duplicated list of assumptions being collected."""

    items: list[Assumption] = field(default_factory=list)

    def add(self, name: str, text: str, low_confidence: bool = False) -> None:
        if all(a.name != name for a in self.items):
            self.items.append(Assumption(name, text, low_confidence))

    def amend(self, name: str, text: str) -> None:
        """Add `text` to the end of the named assumption's, where it is listed."""
        self.items = [
            Assumption(a.name, a.text + text, a.low_confidence) if a.name == name else a
            for a in self.items
        ]

    def card(self, card: CardType, *figures: str) -> None:
        """Note each named card figure that is low confidence."""
        for figure in figures:
            spec = getattr(card, figure)
            if spec.confidence == "low":
                self.add(
                    f"card.{card.id}.{figure}",
                    f"{card.id} {figure} = {spec.value} ({spec.source})",
                    True,
                )

    def frozen(self) -> tuple[Assumption, ...]:
        return tuple(self.items)


# Terms counted exactly, not estimated: the KV cache (layers × KV heads × head dim × bytes
# per token), gradients and optimizer states (bytes per trained parameter), and a measured
# correction. A negative memory margin (planning at the low end of the band) shrinks every
# other term (weights, activations, logits, workspace and overhead), never these.
EXACT_TERMS = frozenset({"kv_cache", "gradients", "optimizer", "calibration"})


@dataclass(frozen=True)
class MemoryEstimate:
    """Memory per card by term (bytes), against what the card may use.

    `formulas` says each term's arithmetic with the numbers put in (`plan fit --explain`);
    `margin` is the safety margin the verdict applies: it fits when the `need` it sets is
    within `usable`. A margin above 0 grows the whole total; one below 0 shrinks only the
    estimated terms (every term but EXACT_TERMS)."""

    breakdown: dict[str, float]
    usable: float
    assumptions: tuple[Assumption, ...]
    formulas: dict[str, str] = field(default_factory=dict)
    margin: float = 0.0
    kind: str = "memory"  # the error band's kind (planner.estimate.bands)
    # Freed blocks the caching allocator keeps while the card has room and returns (and
    # retries) when an allocation fails: seen in reserved and nvidia-smi peaks, not needed.
    cached: float = 0.0

    @property
    def total(self) -> float:
        return sum(self.breakdown.values())

    @property
    def estimated(self) -> float:
        """The terms a negative margin shrinks: all but the exact ones (EXACT_TERMS)."""
        return sum(v for term, v in self.breakdown.items() if term not in EXACT_TERMS)

    @property
    def allocated(self) -> float:
        """What a peak of allocated bytes (torch.cuda.max_memory_allocated) counts: the total
        without its `overhead` term (CUDA context, workspace slack), which no tensor holds."""
        return self.total - self.breakdown.get("overhead", 0.0)

    @property
    def roomy(self) -> float:
        """What a reserved or device-level peak (max_memory_reserved, nvidia-smi) shows on a
        card with room to spare: the total and the allocator's `cached` blocks. A reserved
        peak leaves out the CUDA context, but the `overhead` term does not say how much of
        it is context and how much workspace and slack inside the allocator: the whole
        term is kept (RESULTS, "What each memory figure counts")."""
        return self.total + self.cached

    def need_at(self, margin: float) -> float:
        """What the card must hold under `margin`: above 0 the whole total grows by it (a
        safety margin); below 0 only the estimated terms shrink by it (the low end of the
        band), the exact ones (KV cache, gradients, optimizer states) stay whole."""
        if margin >= 0:
            return self.total * (1.0 + margin)
        return self.total + margin * self.estimated

    @property
    def need(self) -> float:
        """What the card must hold under this estimate's margin."""
        return self.need_at(self.margin)

    @property
    def fits(self) -> bool:
        return self.need <= self.usable

    @property
    def headroom(self) -> float:
        """What the card has left beyond the estimate and its margin."""
        return self.usable - self.need

    def room_for(self, term: str) -> float:
        """Bytes the exact `term` (the KV cache) may take beside the others with the card
        still fitting under the margin: above 0 the whole, the term included, must fit
        usable ÷ (1 + margin); below 0 the others shrink and the term does not."""
        assert term in EXACT_TERMS, term
        held = self.breakdown.get(term, 0.0)
        if self.margin >= 0:
            return self.usable / (1.0 + self.margin) - (self.total - held)
        return self.usable - (self.need - held)


def gib(value: float) -> str:
    return f"{value / GIB:.2f} GiB"


def usable_bytes(card: CardType, fraction: float) -> float:
    """What one card may hold: its reported memory times the usable fraction."""
    return card.memory_gib.value * GIB * fraction
