"""Calibration files: figures measured on real cards that replace gpuplan's estimates.

Written by `plan probe card|memory --save FILE`, referenced by a scenario (`calibration:
[FILE, ...]`, relative to the scenario) or by `plan fit --calibration FILE`:
- `card`: a card's measured BF16 matmul TFLOPS and copy GB/s; the estimates then use the
  peaks those imply (measured ÷ the share a healthy card reaches), for that card type;
- `memory`: measured peak − estimated peak for one model, card and task, added to every
  memory estimate of that model, card and task (a signed offset in GiB);
- `speed`: measured training tokens/s of one model and task on `cards` cards of a card,
  used as the workload's measured throughput where the workload states none.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from planner.domain.catalog import CardType, Frozen
from planner.domain.values import Slug

Task = Literal["serve", "full", "lora", "qlora", "eval"]
# What a healthy card reaches on the probe's benchmarks, as a share of its datasheet peak
# (assumed: cuBLAS BF16 GEMMs of 8192² reach 70-80% of the dense peak, device copies 80-90% of
# the memory bandwidth). A measured card's peaks are its figures divided by these.
HEALTHY_MATMUL_SHARE = 0.75
HEALTHY_COPY_SHARE = 0.85


class CardCalibration(Frozen):
    kind: Literal["card"]
    card: Slug
    bf16_tflops: Annotated[float, Field(gt=0)]  # measured on an 8192² BF16 GEMM
    copy_gbs: Annotated[float, Field(gt=0)]  # measured device-to-device copy, read + write
    measured: str = ""  # what was measured where (device name, driver, date)


class MemoryCalibration(Frozen):
    kind: Literal["memory"]
    model: str
    card: Slug
    task: Task
    measured_gib: Annotated[float, Field(ge=0)]
    estimated_gib: Annotated[float, Field(ge=0)]
    measured: str = ""

    @property
    def offset_gib(self) -> float:
        return self.measured_gib - self.estimated_gib


class SpeedCalibration(Frozen):
    kind: Literal["speed"]
    model: str
    card: Slug
    cards: Annotated[int, Field(ge=1)] = 1
    task: Task
    tokens_per_s: Annotated[float, Field(gt=0)]
    measured: str = ""


Entry = Annotated[
    CardCalibration | MemoryCalibration | SpeedCalibration, Field(discriminator="kind")
]


class CalibrationFile(Frozen):
    calibration: list[Entry]


def memory_offset_gib(entries: tuple[Entry, ...], model: str, card: str, task: str) -> float:
    """Measured − estimated peak for this model card, card and task (0 if not measured)."""
    return sum(
        e.offset_gib
        for e in entries
        if isinstance(e, MemoryCalibration) and (e.model, e.card, e.task) == (model, card, task)
    )


def calibrated_cards(
    cards: dict[str, CardType], entries: tuple[Entry, ...], where: str
) -> dict[str, CardType]:
    """Card specs with each card calibration's measured peaks in place of the datasheet's."""
    out = dict(cards)
    for e in entries:
        if not isinstance(e, CardCalibration) or e.card not in out:
            continue
        card = out[e.card]
        update = {}
        for figure, measured, share in (
            ("bf16_tflops", e.bf16_tflops, HEALTHY_MATMUL_SHARE),
            ("bandwidth_gbs", e.copy_gbs, HEALTHY_COPY_SHARE),
        ):
            source = f"calibration {where}: measured {measured:g} ({e.measured}) ÷ {share:.0%}"
            spec = getattr(card, figure).model_copy(
                update={"value": round(measured / share, 1), "source": source, "confidence": "high"}
            )
            update[figure] = spec
        out[e.card] = card.model_copy(update=update)
    return out


def measured_lines(
    entries: tuple[Entry, ...], model: str | None = None, task: str | None = None
) -> list[str]:
    """One line per measured figure that replaces an estimate (for a model and task if given)."""
    lines = []
    for e in entries:
        if isinstance(e, CardCalibration):
            lines.append(
                f"{e.card}: BF16 {e.bf16_tflops:g} TFLOPS and copy {e.copy_gbs:g} GB/s measured "
                f"({e.measured}); its peaks become {e.bf16_tflops / HEALTHY_MATMUL_SHARE:.0f} "
                f"TFLOPS and {e.copy_gbs / HEALTHY_COPY_SHARE:.0f} GB/s"
            )
        elif model is not None and (e.model, e.task) != (model, task):
            continue
        elif isinstance(e, MemoryCalibration):
            lines.append(
                f"{e.model} {e.task} on {e.card}: peak {e.measured_gib:g} GiB measured vs "
                f"{e.estimated_gib:g} estimated: {e.offset_gib:+.2f} GiB on every estimate"
            )
        else:
            lines.append(
                f"{e.model} {e.task}: {e.tokens_per_s:g} tokens/s measured on {e.cards}× "
                f"{e.card}, in place of the FLOPs estimate"
            )
    return lines
