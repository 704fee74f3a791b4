"""Calibration files: measured figures replace estimates in plan fit, the solver and checker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.check import check_plan
from planner.domain.calibration import CalibrationFile, calibrated_cards
from planner.domain.errors import LoadError
from planner.domain.load import load_calibration
from planner.probe.calibration import card_entry, memory_entry, save
from planner.probe.smi import parse_query
from tests.measurements import CARDS
from tests.planning import job, offer, solved

SAMPLES = Path(__file__).parent / "data" / "nvidia-smi"


def write(path: Path, *entries: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({"calibration": list(entries)}))
    return path


def test_probe_entries_round_trip_and_replace_their_subject(tmp_path: Path) -> None:
    [gpu] = parse_query((SAMPLES / "h100-sxm.txt").read_text())
    path = tmp_path / "cal.yaml"
    save(path, [card_entry(CARDS["h100-80g"], gpu, 700.0, 2600.0)])
    save(path, [memory_entry("llama-2-7b", "h100-80g", "lora", 20.0, 18.5, "lora 1 × 2048")])
    save(path, [card_entry(CARDS["h100-80g"], gpu, 650.0, 2500.0)])  # replaces the first
    entries = load_calibration(path)
    assert [e.kind for e in entries] == ["memory", "card"]
    assert entries[1].bf16_tflops == 650.0  # type: ignore[union-attr]
    assert entries[0].offset_gib == pytest.approx(1.5)  # type: ignore[union-attr]
    assert CalibrationFile.model_validate(yaml.safe_load(path.read_text()))


def test_a_measured_card_gets_the_peaks_its_benchmarks_imply() -> None:
    [entry] = CalibrationFile.model_validate(
        {
            "calibration": [
                {"kind": "card", "card": "a100-80g", "bf16_tflops": 187.5, "copy_gbs": 1530}
            ]
        }
    ).calibration
    card = calibrated_cards(CARDS, (entry,), "cal.yaml")["a100-80g"]
    # 187.5 ÷ 75% = 250 TFLOPS (datasheet 312); 1,530 ÷ 85% = 1,800 GB/s (datasheet 2,039)
    assert card.bf16_tflops.value == 250.0 and card.bandwidth_gbs.value == 1800.0
    assert "calibration cal.yaml" in card.bandwidth_gbs.source
    assert CARDS["a100-80g"].bandwidth_gbs.value == 2039  # the shipped spec is untouched


def test_bad_calibration_files_are_located(tmp_path: Path) -> None:
    path = write(
        tmp_path / "bad.yaml",
        {
            "kind": "memory",
            "model": "llama-2-7b",
            "card": "a100-80g",
            "task": "lora",
            "measured_gib": -1,
            "estimated_gib": 2,
        },
    )
    with pytest.raises(LoadError) as caught:
        load_calibration(path)
    assert "measured_gib" in str(caught.value) and "bad.yaml" in str(caught.value)


def test_a_memory_offset_moves_the_solver_and_the_checker(
    make_scenario: Any, tmp_path: Path
) -> None:
    """llama-2-7b LoRA fits one a100-40g by the estimate; a measured peak 25 GiB higher does
    not, so the calibrated plan moves to the 80 GB card and the checker agrees with it."""
    offers = [
        offer("small", card="a100-40g", hourly={"price": 5}),
        offer("big", card="a100-80g", hourly={"price": 10}),
    ]
    jobs = [job("j", 3)]
    plain = solved(make_scenario(offers, jobs, days=1))
    assert plain.plan is not None and plain.plan.train[0].offer == "small"
    cal = write(
        tmp_path / "cal.yaml",
        {
            "kind": "memory",
            "model": "llama-2-7b",
            "card": "a100-40g",
            "task": "lora",
            "measured_gib": 40.0,
            "estimated_gib": 15.0,
        },
    )
    calibrated = make_scenario(offers, jobs, days=1, calibration=[str(cal)])
    result = solved(calibrated)
    assert result.plan is not None and result.plan.train[0].offer == "big"
    assert "memory" in {v.rule for v in check_plan(calibrated, plain.plan).violations}
    assert check_plan(calibrated, result.plan).ok


def test_a_speed_calibration_stands_in_for_a_measurement(
    make_scenario: Any, tmp_path: Path
) -> None:
    """A job without `measured` takes the calibration's tokens/s: 20 h of work at 1,000 tok/s
    on one a100-80g is 72e6 tokens; measured at 2,000 tok/s it takes 10 h."""
    base = job("j", 20)
    del base["measured"]
    offers = [offer("o", hourly={"price": 10})]
    speed = write(
        tmp_path / "speed.yaml",
        {
            "kind": "speed",
            "model": "llama-2-7b",
            "card": "a100-80g",
            "task": "lora",
            "tokens_per_s": 2000,
        },
    )
    s = make_scenario(offers, [base], days=2, calibration=[str(speed)])
    result = solved(s)
    assert result.plan is not None and result.plan.train[0].compute_hours == pytest.approx(10.0)
    assert any(a.startswith("measured") for a in result.plan.assumptions)


def test_a_missing_calibration_file_is_named(make_scenario: Any) -> None:
    with pytest.raises(LoadError, match=r"calibration file 'nope\.yaml' not found"):
        make_scenario([offer("o", hourly={"price": 10})], [job("j", 1)], calibration=["nope.yaml"])


def test_fit_shows_the_measured_term(cli: Any, tmp_path: Path) -> None:
    path = write(
        tmp_path / "cal.yaml",
        {
            "kind": "memory",
            "model": "llama-3.1-8b",
            "card": "h100-80g",
            "task": "lora",
            "measured_gib": 21.0,
            "estimated_gib": 19.0,
        },
    )
    args = ("fit", "llama-3.1-8b", "--task", "lora", "--card", "h100-80g", "--cards", "1")
    plain = json.loads(cli(*args, "--json", "-").stdout)[0]
    result = cli(*args, "--calibration", path, "--json", "-")
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)[0]
    assert row["breakdown_gib"]["calibration"] == 2.0
    assert row["memory_per_card_gib"] == pytest.approx(plain["memory_per_card_gib"] + 2.0, abs=0.01)
    human = cli(*args, "--calibration", path)
    assert "measured: llama-3.1-8b lora on h100-80g" in human.stdout
