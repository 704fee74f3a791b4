"""Solve the shipped train-only scenarios and print time, gap, model size and savings.

    python benchmarks/solve_times.py [--time-limit 60] [--workers N]

Figures from a run are recorded in benchmarks/RESULTS.md with the machine they ran on.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.domain.load import load_scenario  # noqa: E402
from planner.solve import SolveParams, physical_cores, solve  # noqa: E402

SCENARIOS = ["seed-13b-finetune.yaml", "seed-70b-serving.yaml", "q3-train.yaml", "q3.yaml"]


def _money(value: object) -> str:
    return "infeasible" if value is None else f"{value:,}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=None, help="default: as plan solve")
    args = parser.parse_args()
    workers = SolveParams(workers=args.workers).settings().workers
    print(f"workers {workers}, limit {args.time_limit:g} s, {physical_cores()} physical cores\n")
    print(
        "| scenario | jobs | configs | variables | constraints | status | seconds | gap | "
        "total | naive | heuristic |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in SCENARIOS:
        scenario = load_scenario(ROOT / "scenarios" / name)
        started = time.perf_counter()
        result = solve(scenario, SolveParams(args.time_limit, args.workers))
        seconds = time.perf_counter() - started
        plan, problem = result.plan, result.problem
        assert plan is not None and problem is not None, result.reasons
        configs = sum(len(j.configs) for j in problem.jobs)
        configs += sum(len(j.configs) for j in problem.replica_jobs)
        print(
            f"| {name} | {len(problem.jobs)} | {configs} | {result.size['variables']} | "
            f"{result.size['constraints']} | {plan.status} | {seconds:.2f} | {plan.gap:.2%} | "
            f"{plan.total_cost:,} | {_money(plan.naive_cost)} | {_money(plan.heuristic_cost)} |"
        )


if __name__ == "__main__":
    main()
