"""Print gpuplan's estimate against every published measurement: the table, median, worst.

python benchmarks/estimate_accuracy.py          (from the repository root)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.measurements import CASES


def main() -> None:
    print("| case | what | measured | estimate | error | tolerance |")
    print("|---|---|---|---|---|---|")
    errors = []
    for case in CASES:
        estimate = case.estimate()
        if case.what == "fits":
            verdict = "OOM" if case.measured == 0 else "fits"
            ours = "OOM" if estimate == 0 else "fits"
            print(
                f"| {case.id} | {case.what} | {verdict} | {ours} | "
                f"{'agrees' if ours == verdict else 'DISAGREES'} | exact |"
            )
            continue
        error = (estimate - case.measured) / case.measured
        errors.append(abs(error))
        print(
            f"| {case.id} | {case.what} | {case.measured:,.2f} {case.unit} | {estimate:,.2f} | "
            f"{error:+.1%} | ±{case.tolerance:.0%} |"
        )
    print(
        f"\n{len(errors)} figures: median |error| {statistics.median(errors):.1%}, "
        f"worst {max(errors):.1%}"
    )


if __name__ == "__main__":
    main()
