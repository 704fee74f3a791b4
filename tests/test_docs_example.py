"""The small complete example of docs/scenarios.md, solved as written: the files a reader
copies must validate and give the figure the page states."""

from __future__ import annotations

import re
from pathlib import Path

from planner.domain.load import load_scenario
from tests.planning import solved

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenarios.md"


def _blocks() -> dict[str, str]:
    """The page's YAML blocks, by the file name in their first comment line."""
    blocks = re.findall(r"```yaml\n# (\S+)\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return {name: body for name, body in blocks}


def test_the_example_solves_to_the_stated_cost(tmp_path: Path) -> None:
    blocks = _blocks()
    assert set(blocks) == {"my-catalog.yaml", "my-quarter.yaml"}
    for name, body in blocks.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    result = solved(load_scenario(tmp_path / "my-quarter.yaml"))
    assert result.plan is not None and result.status == "optimal"
    assert str(result.plan.total_cost) == "550.00"
    assert "total CNY 550.00" in DOC.read_text(encoding="utf-8")
    assert {r.mode for r in result.plan.rentals} == {"hourly"}
