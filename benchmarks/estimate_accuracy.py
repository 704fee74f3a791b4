"""gpuplan's estimates against published measurements: calibration and evaluation sets.

python benchmarks/estimate_accuracy.py            the summary per set and kind, then every case
python benchmarks/estimate_accuracy.py --bands    BANDS and LOWER for planner/estimate/bands.py
python benchmarks/estimate_accuracy.py --bands --write    the same, written into that file

Constants may be tuned on the calibration set only; the evaluation set says how far the
estimates are from measurements they were not fitted to (tests/measurements.py, split_of).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.estimate.bands import build, p90
from tests.measurements import CALIBRATION, EVALUATION, Case

BANDS_FILE = Path(__file__).resolve().parent.parent / "planner" / "estimate" / "bands.py"


def bands_text() -> dict[str, str]:
    """BANDS and LOWER as planner/estimate/bands.py writes them, from the evaluation set."""
    deviations = errors_by_kind(EVALUATION, bands=True)
    out = {}
    for name, lower in (("BANDS", False), ("LOWER", True)):
        rows = [f'    "{k}": ({b}, {n}),' for k, (b, n) in build(deviations, lower).items()]
        out[name] = "\n".join([f"{name}: dict[str, tuple[float, int]] = {{", *rows, "}"])
    return out


def with_tables(source: str, tables: dict[str, str]) -> str:
    """`source` with each generated table replaced by its new text."""
    for name, text in tables.items():
        start = source.index(f"{name}: dict[str, tuple[float, int]] = {{")
        end = source.index("}", start) + 1
        source = source[:start] + text + source[end:]
    return source


def errors_by_kind(cases: list[Case], bands: bool = False) -> dict[str, list[float]]:
    """Relative errors of the cases with a numeric figure, by band kind; with `bands`, the
    deviations from the estimate (measured − estimate) ÷ estimate that bands are made of."""
    out: dict[str, list[float]] = defaultdict(list)
    for case in cases:
        if case.quantity != "fits":
            out[case.kind].append(case.deviation() if bands else case.error())
    return dict(out)


def summary(name: str, cases: list[Case]) -> list[str]:
    """One row per kind and per coarser group: figures, median and p90 of |error|, bias."""
    lines = [
        f"### {name} set ({len(cases)} figures)",
        "",
        "| kind | figures | median abs error | p90 abs error | median signed |",
        "|---|---|---|---|---|",
    ]
    pooled: dict[str, list[float]] = defaultdict(list)
    for kind, errors in errors_by_kind(cases).items():
        for group in {kind, kind.split(":")[0], kind.rsplit(":", 1)[0]}:
            pooled[group].extend(errors)
    for group in sorted(pooled):
        errors = pooled[group]
        lines.append(
            f"| {group} | {len(errors)} | {statistics.median(abs(e) for e in errors):.1%} | "
            f"{p90(errors):.0%} | {statistics.median(errors):+.1%} |"
        )
    verdicts = [c for c in cases if c.quantity == "fits"]
    if verdicts:
        right = sum(c.estimate() == c.measured for c in verdicts)
        lines.append(f"\n'fits' verdicts right: {right} of {len(verdicts)}")
    return lines


def table(cases: list[Case]) -> list[str]:
    lines = ["| set | case | kind | measured | estimate | error |", "|---|---|---|---|---|---|"]
    for case in cases:
        estimate = case.estimate()
        if case.quantity == "fits":
            said = {0.0: "OOM", 1.0: "fits"}
            verdict = "agrees" if estimate == case.measured else "DISAGREES"
            lines.append(
                f"| {case.set} | {case.id} | verdict | {said[case.measured]} | "
                f"{said[estimate]} | {verdict} |"
            )
            continue
        lines.append(
            f"| {case.set} | {case.id} | {case.kind} | {case.measured:,.2f} {case.unit} | "
            f"{estimate:,.2f} | {case.error():+.1%} |"
        )
    return lines


def main(argv: list[str]) -> None:
    if "--bands" in argv:
        text = bands_text()
        if "--write" in argv:
            BANDS_FILE.write_text(with_tables(BANDS_FILE.read_text(), text))
            print(f"{BANDS_FILE.relative_to(BANDS_FILE.parents[2])} rewritten")
        else:
            print("\n\n".join(text.values()))
        return
    for name, cases in (("evaluation", EVALUATION), ("calibration", CALIBRATION)):
        print("\n".join(summary(name, cases)), end="\n\n")
    print("\n".join(table(CALIBRATION + EVALUATION)))


if __name__ == "__main__":
    main(sys.argv[1:])
