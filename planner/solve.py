"""Solve a scenario: problem → baselines → CP-SAT (hinted) → plan → independent check.

`solve` returns a typed `Result`; every plan in it has passed the checker. Reporting
(decisions, utilisation, next-best configs) comes after, in `planner.report`.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction

from planner import explain
from planner.baseline import greedy
from planner.bound import lower_bound
from planner.check import CheckResult, check_plan
from planner.cpsat.model import CpModel, Outcome, SolverSettings
from planner.cpsat.variables import estimated_variables
from planner.domain.costs import CostTerm
from planner.domain.errors import Issue, LoadError
from planner.domain.money import money
from planner.domain.plan import Plan, SolverInfo
from planner.domain.scenario import Scenario
from planner.explain import Conflict
from planner.pricing import breakdown
from planner.problem import Infeasible, Problem, build_problem
from planner.reference import Reference
from planner.restrict import top_k
from planner.solution import Solution, to_plan

# incumbent (None when only the bound moved), bound (exact money), elapsed seconds
OnProgress = Callable[[Fraction | None, Fraction, float], None]


class Status(StrEnum):
    OPTIMAL = "optimal"  # proven cheapest
    FEASIBLE = "feasible"  # a checked plan, not proven cheapest
    INFEASIBLE = "infeasible"  # proven: no plan exists
    UNKNOWN = "unknown"  # no plan found within the limits


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


# cuts: cover and package cuts (planner/cpsat/cuts.py); portfolio: max_lp first among
# CP-SAT's workers (planner/cpsat/model.py); top-k: past EXACT_VARIABLES search the cheapest
# configs (planner/restrict.py); size-gate: no model past MAX_VARIABLES or the time limit.
TECHNIQUES = frozenset({"cuts", "portfolio", "top-k", "size-gate"})


@dataclass(frozen=True)
class SolveParams:
    time_limit: float = 60.0
    workers: int | None = None  # default: physical cores, at least MIN_DEFAULT_WORKERS
    seed: int = 0
    deterministic: bool = False  # a deterministic time budget instead of wall-clock
    # the scale techniques in use (benchmarks switch them off one by one to measure each)
    techniques: frozenset[str] = TECHNIQUES

    def settings(self) -> SolverSettings:
        workers = self.workers or max(physical_cores(), MIN_DEFAULT_WORKERS)
        portfolio = "portfolio" in self.techniques
        return SolverSettings(self.time_limit, workers, self.seed, self.deterministic, portfolio)


def default_time_limit(workloads: int) -> float:
    """`plan solve`'s limit when none is given: 60 s up to 100 workloads, 120 s up to 300,
    600 s beyond (loading, building the problem and the baselines of 1,000 generated
    workloads take about 3 minutes on 2 cores; benchmarks/RESULTS.md)."""
    return 60.0 if workloads <= 100 else 120.0 if workloads <= 300 else 600.0


@dataclass(frozen=True)
class Result:
    """What a solve produced: a checked plan (or why there is none), in problem terms too."""

    status: Status
    plan: Plan | None = None
    problem: Problem | None = None
    solution: Solution | None = None
    objective: Fraction | None = None  # exact money
    bound: Fraction | None = None
    seconds: float = 0.0
    terms: dict[CostTerm, Fraction] = field(default_factory=dict)  # the objective's, by term
    reasons: list[str] = field(default_factory=list)
    size: dict[str, int] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)  # why none (proven infeasible)


# Seconds of a wall-clock limit kept for what follows the search: decoding, the independent
# check, annotating and printing (q3, 126k variables: check 0.7 s, the rest under 0.5 s),
# and more for more workloads (100 generated workloads overran 2 s by about 2 s).
AFTER_SEARCH = 2.0
AFTER_SEARCH_PER_WORKLOAD = 0.04


def search_seconds(params: SolveParams, started: float, workloads: int = 0) -> float:
    """What is left of the time limit for CP-SAT: the limit bounds the whole command,
    from `started` (loading, building, baselines) to the printed plan. A deterministic
    limit is deterministic time for the search alone."""
    if params.deterministic:
        return params.time_limit
    after = max(AFTER_SEARCH, AFTER_SEARCH_PER_WORKLOAD * workloads)
    after = min(after, params.time_limit / 10)
    return max(params.time_limit - (time.perf_counter() - started) - after, 0.0)


def solve(
    scenario: Scenario,
    params: SolveParams,
    on_progress: OnProgress | None = None,
    started: float | None = None,
    reference: Plan | None = None,
) -> Result:
    """The cheapest plan found within the limits, checked; or why there is none. The time
    limit counts from `started` (a `time.perf_counter()`; default: now). At a proven
    optimum, ties go first to the plan nearest `reference` (planner.reference)."""
    started = time.perf_counter() if started is None else started
    try:
        problem = build_problem(scenario, serving=True)
    except Infeasible as exc:
        return _proven(explain.alone(scenario, exc.jobs))  # one per job without a config
    naive, naive_why = greedy(problem, careful=False)
    heuristic, heuristic_why = greedy(problem, careful=True)
    floor = lower_bound(problem).total  # sees every workload, where CP-SAT's may not
    # the baselines are checked now, inside the time limit; one the checker refuses (a bug,
    # said in its note) is neither priced, nor a hint, nor a plan to fall back on
    notes = {k: v for k, v in (("naive", naive_why), ("heuristic", heuristic_why)) if v}
    naive_cost = _baseline_cost(problem, naive, notes, "naive")
    heuristic_cost = _baseline_cost(problem, heuristic, notes, "heuristic")
    hints = [
        s
        for s, cost in ((heuristic, heuristic_cost), (naive, naive_cost))
        if s is not None and cost is not None
    ]
    best = min(hints, key=lambda s: s.cost(problem)) if hints else None  # the cheaper baseline
    # past EXACT_VARIABLES the solver searches a top-K restriction (its plans are plans, its
    # bound is not a bound); a model too large to build and search within the limits is not
    # built (a baseline stands in, with the relaxation's bound); why, in the plan's notes
    # (only with a baseline plan: it is kept, so the restriction has a plan and never
    # reports a false infeasibility)
    full_size = estimated_variables(problem)
    large = full_size > EXACT_VARIABLES and "top-k" in params.techniques
    restricted = top_k(problem, best) if large and best is not None else None
    target = restricted.problem if restricted else problem
    target_size = estimated_variables(target) if restricted else full_size
    gate = "size-gate" in params.techniques
    too_large = _too_large(target_size, params, started, best is not None) if gate else ""
    model = None if too_large else CpModel(target, cuts="cuts" in params.techniques)
    if model is not None and best is not None:
        model.hint(restricted.from_full(best) if restricted else best)
    scale = problem.money_scale

    def progress(incumbent: int | None, bound: int, elapsed: float) -> None:
        if on_progress is not None:
            found = None if incumbent is None else Fraction(incumbent, scale)
            # a restriction's own bound bounds only the restriction
            solver_bound = Fraction(0) if restricted else Fraction(bound, scale)
            on_progress(found, max(solver_bound, floor), elapsed)

    workloads = len(problem.jobs) + len(problem.replica_jobs)
    settings = replace(params.settings(), time_limit=search_seconds(params, started, workloads))
    if model is not None and settings.time_limit > 0:
        keep = None if reference is None else Reference.of(reference, scenario.axis)
        outcome = model.solve(settings, progress, keep)
        if restricted is not None and outcome.solution is not None:
            # a plan of the full problem; optimal only among the configs kept, bound unknown
            status = "feasible" if outcome.status == "optimal" else outcome.status
            solution = restricted.to_full(outcome.solution)
            outcome = replace(outcome, status=status, solution=solution, bound=None)
    else:  # no model, or building it took the whole limit: the best baseline if any
        counts = model.size() if model else {"variables": full_size}
        outcome = Outcome("unknown", None, None, None, 0.0, counts)
    if outcome.status == "invalid":
        # CP-SAT refuses a model whose integers overflow: prices or counts far beyond a plan
        raise _money_too_large(problem)
    contradicted = outcome.status == "infeasible" and best is not None
    if contradicted:
        # a baseline plan exists, so the solver's proof is wrong (CP-SAT 9.14-9.15 had a
        # presolve fault that did this); the plan shown is the baseline, checked as always
        outcome = replace(outcome, status="unknown")
    if outcome.solution is None and outcome.status == "unknown" and best is not None:
        # the solver found nothing better in time: the checked baseline is still a plan
        outcome = replace(outcome, status="feasible", solution=best, bound=None, terms={})
    elif (
        outcome.status == "feasible"
        and outcome.solution is not None
        and best is not None
        and best.cost(problem) < outcome.solution.cost(problem)
    ):
        # never show a plan dearer than a baseline: CP-SAT may end the limit on a worse one
        outcome = replace(outcome, solution=best, objective=None, terms={})
    if outcome.solution is None:
        return _no_plan(problem, outcome.status, params, outcome.size, started, too_large)
    solution = outcome.solution
    objective = solution.cost(problem)
    if outcome.objective is not None and objective > Fraction(outcome.objective, scale):
        # below a proven optimum the solver may leave slack, never a lower objective
        raise PlanRejected(_mismatch(objective, Fraction(outcome.objective, scale), scenario))
    status = Status(outcome.status)
    # the better of two valid bounds: CP-SAT's, and the solver-free relaxation's
    solver_bound = None if outcome.bound is None else Fraction(outcome.bound, scale)
    bound: Fraction | None = max(solver_bound or Fraction(0), floor)
    if floor > objective:  # a bound above a checked plan is a bug in the relaxation
        notes["bound"] = (
            f"the relaxation's bound {float(floor):,.2f} exceeds this checked plan's cost: a "
            "bug (please report it); only CP-SAT's bound is shown"
        )
        bound = None if solver_bound is None else max(solver_bound, Fraction(0))
    if too_large:
        notes["solver"] = too_large
    elif restricted is not None:
        kept = _config_count(target)
        every = _config_count(problem)
        notes["solver"] = (
            f"the full model would have about {full_size:,} variables, more "
            f"than the {EXACT_VARIABLES:,} searched whole: the solver searched the cheapest "
            f"configs of each workload ({kept:,} of {every:,}, top-K); not proven, the gap is "
            "against the relaxation's bound"
        )
    elif not settings.time_limit > 0:
        notes["solver"] = (
            f"building the model took {time.perf_counter() - started:,.0f} s of the "
            f"{params.time_limit:g} s limit, leaving no time to search: the plan is the best "
            "baseline (a larger --time-limit lets the solver improve it)"
        )
    if contradicted:
        notes["solver"] = (
            "CP-SAT called the scenario infeasible although a baseline plan passes the "
            "checker: a solver fault; the plan shown is the best baseline (please report it)"
        )
    plan = to_plan(problem, solution, status.value)
    plan = plan.model_copy(
        update={
            "cost_breakdown": breakdown(problem, solution, plan),
            "naive_cost": naive_cost,
            "heuristic_cost": heuristic_cost,
            "baseline_notes": notes,
            "gap": None
            if bound is None
            else round(float((objective - bound) / objective), 6)
            if objective
            else 0.0,
            "bound": None if bound is None else money(bound, plan.currency),
            "solve_seconds": round(outcome.seconds, 3),
            "solver": SolverInfo(
                workers=params.settings().workers,
                seed=params.seed,
                time_limit=params.time_limit,
                deterministic=params.deterministic,
                ties_settled=outcome.ties_settled,
                variables=outcome.size.get("variables", 0),
                constraints=outcome.size.get("constraints", 0),
            ),
        }
    )
    _accept(scenario, plan, objective)
    terms = {t: Fraction(v, scale) for t, v in outcome.terms.items()}
    return Result(
        status, plan, problem, solution, objective, bound, outcome.seconds, terms, [], outcome.size
    )


# Past this many variables (estimated) the solver searches the top-K restriction: the full
# model of 30 generated workloads (250-320k variables) did no better than the heuristic in
# 60 s on 2 cores (benchmarks/RESULTS.md).
EXACT_VARIABLES = 200_000
# The largest model gpuplan builds and searches: a searched model peaks at about 11 KB per
# variable on 4 workers (2.3-2.5 GB at 170k, 5.6 GB at 490k; benchmarks/RESULTS.md), so
# 350k keeps the peak under the 4 GB the issue allows.
MAX_VARIABLES = 350_000
# Seconds to build one variable's worth of model, measured on the 2-core machine (3.2M
# variables in about 90 s): a model whose build would eat more than half of what is left
# of the time limit leaves the search too little to beat the baseline it starts from.
BUILD_SECONDS_PER_VARIABLE = 28e-6


def _config_count(problem: Problem) -> int:
    return sum(len(j.configs) for j in problem.jobs) + sum(
        len(r.configs) for r in problem.replica_jobs
    )


def _too_large(estimate: int, params: SolveParams, started: float, baseline: bool) -> str:
    """Why the CP-SAT model of about `estimate` variables is not built (empty: it is).
    Never for lack of time alone when no baseline plan exists: then the model is the only
    way to a plan."""
    if estimate > MAX_VARIABLES:
        return (
            f"the CP-SAT model would have about {estimate:,} variables, more than the "
            f"{MAX_VARIABLES:,} gpuplan builds (memory); the plan is the best checked "
            "baseline, its gap against the relaxation's bound"
        )
    if baseline and not params.deterministic:
        left = params.time_limit - (time.perf_counter() - started)
        build = estimate * BUILD_SECONDS_PER_VARIABLE
        if build > left / 2:
            return (
                f"building the CP-SAT model (about {estimate:,} variables, ~{build:,.0f} s) "
                f"would take more than half of the {left:,.0f} s left of the time limit; the "
                "plan is the best checked baseline, its gap against the relaxation's bound "
                f"(a --time-limit of {math.ceil(build * 4 + (time.perf_counter() - started))} s "
                "or more lets the solver improve it)"
            )
    return ""


def _accept(scenario: Scenario, plan: Plan, objective: Fraction) -> None:
    """The checker's verdict: every rule holds and its total is the solver's objective."""
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


def _no_plan(
    problem: Problem,
    status: str,
    params: SolveParams,
    size: dict[str, int],
    started: float,
    too_large: str = "",
) -> Result:
    # A workload that cannot be planned even alone is proven so from the estimates and the
    # rules, over every option: a proof however the solver ended.
    alone = explain.alone(problem.scenario, problem.jobs)
    if alone:
        return _proven(alone, problem, size)
    if status == "infeasible":
        # what is left of the same limit (the conflicts come from small re-solves)
        left = replace(params.settings(), time_limit=search_seconds(params, started))
        return _proven(explain.joint_conflicts(problem, left), problem, size)
    reasons = [f"no plan found within {params.time_limit:g} s"]
    if too_large:
        reasons = [f"no plan: {too_large.split(';')[0]}, and neither baseline found a plan"]
    return Result(Status(status), problem=problem, reasons=reasons, size=size)


def _proven(
    conflicts: list[Conflict], problem: Problem | None = None, size: dict[str, int] | None = None
) -> Result:
    """Proven infeasible: the conflicts, each line also a reason."""
    reasons = [c.line() for c in conflicts]
    return Result(
        Status.INFEASIBLE, problem=problem, reasons=reasons, size=size or {}, conflicts=conflicts
    )


def _mismatch(exact: Fraction, solver: Fraction, scenario: Scenario) -> CheckResult:
    result = CheckResult()
    result.add(
        "cost",
        "total",
        float(exact - solver),
        scenario.spec.currency,
        f"the plan costs {float(exact)} but the solver's objective is {float(solver)}",
    )
    return result


def _money_too_large(problem: Problem) -> LoadError:
    scenario = problem.scenario
    return LoadError(
        [
            Issue(
                str(scenario.path or scenario.name),
                None,
                None,
                (),
                "money or counts too large for the solver's 64-bit integers (at the "
                f"money scale of {problem.money_scale} per {scenario.spec.currency}); check "
                "prices, stock and demand for a misplaced exponent",
            )
        ]
    )


def _baseline_cost(
    problem: Problem, solution: Solution | None, notes: dict[str, str], name: str
) -> Decimal | None:
    """A baseline's cost, if it found a plan and the checker accepts it. A baseline the
    checker refuses is a bug in the baseline: reported in its note, never priced."""
    if solution is None:
        return None
    try:
        plan = to_plan(problem, solution, "feasible")
        plan = plan.model_copy(update={"cost_breakdown": breakdown(problem, solution, plan)})
    except ArithmeticError:  # decimal overflow: the same money the solver cannot hold
        raise _money_too_large(problem) from None
    try:
        _accept(problem.scenario, plan, solution.cost(problem))
    except PlanRejected as exc:
        first = exc.check.violations[0]
        notes[name] = f"its plan failed the independent checker (a bug): {first}"
        return None
    return plan.total_cost
