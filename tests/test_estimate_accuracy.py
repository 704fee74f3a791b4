"""gpuplan's estimates against published measurements (cases and sources: measurements.py)."""

from __future__ import annotations

import pytest

from tests.measurements import CASES, Case


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_estimate_within_stated_tolerance(case: Case) -> None:
    estimate = case.estimate()
    if case.what == "fits":
        assert estimate == case.measured, case.source
    else:
        assert abs(estimate - case.measured) <= case.tolerance * case.measured, (
            f"{case.id}: estimate {estimate:.3g} vs measured {case.measured:.3g} {case.unit} "
            f"({case.source})"
        )


def test_the_cases_cover_what_the_issue_asks() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 12
    for task in ("lora", "qlora", "full", "vllm", "generate", "decode"):
        assert any(task in c.id or task in c.what for c in CASES), task
    cards = {part for c in CASES for part in ("3090", "4090", "a10g", "a100") if part in c.id}
    assert len(cards) >= 3
    assert all(c.source for c in CASES)
