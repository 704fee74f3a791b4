"""gpuplan's estimates against published measurements: calibration and evaluation sets.

python benchmarks/estimate_accuracy.py            the summary per set and kind, then every case
python benchmarks/estimate_accuracy.py --bands    BANDS and LOWER for planner/estimate/bands.py
python benchmarks/estimate_accuracy.py --bands --write    the same, written into that file
python benchmarks/estimate_accuracy.py --fit-memory        the fitted memory constants, refitted

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
from planner.estimate.core import GIB
from planner.estimate.memory import CACHED_SHARE, QLORA_WORKING_GIB, base_format, train_memory
from tests.measurements import (
    CALIBRATION,
    EVALUATION,
    Case,
    _card,
    _memory_unit,
    _peak,
    _train_setup,
    model,
)

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


def memory_terms(case: Case) -> tuple[float, str, bool, float, float]:
    """A training memory record as the fit sees it: the figure, the quantised base's format
    ("" for none), whether a plain loop trained it, what its figure counts of the estimate
    (tests/measurements.py, _peak) without the fitted terms, and the batch's activations and
    logits where the figure also counts the allocator's cached blocks (reserved and
    device-level peaks), else 0; all in GiB."""
    r = case.record
    setup = _train_setup(r)
    estimate = train_memory(model(r["model"]), _card(r), r.get("cards", 1), setup)
    b = estimate.breakdown
    roomy = r.get("metric") in ("reserved", "device")
    transient = b["activations"] + b["logits"] if roomy else 0.0
    counted = _peak(r, estimate) - (estimate.cached if roomy else 0.0) - b.get("working", 0.0)
    plain = bool(setup.knobs.plain_loop)
    fmt = base_format(setup) if "working" in b else ""
    figure = case.measured / _memory_unit(r, 1.0)  # the record's unit, in bytes
    return figure / GIB, fmt, plain, counted / GIB, transient / GIB


def fit_memory(cases: list[Case]) -> tuple[dict[str, float], float, float]:
    """QLORA_WORKING_GIB per 4-bit format and CACHED_SHARE: on a grid (0.1 GiB to 5, 0.01 to
    1), the values with the least mean |relative error| over the training memory records of
    `cases` (the calibration set) that either reaches. The fixed parts reach QLoRA figures not
    trained in a plain loop; the share reaches reserved and device-level peaks. Ties go to
    the smaller value. Returns the constants and that mean error."""
    rows = [memory_terms(c) for c in cases if c.quantity == "train_memory"]
    rows = [row for row in rows if (row[1] and not row[2]) or row[4]]

    def error(row: tuple[float, str, bool, float, float], part: float, share: float) -> float:
        figure, fmt, plain, rest, transient = row
        fixed = 0.0 if plain or not fmt else part
        return abs(rest + fixed + share * transient - figure) / figure

    best: tuple[float, dict[str, float], float] | None = None
    for step in range(101):
        share = step / 100
        total = sum(error(row, 0.0, share) for row in rows if not row[1] or row[2])
        fixed: dict[str, float] = {}
        for fmt in ("nf4", "int4"):
            mine = [row for row in rows if row[1] == fmt and not row[2]]
            errors = [sum(error(row, t / 10, share) for row in mine) for t in range(51)]
            fixed[fmt] = errors.index(min(errors)) / 10
            total += min(errors)
        if best is None or total < best[0] - 1e-12:
            best = (total, fixed, share)
    assert best is not None
    return best[1], best[2], best[0] / len(rows)


def main(argv: list[str]) -> None:
    if "--fit-memory" in argv:
        fixed, share, error = fit_memory(CALIBRATION)
        print(f"QLORA_WORKING_GIB = {fixed}\nCACHED_SHARE = {share}  # mean |error| {error:.1%}")
        print(f"(now: {QLORA_WORKING_GIB}, {CACHED_SHARE})")
        return
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
