"""Machine placement, billing minimums and billing steps on planned quarters.

    python benchmarks/placement.py [--mix 30] [--seeds 0 1] [--time-limit 60]

For q3 as shipped, q3 with every hourly offer billed with a 2 h minimum, per 2 h, and per
0.75 h (with a 1 h minimum), and generated mix quarters (benchmarks/generate_mix.py:
8-card machines sold daily, weekly and monthly), it prints the plan's total and gap, the
model's size, how many placements the checker refuted and the solver learnt away
(planner/placement.py), and the seconds the checker's machine search took on the plan
shown.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import generate as base  # noqa: E402
import generate_mix  # noqa: E402

from planner.check import check_plan  # noqa: E402
from planner.domain.load import load_scenario  # noqa: E402
from planner.solve import SolveParams, solve  # noqa: E402


def _billing(folder: Path, name: str, **hourly: float) -> Path:
    """q3 with every hourly offer's billing terms changed to `hourly`."""
    data = yaml.safe_load((ROOT / "scenarios" / "q3.yaml").read_text())
    catalog = load_scenario(ROOT / "scenarios" / "q3.yaml").catalogs[0]
    data["offers"] = [{"id": o.id, "hourly": hourly} for o in catalog.offers if o.hourly]
    path = folder / f"q3-{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mix", type=int, default=30)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    print("| scenario | status | total | gap | variables | placements learnt | check s |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = [
            ROOT / "scenarios" / "q3.yaml",
            _billing(folder, "min-2h", min_hours=2),
            _billing(folder, "per-2h", min_hours=2, increment_hours=2),
            _billing(folder, "per-0.75h", min_hours=1, increment_hours=0.75),
        ]
        for seed in args.seeds:
            data = generate_mix.generate(args.mix, seed)
            paths.append(base.write(data, folder / f"mix-{args.mix}-s{seed}.yaml"))
        for path in paths:
            scenario = load_scenario(path)
            result = solve(scenario, SolveParams(args.time_limit))
            plan, problem = result.plan, result.problem
            learnt = len(problem.nogoods) if problem is not None else 0
            if plan is None:
                print(f"| {path.stem} | {result.status} | - | - | - | {learnt} | - |")
                continue
            started = time.perf_counter()
            check_plan(scenario, plan)
            seconds = time.perf_counter() - started
            gap = "-" if plan.gap is None else f"{plan.gap:.2%}"
            print(
                f"| {path.stem} | {plan.status} | {plan.total_cost:,} | {gap} | "
                f"{result.size.get('variables', 0):,} | {learnt} | {seconds:.2f} |"
            )


if __name__ == "__main__":
    main()
