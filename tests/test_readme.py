"""The README is for users: short, self-contained, and its cheap figures rerun here."""

from __future__ import annotations

import re
from pathlib import Path

from planner.domain.load import load_scenario
from tests.planning import solved

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
# documents a user of the repository cannot open (spelt in parts so this file passes too)
FOREIGN = re.compile(
    "|".join(
        [
            "PRODUCT" + r"\.md",
            "ESTIMATION" + r"\.md",
            "SEEDS" + r"\.md",
            "SOLVER-" + "NOTES",
            r"\bissue " + r"[0-9]",
            r"\.\./" + "shared",
        ]
    )
)


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 200


def test_nothing_cites_a_file_outside_the_repository() -> None:
    found = []
    paths = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    for folder in ("planner", "tests", "scenarios", "catalogs", "benchmarks"):
        paths += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".yaml", ".md")]
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FOREIGN.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_every_docs_link_in_the_readme_exists() -> None:
    for target in re.findall(r"\]\(([^)#]+)", README):
        assert (ROOT / target).exists(), target


def test_the_seed_example_costs_what_the_readme_says() -> None:
    line = next(x for x in README.splitlines() if "seed-13b-finetune.yaml" in x)
    stated = re.search(r"CNY ([\d,]+\.\d\d)", line)
    assert stated is not None
    result = solved(load_scenario(ROOT / "scenarios" / "seed-13b-finetune.yaml"))
    assert result.plan is not None and result.status == "optimal"
    assert f"{result.plan.total_cost:,}" == stated.group(1)
