"""Imports point one way (STYLE.md): YAML → domain → … → cli; only cli touches typer/rich."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "planner"

# module prefix -> imports it must never make
FORBIDDEN = {
    "planner.domain": (
        "planner.cli",
        "planner.cpsat",
        "planner.solve",
        "planner.estimate",
        "planner.report",
        "ortools",
        "typer",
        "rich",
    ),
    "planner.estimate": ("planner.cli", "planner.cpsat", "ortools", "typer", "rich"),
    "planner.report": ("ortools", "typer", "rich", "planner.cli"),
    "planner": ("typer", "rich"),  # everything outside planner.cli
}


# The checker shares no arithmetic with the model: it may read the schemas and ask the
# estimates, nothing else of the planner.
CHECKER = "planner.check"
CHECKER_MAY_USE = ("planner.domain", "planner.estimate", "planner.check")


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_points_the_wrong_way() -> None:
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        module = module_name(path)
        if module.startswith("planner.cli"):
            continue
        for prefix, banned in FORBIDDEN.items():
            if module == prefix or module.startswith(prefix + "."):
                for name in imports_of(path):
                    if any(name == b or name.startswith(b + ".") for b in banned):
                        wrong.append(f"{module} imports {name}")
    assert not wrong, wrong


def test_the_checker_imports_only_schemas_and_estimates() -> None:
    wrong = []
    for path in (PACKAGE / "check").rglob("*.py"):
        for name in imports_of(path):
            if name == "planner" or (
                name.startswith("planner.")
                and not any(name == m or name.startswith(m + ".") for m in CHECKER_MAY_USE)
            ):
                wrong.append(f"{module_name(path)} imports {name}")
            if name.split(".")[0] in ("ortools", "typer", "rich", "networkx"):
                wrong.append(f"{module_name(path)} imports {name}")
    assert (PACKAGE / "check" / "__init__.py").exists()
    assert not wrong, wrong


def test_the_rule_would_catch_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "x.py"
    bad.write_text("import typer\nfrom ortools.sat.python import cp_model\n")
    assert imports_of(bad) == {"typer", "ortools.sat.python"}


# Where a price may be read outside the one pricing (planner/prices.py) on the model side,
# and why: none of these computes money.
PRICE_READS_ALLOWED = {
    "planner/report.py": "the catalog table shows each offer's price as listed",
    "planner/whatif/shorthand.py": "--price patches a price; it prices nothing",
    "planner/cli/variant.py": "describes a --price change",
    "planner/serving.py": "asks whether any offer prices disks at all",
    "planner/estimate/fit.py": "plan fit's hourly price of a card count, without a scenario",
    "planner/catalog_import.py": "reads another tool's price list to write a catalog",
    "planner/domain/currency.py": "converts a price list at the scenario's stated rate",
}
MONEY_PATTERN = re.compile(
    r"\.price\b|disk_price_per_gb_month|/ ?720\b|HOURS_PER_MONTH|held_card_hour_price"
)


def test_no_model_side_cost_rule_outside_the_one_pricing() -> None:
    """Every model-side module prices through planner.prices (and the rule primitives in
    planner.rules it builds on); the checker keeps its own arithmetic on purpose."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).as_posix()
        if relative.startswith(("planner/check/", "planner/domain/")) or relative in (
            "planner/prices.py",
            *PRICE_READS_ALLOWED,
        ):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if MONEY_PATTERN.search(code) and not code.strip().startswith(('"', "'")):
                found.append(f"{relative}:{number}: {line.strip()}")
    assert not found, "prices read outside planner/prices.py:\n" + "\n".join(found)
