"""Writing calibration files from probe results (schema: planner.domain.calibration)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import yaml

from planner.domain.calibration import CalibrationFile, CardCalibration, Entry, MemoryCalibration
from planner.domain.catalog import CardType
from planner.probe.smi import GpuReading


def _stamp(what: str) -> str:
    return f"{what}, plan probe, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"


def card_entry(
    card: CardType, reading: GpuReading, tflops: float, copy_gbs: float
) -> CardCalibration:
    return CardCalibration(
        kind="card",
        card=card.id,
        bf16_tflops=round(tflops, 1),
        copy_gbs=round(copy_gbs, 1),
        measured=_stamp(f"{reading.name} {reading.bus_id}, driver {reading.driver}"),
    )


def memory_entry(
    model: str, card: str, task: str, measured_gib: float, estimated_gib: float, what: str
) -> MemoryCalibration:
    return MemoryCalibration.model_validate(
        {
            "kind": "memory",
            "model": model,
            "card": card,
            "task": task,
            "measured_gib": round(measured_gib, 3),
            "estimated_gib": round(estimated_gib, 3),
            "measured": _stamp(what),
        }
    )


def save(path: Path, entries: list[Entry]) -> None:
    """Write (or extend) a calibration file; an entry for the same subject replaces the old."""
    old: list[Entry] = []
    if path.exists():
        old = list(
            CalibrationFile.model_validate(yaml.safe_load(path.read_text()) or {}).calibration
        )

    def key(e: Entry) -> tuple[str, ...]:
        return (e.kind, e.card, getattr(e, "model", ""), getattr(e, "task", ""))

    new_keys = {key(e) for e in entries}
    kept = [e for e in old if key(e) not in new_keys] + entries
    data = CalibrationFile(calibration=kept).model_dump(mode="json")
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
