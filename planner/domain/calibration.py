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

from planner.domain.catalog import Frozen
from planner.domain.values import Slug

Task = Literal["serve", "full", "lora", "qlora", "eval"]


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
