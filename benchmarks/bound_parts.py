"""The solver-free bound of scenarios, candidate by candidate, with the time each took.

    python benchmarks/bound_parts.py [--time-limit S] scenarios/q3.yaml [more scenarios]

Prints per scenario: the flat charges, the forced pool priced by time, the unused pools
by segment (alone and with the forced pool's window: planner.bound), then with the
purchases of the pools that gain most decided day by day (planner.purchases), and as a ceiling
the bound of the same quarter without the configs on unused package pools (not a bound
of the quarter: what pricing packages perfectly could at most reach). The relaxation by
segment is solved as `plan solve --time-limit S` solves it (default 60): exactly by GLOP
when small, approximately by PDLP up to the columns that limit allows, else skipped."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner import charges  # noqa: E402
from planner.bound import lower_bound  # noqa: E402
from planner.domain.load import load_scenario  # noqa: E402
from planner.forced import forced_packages  # noqa: E402
from planner.problem import Problem, build_problem  # noqa: E402
from planner.solve import APPROXIMATE_COLUMNS  # noqa: E402


def without(problem: Problem, pools: list[tuple[str, str]]) -> Problem:
    """`problem` without the configs on `pools`' cards."""
    gone = set(pools)
    jobs = tuple(
        replace(j, configs=tuple(c for c in j.configs if not (c.held and c.pool in gone)))
        for j in problem.jobs
    )
    replica_jobs = []
    for r in problem.replica_jobs:
        kept = tuple(c for c in r.configs if c.rented or (c.offer, c.mode) not in gone)
        replica_jobs.append(replace(r, configs=kept, bounds={c: r.bounds[c] for c in kept}))
    return replace(problem, jobs=jobs, replica_jobs=tuple(replica_jobs))


def main(paths: list[str], limit: float = 60) -> None:
    rough = round(APPROXIMATE_COLUMNS * limit)  # as plan solve allows at this limit
    for path in paths:
        problem = build_problem(load_scenario(path), serving=True)
        forced = {k: f.packages for k, f in forced_packages(problem).items()}
        print(f"{path}: {charges.columns(problem):,} columns, forced {forced or 'none'}")
        for name, kwargs in (
            ("flat", {"time": False, "by_day": False}),
            ("by time", {"by_day": False}),
            ("by time and segment", {"by_segment": True, "by_day": False, "approximate": rough}),
            ("and by day", {"by_segment": True, "approximate": rough}),
        ):
            started = time.perf_counter()
            bound = lower_bound(problem, forced, **kwargs)
            took = time.perf_counter() - started
            how = ", ".join(
                x
                for x, on in (
                    ("window", bound.window),
                    ("segments", bound.segments),
                    ("by day: " + " + ".join(k[0] for k in bound.bought), bound.bought or None),
                )
                if on is not None
            )
            print(f"  {name:<20} {float(bound.total):>14,.2f}  {took:5.1f} s  {how}")
        least = lower_bound(problem, forced, time=False, by_day=False).least
        unused = charges.timed_pools(problem, least)
        ceiling = lower_bound(without(problem, unused), forced, approximate=rough).total
        print(f"  {'no unused package':<20} {float(ceiling):>14,.2f}  (ceiling, not a bound)")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--time-limit"]:
        main(args[2:], float(args[1]))
    else:
        main(args)
