"""Solve a scenario: problem → baselines → CP-SAT (hinted) → plan → independent check."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction

from planner.baseline import greedy
from planner.check import check_plan
from planner.cpsat.model import CpModel, SolverSettings
from planner.domain.plan import Assignment, Plan
from planner.domain.scenario import Scenario
from planner.problem import Infeasible, Problem, build_problem
from planner.report import decisions, next_best, plan_assumptions, utilisation
from planner.solution import Solution, money, to_plan
from planner.violations import CheckResult

# incumbent, bound (exact money), gap, elapsed seconds
OnProgress = Callable[[Fraction, Fraction, float, float], None]


class PlanRejected(Exception):
    """The solver's plan failed the independent checker: a bug, never shown as a plan."""

    def __init__(self, check: CheckResult) -> None:
        self.check = check
        super().__init__("; ".join(str(v) for v in check.violations))


def physical_cores() -> int:
    """Physical cores (CP-SAT gets worse plans with more workers than cores)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii") as f:
            pairs = set()
            physical = core = ""
            for line in f:
                if line.startswith("physical id"):
                    physical = line.split(":")[1].strip()
                elif line.startswith("core id"):
                    core = line.split(":")[1].strip()
                    pairs.add((physical, core))
            if pairs:
                return len(pairs)
    except OSError:
        pass
    return max(1, (os.cpu_count() or 2) // 2)


# Fewest workers by default. SOLVER-NOTES measured worse plans with 8 workers on 2 cores;
# here, on the same 2 cores, q3 (126k variables) with 2 workers either kept a bound of 0
# (one LP search) or never improved on the heuristic (interleaved), while 4 workers reached
# an 18% gap and a plan 11.6% below the heuristic in 60 s (q3-train: optimal in 4.7 s
# vs 7.3 s). So the default is the physical cores, but at least 4.
MIN_DEFAULT_WORKERS = 4


@dataclass(frozen=True)
class SolveParams:
    time_limit: float = 60.0
    workers: int | None = None  # default: physical cores, at least MIN_DEFAULT_WORKERS
    seed: int = 0
    deterministic: bool = False  # a deterministic time budget instead of wall-clock

    def settings(self) -> SolverSettings:
        workers = self.workers or max(physical_cores(), MIN_DEFAULT_WORKERS)
        return SolverSettings(self.time_limit, workers, self.seed, self.deterministic)


@dataclass(frozen=True)
class Result:
    status: str  # optimal | feasible | infeasible | unknown
    plan: Plan | None
    problem: Problem | None
    objective: Fraction | None = None  # exact money
    reasons: list[str] = field(default_factory=list)
    size: dict[str, int] = field(default_factory=dict)


def solve(scenario: Scenario, params: SolveParams, on_progress: OnProgress | None = None) -> Result:
    """The cheapest plan found within the limits, checked; or why there is none."""
    try:
        problem = build_problem(scenario, serving=True)
    except Infeasible as exc:
        return Result("infeasible", None, None, reasons=exc.reasons)
    naive, naive_why = greedy(problem, careful=False)
    heuristic, heuristic_why = greedy(problem, careful=True)
    model = CpModel(problem)
    hints = [s for s in (heuristic, naive) if s is not None]
    if hints:
        model.hint(min(hints, key=lambda s: s.cost(problem)))
    scale = problem.money_scale

    def progress(incumbent: int, bound: int, elapsed: float) -> None:
        if on_progress is not None:
            gap = (incumbent - bound) / incumbent if incumbent else 0.0
            on_progress(Fraction(incumbent, scale), Fraction(bound, scale), gap, elapsed)

    outcome = model.solve(params.settings(), progress)
    if outcome.solution is None and outcome.status == "unknown" and hints:
        # the solver found nothing better in time: the checked baseline is still a plan
        best = min(hints, key=lambda s: s.cost(problem))
        outcome = replace(
            outcome,
            status="feasible",
            solution=best,
            objective=problem.integer(best.cost(problem)),
            bound=None,
        )
    if outcome.solution is None:
        reasons = [f"no plan found within {params.time_limit:g} s"]
        if outcome.status == "infeasible":
            core = CpModel(problem, require_all=False).explain(params.settings())
            together = f" together: {', '.join(core)}" if core else ""
            reasons = [
                f"the solver proved that no plan fits every deadline, window, "
                f"dependency and stock limit{together}"
            ]
        return Result(outcome.status, None, problem, reasons=reasons, size=outcome.size)
    # The plan's exact cost. Below a proven optimum the solver may leave slack (a rental
    # start counted where none happens), so its objective can only be higher, never lower.
    solver_objective = Fraction(outcome.objective or 0, scale)
    objective = outcome.solution.cost(problem)
    if objective > solver_objective:
        raise PlanRejected(_mismatch(objective, solver_objective, problem.scenario.spec.currency))
    bound = None if outcome.bound is None else max(Fraction(outcome.bound, scale), Fraction(0))
    plan = _finish(problem, outcome.solution, outcome.status, naive, heuristic)
    notes = {k: v for k, v in (("naive", naive_why), ("heuristic", heuristic_why)) if v}
    plan = plan.model_copy(update={"baseline_notes": notes})
    gap = None if bound is None else float((objective - bound) / objective) if objective else 0.0
    plan = plan.model_copy(
        update={
            "gap": None if gap is None else round(gap, 6),
            "bound": None if bound is None else money(bound, plan.currency),
            "solve_seconds": round(outcome.seconds, 3),
            "solver": {
                "workers": params.settings().workers,
                "seed": params.seed,
                "time_limit": params.time_limit,
                "deterministic": params.deterministic,
                **outcome.size,
            },
        }
    )
    check = check_plan(scenario, plan)
    if check.ok and check.total != objective:
        check.add(
            "cost",
            "total",
            float(check.total - objective),
            plan.currency,
            f"the checker's total {float(check.total)} differs from the solver's "
            f"objective {float(objective)}",
        )
    if not check.ok:
        raise PlanRejected(check)
    return Result(outcome.status, plan, problem, objective, size=outcome.size)


def _mismatch(exact: Fraction, solver: Fraction, currency: str) -> CheckResult:
    result = CheckResult()
    result.add(
        "cost",
        "total",
        float(exact - solver),
        currency,
        f"the plan costs {float(exact)} but the solver's objective is {float(solver)}",
    )
    return result


def _finish(
    problem: Problem,
    solution: Solution,
    status: str,
    naive: Solution | None,
    heuristic: Solution | None,
) -> Plan:
    """The plan with its baselines, checked breakdown, utilisation and decision lines."""
    plan = to_plan(problem, solution, status)
    currency = plan.currency
    check = check_plan(problem.scenario, plan)
    assignments = [
        a.model_copy(update={"next_best": next_best(problem, solution, a.workload)})
        if isinstance(a, Assignment)
        else a
        for a in plan.assignments
    ]
    return plan.model_copy(
        update={
            "naive_cost": _baseline_cost(problem, naive, currency),
            "heuristic_cost": _baseline_cost(problem, heuristic, currency),
            "cost_breakdown": check.breakdown,
            "assignments": assignments,
            "utilisation": utilisation(problem, plan),
            "decisions": decisions(problem, plan),
            "assumptions": plan_assumptions(problem, plan),
        }
    )


def _baseline_cost(problem: Problem, solution: Solution | None, currency: str) -> Decimal | None:
    """A baseline's cost, if it found a plan, after the checker accepts it."""
    if solution is None:
        return None
    plan = to_plan(problem, solution, "feasible")
    check = check_plan(problem.scenario, plan)
    if not check.ok:
        raise PlanRejected(check)
    return money(solution.cost(problem), currency)
