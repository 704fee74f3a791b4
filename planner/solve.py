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
from enum import StrEnum
from fractions import Fraction
from typing import Protocol

from planner import explain
from planner.baseline import greedy
from planner.bound import Bound, credited, lower_bound, optional_pools, without_packages
from planner.check import check_plan
from planner.cpsat.lns import improve
from planner.cpsat.model import CpModel, Outcome, Progress, SolverSettings
from planner.cpsat.variables import estimated_variables
from planner.domain.costs import CostTerm
from planner.domain.errors import Issue, LoadError
from planner.domain.money import money
from planner.domain.plan import ForcedPurchase, Plan, SolverInfo
from planner.domain.scenario import Scenario
from planner.explain import Conflict
from planner.forced import Forced, forced_packages
from planner.optional import tried
from planner.parallel import Beside, Executor
from planner.placement import nogood, with_nogoods
from planner.pricing import breakdown
from planner.problem import Infeasible, NoGood, Problem, build_problem
from planner.reference import Reference
from planner.restrict import Restricted, top_k
from planner.served import improved
from planner.shifted import TRIALS, swept
from planner.solution import Solution, to_plan

# work that fits a pool's cards but not its machines, per pool (offer, mode)
Conflicts = dict[tuple[str, str], tuple[str, ...]]

# `what` of a progress report that names the solve's phase rather than a plan
PHASE = "phase:"


class OnProgress(Protocol):
    """Told the incumbent (None when only the bound moved), the bound (exact money), the
    seconds since the solve began and, where it is not the search's, where the incumbent
    comes from ("the checked heuristic plan", "final")."""

    def __call__(
        self, incumbent: Fraction | None, bound: Fraction, elapsed: float, what: str = ""
    ) -> None: ...


class Status(StrEnum):
    OPTIMAL = "optimal"  # proven cheapest
    FEASIBLE = "feasible"  # a checked plan, not proven cheapest
    INFEASIBLE = "infeasible"  # proven: no plan exists
    UNKNOWN = "unknown"  # no plan found within the limits


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


# Fewest workers by default. A prototype measured worse plans with 8 workers on 2 cores;
# here, on the same 2 cores, q3 (126k variables) with 2 workers either kept a bound of 0
# (one LP search) or never improved on the heuristic (interleaved), while 4 workers reached
# an 18% gap and a plan 11.6% below the heuristic in 60 s (q3-train: optimal in 4.7 s
# vs 7.3 s). So the default is the physical cores, but at least 4.
MIN_DEFAULT_WORKERS = 4


# cuts: cover and package cuts (planner/cpsat/cuts.py); portfolio: max_lp first among
# CP-SAT's workers (planner/cpsat/model.py); top-k: past EXACT_VARIABLES search the cheapest
# configs (planner/restrict.py); size-gate: no model past MAX_VARIABLES or the time limit.
# forced: packages proven forced by jobs that run only on one pool, in the bound
# (planner/forced.py).
# lns: a large-neighbourhood search after CP-SAT's own, without a proof (planner/cpsat/lns.py).
# per-service: the heuristic's plan with each service replanned alone (planner/served.py);
# shift: on top of it, the forced packages moved by whole days (planner/shifted.py).
# buy: on top of it too, one optional package bought first on a few days (planner/optional.py).
TECHNIQUES = frozenset(
    {"cuts", "portfolio", "top-k", "size-gate", "forced", "lns", "per-service", "shift", "buy"}
)


@dataclass(frozen=True)
class SolveParams:
    time_limit: float = 60.0
    workers: int | None = None  # default: physical cores, at least MIN_DEFAULT_WORKERS
    seed: int = 0
    deterministic: bool = False  # a deterministic time budget instead of wall-clock
    # the scale techniques in use (benchmarks switch them off one by one to measure each)
    techniques: frozenset[str] = TECHNIQUES
    # the share of the search time for the neighbourhood search after CP-SAT's (None:
    # LNS_SHARE on a top-K restriction or a full model of LNS_VARIABLES or more, else 0)
    lns_share: float | None = None
    # where the neighbourhood search runs: None, one neighbourhood at a time here; else
    # rounds of `jobs` neighbourhoods in local processes or on Ray (planner.parallel)
    executor: Executor | None = None

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
    # the model contradicted the checker or a checked plan: the plan (if any) is the cheapest
    # checked one, the line says what (planner.solve._settle)
    inconsistency: str | None = None


# Seconds of a wall-clock limit kept for what follows the search: decoding, the independent
# check, annotating and printing (q3, 126k variables: check 0.7 s, the rest under 0.5 s),
# and more for more workloads (100 generated workloads overran 2 s by about 2 s). On the
# generated 30-workload quarter decoding and checking took 1.8 s, annotating 0.9 s,
# printing 0.4 s and leaving Python 0.7 s: the command ended 2 s past its limit with 2 s kept.
AFTER_SEARCH = 3.0
AFTER_SEARCH_PER_WORKLOAD = 0.04
# The neighbourhood search is not started with less wall time than this left: setting up
# its workers (each neighbourhood's cut of the model) took 6 s on the generated 30-workload
# mix quarter, so a 0.5 s budget ended the command 8 s past its limit
LNS_LEAST = 5.0


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

    def phase(name: str) -> None:
        if on_progress is not None:
            on_progress(None, Fraction(0), time.perf_counter() - started, PHASE + name)

    phase("building the problem")
    try:
        problem = build_problem(scenario, serving=True)
    except Infeasible as exc:
        return _proven(explain.alone(scenario, exc.jobs))  # one per job without a config
    phase("planning the baselines")
    naive, naive_why = greedy(problem, careful=False)
    # packages that only-there jobs force, proven by small exact solves: the relaxation's
    # bound then counts them (it sees every workload, where CP-SAT's may not), and the
    # heuristic starts from how they place those jobs. Their own share of the limit from
    # when they start (the naive plan before them may take a while on a large quarter)
    budget = params.time_limit * FORCED_SHARE
    until = None if params.deterministic else time.perf_counter() + budget
    forced = forced_packages(problem, until=until) if "forced" in params.techniques else {}
    # the bound (seconds to a minute and more on a large quarter) is priced beside the
    # starts, on the second core where there is one: it needs none of them, and they get
    # the time (the same bound either way, so no answer depends on the machine)
    counted = {k: f.packages for k, f in forced.items()}
    columns = (
        round(EXACT_COLUMNS * params.time_limit),
        round(APPROXIMATE_COLUMNS * params.time_limit),
    )
    beside = len(problem.jobs) + len(problem.replica_jobs) >= BESIDE_WORKLOADS
    priced = Beside(lambda: _bounds(problem, counted, columns), physical_cores() if beside else 1)
    began = time.perf_counter()
    heuristic, heuristic_why = greedy(problem, careful=True, forced=list(forced.values()))
    greedy_took = time.perf_counter() - began
    phase("checking the baselines")
    # the baselines are checked now, inside the time limit; one the checker refuses (a bug,
    # said in its note) is neither priced, nor a hint, nor a plan to fall back on
    notes = {k: v for k, v in (("naive", naive_why), ("heuristic", heuristic_why)) if v}
    checked = [
        c
        for c in (
            checked_solution(problem, naive, notes, "naive"),
            checked_solution(problem, heuristic, notes, "heuristic"),
        )
        if c is not None
    ]
    naive_cost, heuristic_cost = (
        next((c.plan.total_cost for c in checked if c.source == name), None)
        for name in ("naive", "heuristic")
    )
    # the heuristic's plan with each service replanned alone on what the rest leaves: a
    # start, where the checker takes it (it sees what the program cannot: the machines
    # a pool's cards sit on); its refusal is no bug, so no note
    per = "per-service" in params.techniques
    began = time.perf_counter()
    candidate = improved(problem, heuristic) if heuristic and per else None
    per_took = time.perf_counter() - began
    per_service = checked_solution(problem, candidate, {}, "per-service")
    if per_service is not None:
        checked.append(per_service)
    # the forced packages and their jobs moved by whole days, each planned as that start
    # (planner.shifted; so only with it), in a share of the limit (when deterministic, a
    # number of shifts by the limit instead, besides the search's own deterministic
    # time); checked like it, and like it no bug where refused. A shift's first guess:
    # the whole heuristic (its three orders) and the start, more than its one pass
    if per and heuristic and forced and "shift" in params.techniques:
        phase("moving the forced packages")
        share = params.time_limit * SHIFT_SHARE
        until = None if params.deterministic else time.perf_counter() + share
        trials = int(share / SHIFT_SECONDS) if params.deterministic else TRIALS
        guess = greedy_took + per_took
        moved = swept(problem, list(forced.values()), until, trials, guess)
        shifted = checked_solution(problem, moved[0] if moved else None, {}, "shifted")
        if shifted is not None:
            checked.append(shifted)
    # one optional package bought first, on a few days, each planned as the start
    # (planner.optional; so only with it), in a share of the limit and not past BUY_BEFORE
    # of it (deterministic: a number of the heuristic's passes by the limit); checked like it
    last = started + params.time_limit * BUY_BEFORE
    buy = per and heuristic is not None and "buy" in params.techniques
    buy = buy and (params.deterministic or time.perf_counter() < last)
    pools = credited(problem, {k: f.packages for k, f in forced.items()}) if buy else []
    if pools:
        phase("trying an optional package")
        share = params.time_limit * BUY_SHARE
        until = None if params.deterministic else min(time.perf_counter() + share, last)
        passes = int(share / BUY_SECONDS) if params.deterministic else None
        # a pass: about one of the heuristic's orders; planned through: the start besides
        steps = (greedy_took / 3, greedy_took / 3 + per_took)
        # each day also on the best start so far (the per-service plan, where checked)
        start = per_service.solution if per_service is not None else heuristic
        found = tried(problem, list(forced.values()), pools, until, passes, steps, start)
        bought = checked_solution(problem, found[0] if found else None, {}, "bought")
        if bought is not None:
            checked.append(bought)
    phase("pricing the bound")
    relaxation, alone = priced.result()
    floor = relaxation.total
    unbought = Unbought(alone, frozenset(optional_pools(problem, {k: 1 for k in forced})))
    # the cheaper checked baseline hints the solver (the heuristic's on a tie), and is the
    # incumbent the user sees from the first report on
    first = min(checked, key=Checked.rank) if checked else None
    best = first.solution if first else None
    if on_progress is not None and first is not None:
        elapsed = time.perf_counter() - started
        on_progress(first.cost, floor, elapsed, f"the checked {first.source} plan")
    # past EXACT_VARIABLES the solver searches a top-K restriction (its plans are plans, its
    # bound is not a bound; a baseline plan's configs are kept in it, and without one its
    # "infeasible" only means no plan was found); a model too large to build and search
    # within the limits is not built (a baseline stands in, with the relaxation's bound);
    # why, in the plan's notes
    full_size = estimated_variables(problem)
    large = full_size > EXACT_VARIABLES and "top-k" in params.techniques
    restricted = top_k(problem, best, _buildable, relaxation.least) if large else None
    target = restricted.problem if restricted else problem
    target_size = estimated_variables(target) if restricted else full_size
    gate = "size-gate" in params.techniques
    too_large = _too_large(target_size, params, started, best is not None) if gate else ""
    scale = problem.money_scale

    def progress(incumbent: int | None, bound: int, elapsed: float) -> None:
        if on_progress is not None:
            found = None if incumbent is None else Fraction(incumbent, scale)
            # a restriction's own bound bounds only the restriction
            solver_bound = Fraction(0) if restricted else Fraction(bound, scale)
            on_progress(found, max(solver_bound, floor), elapsed)

    workloads = len(problem.jobs) + len(problem.replica_jobs)
    learnt: list[NoGood] = []
    for _ in range(MAX_PLACEMENT_SEARCHES):
        if learnt:  # the search again, without the placements the machines cannot hold
            problem = with_nogoods(problem, learnt)
            if restricted is not None:
                restricted = replace(restricted, problem=with_nogoods(restricted.problem, learnt))
            target = restricted.problem if restricted else problem
            phase(f"searching again without {len(problem.nogoods)} placement(s) that do not fit")
        outcome, searched = _search(
            target,
            restricted,
            best,
            bool(too_large),
            full_size,
            params,
            started,
            workloads,
            reference,
            progress,
            phase,
        )
        settled = _settle(problem, outcome, checked, floor, unbought)
        time_left = params.deterministic or search_seconds(params, started, workloads) > 0
        if not settled.conflicts or outcome.solution is None or not time_left:
            break
        learnt = [
            nogood(problem, outcome.solution, pool, names)
            for pool, names in sorted(settled.conflicts.items())
        ]
    if settled.chosen is None:
        if settled.inconsistency:
            return Result(
                Status.UNKNOWN,
                problem=problem,
                reasons=[settled.inconsistency],
                size=outcome.size,
                inconsistency=settled.inconsistency,
            )
        none = _no_plan(problem, outcome.status, params, outcome.size, started, too_large)
        refused = [f"the {k} baseline: {v}" for k, v in notes.items() if "checker" in v]
        refused += [
            f"{', '.join([n for n, _, _ in cut.jobs] + sorted({n for n, *_ in cut.replicas}))}"
            f" on {cut.pool[0]} {cut.pool[1]}: "
            "their cards fit its units at every hour, but not on its machines without moving "
            "a job between them (the search learnt this placement away)"
            for cut in problem.nogoods
        ]
        return replace(none, reasons=none.reasons + refused)
    status, bound, inconsistency = settled.status, settled.bound, settled.inconsistency
    solution, plan, objective = settled.chosen.solution, settled.chosen.plan, settled.chosen.cost
    if bound is not None and (forced or relaxation.bought):
        notes["bound"] = _bound_note(problem, forced, relaxation)
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
    elif not searched:
        notes["solver"] = (
            f"building the model took {time.perf_counter() - started:,.0f} s of the "
            f"{params.time_limit:g} s limit, leaving no time to search: the plan is the best "
            "baseline (a larger --time-limit lets the solver improve it)"
        )
    plan = plan.model_copy(
        update={
            "status": status.value,
            "naive_cost": naive_cost,
            "heuristic_cost": heuristic_cost,
            "baseline_notes": notes,
            "gap": None
            if bound is None
            else round(float((objective - bound) / objective), 6)
            if objective
            else 0.0,
            "bound": None if bound is None else money(bound, plan.currency),
            "bound_without_packages": None
            if bound is None or alone is None or alone <= bound
            else money(alone, plan.currency),
            "inconsistency": inconsistency or None,
            "forced": [
                ForcedPurchase(
                    offer=key[0],
                    mode=key[1],
                    packages=f.packages,
                    cost=money(problem.pools[key].unit_price * f.packages, plan.currency),
                    workloads=list(f.jobs),
                    exact=f.exact,
                )
                for key, f in sorted(forced.items())
            ],
            "solve_seconds": round(outcome.seconds, 3),
            "solver": SolverInfo(
                workers=params.settings().workers,
                seed=params.seed,
                time_limit=params.time_limit,
                deterministic=params.deterministic,
                ties_settled=outcome.ties_settled and not inconsistency,
                variables=outcome.size.get("variables", 0),
                constraints=outcome.size.get("constraints", 0),
            ),
        }
    )
    if on_progress is not None and not inconsistency:
        final = objective if status is Status.OPTIMAL else bound or Fraction(0)
        on_progress(objective, final, time.perf_counter() - started, "final")
    model_terms = outcome.terms if settled.chosen.source == "model" and not inconsistency else {}
    terms = {t: Fraction(v, scale) for t, v in model_terms.items()}
    return Result(
        status,
        plan,
        problem,
        solution,
        objective,
        bound,
        outcome.seconds,
        terms,
        [],
        outcome.size,
        inconsistency=inconsistency or None,
    )


def _bounds(
    problem: Problem, forced: dict[tuple[str, str], int], columns: tuple[int, int]
) -> tuple[Bound, Fraction | None]:
    """The relaxation's bound, and the plans that buy no optional package bounded alone
    (where the plan found buys none: the gap among them; what is left is whether optional
    packages could pay). `columns`: the most columns of the program by segment solved
    exactly, and approximately (planner.bound)."""
    exact, rough = columns
    relaxation = lower_bound(
        problem, forced, by_segment=True, approximate=rough, exact_columns=exact
    )
    return relaxation, without_packages(problem, forced)


def _search(
    target: Problem,
    restricted: Restricted | None,
    best: Solution | None,
    too_large: bool,
    full_size: int,
    params: SolveParams,
    started: float,
    workloads: int,
    reference: Plan | None,
    progress: Progress,
    phase: Callable[[str], None],
) -> tuple[Outcome, bool]:
    """CP-SAT (and, where it applies, the neighbourhood search) on `target`, hinted with
    `best`; the outcome in the full problem's indices, and whether any time was left to
    search. A model not built (`too_large`) or left no time gives an empty outcome."""
    if not too_large:
        phase("building the CP-SAT model")
    model = None if too_large else CpModel(target, cuts="cuts" in params.techniques)
    if model is not None and best is not None:
        model.hint(restricted.from_full(best) if restricted else best)
    settings = replace(params.settings(), time_limit=search_seconds(params, started, workloads))
    phase("searching")
    if model is not None and settings.time_limit > 0:
        keep = None if reference is None else Reference.of(reference, target.scenario.axis)
        # the neighbourhood search where CP-SAT's bound is not used anyway (a top-K
        # restriction's bounds only the restriction) or seldom beats the relaxation's (a
        # large full model); on a small full model only when asked (LNS_SHARE)
        share = params.lns_share
        if share is None:
            large = model.size()["variables"] >= LNS_VARIABLES
            share = LNS_SHARE if restricted is not None or large else 0.0
        lns = "lns" in params.techniques and best is not None and share > 0
        # under a wall-clock limit, a share too short to set the search up stays CP-SAT's
        lns = lns and (params.deterministic or settings.time_limit * share >= LNS_LEAST)
        main = replace(settings, time_limit=settings.time_limit * (1 - share))
        outcome = model.solve(main if lns else settings, progress, keep)
        if lns and best is not None and outcome.status in ("feasible", "unknown"):
            hinted = restricted.from_full(best) if restricted else best
            outcome = _improve(
                model, outcome, hinted, params, share, started, workloads, progress, phase
            )
        if restricted is not None and outcome.solution is not None:
            # a plan of the full problem; optimal only among the configs kept, bound unknown
            status = "feasible" if outcome.status == "optimal" else outcome.status
            solution = restricted.to_full(outcome.solution)
            outcome = replace(outcome, status=status, solution=solution, bound=None)
        elif restricted is not None and outcome.status == "infeasible":
            # the configs kept hold no plan: that proves nothing of the full problem
            outcome = replace(outcome, status="unknown", bound=None)
    else:  # no model, or building it took the whole limit: the best baseline if any
        counts = model.size() if model else {"variables": full_size}
        outcome = Outcome("unknown", None, None, None, 0.0, counts)
    if outcome.status == "invalid":
        # CP-SAT refuses a model whose integers overflow: prices or counts far beyond a plan
        raise _money_too_large(target)
    return outcome, settings.time_limit > 0


# Searches at most this many times, each time without the placements the checker found the
# machines of a pool cannot hold (planner.placement); after that the plan is the cheapest
# checked one, and the model's rejected plan is named as an inconsistency.
MAX_PLACEMENT_SEARCHES = 8

# Pools of forced packages are solved for at most this share of the time limit, from when
# they start (planner/forced.py: one pool takes well under a second on the quarters
# measured). Counted from the command's start instead, the baselines of a 100-workload
# quarter (20 s) left them no time: its bound fell from 1,352,812 to 698,791.
FORCED_SHARE = 0.1

# Shifts of the forced packages' placement are tried for at most this share of the time
# limit (planner/shifted.py: on q3 each shift, the heuristic's pass and each service
# alone, takes about 2 s; ten and two either side of the best: 24 s)
SHIFT_SHARE = 0.4
# when deterministic, one shift per this many seconds of that share (12 in q3's 60 s)
SHIFT_SECONDS = 2.0

# One optional package bought first is tried for at most this share of the limit
# (planner/optional.py: on the 30-workload generated quarter a heuristic pass takes about
# 1 s, a day planned through about 3 s; on the 300-workload one, with the bound priced
# beside, 90 s gave 557,376.75 and 130 s 556,109.78, while the search waits for the bound
# until about 0.8 of 300 s anyway)
BUY_SHARE = 0.45
# when deterministic, one heuristic pass per this many seconds of that share (as many
# passes as 2 s of a share of 0.3 gave)
BUY_SECONDS = 3.0
# ... and none started past this share of the limit, so the search keeps the rest (q3's
# forced packages moved take it to 0.75 of 60 s, where with both it had none; the
# generated 100-workload quarter's baselines and bound take 0.4-0.5 of 120 s, its
# 300-workload one's 0.55-0.65 of 300 s, and there a package on the start saves more than
# the search finds in the time left)
BUY_BEFORE = 0.8

# The relaxation charged by segment (planner.charges) too large for an exact solve is
# solved approximately where it has at most this many columns per second of the limit:
# PDLP goes through about 35-40k a second on 2 cores, so about a fifth of the limit.
# generate.py's quarters: 100 workloads (557k columns) at 120 s, bound 168,318 -> 173,994
# for 18 s; 300 (1.83M) at 300 s, 449,684 -> 464,743 for 60 s. generate_mix.py's 30 (557k)
# at 60 s stays out: its forced machine-months carry its bound, and the program added
# nothing there in 12 s.
APPROXIMATE_COLUMNS = 7_500
# and solved exactly (GLOP, up to planner.bound's SEGMENT_COLUMNS) where it has at most this
# many a second: q3's 73k columns take 11 s beyond the flat bound's 5 s (for +0.13%), which
# at a 10 s limit kept the command waiting until 20 s and 24 s in all. Priced from 30 s of
# limit on for q3 and from 48 s for generate.py's 30 workloads (120k); past 200k columns
# the limit was already what decided (above)
EXACT_COLUMNS = 2_500

# the bound is priced beside the starts from this many workloads on: below it, it takes
# well under a second, and forking a process of a few hundred MB and waiting for its
# answer about 26 ms (the test suite's thousand small solves would pay that each)
BESIDE_WORKLOADS = 10

# The share of the search time a large-neighbourhood search gets after CP-SAT's own search
# (planner/cpsat/lns.py), when that search ends without a proof: on a top-K restriction
# (whose CP-SAT bound is not shown) and on a full model of at least LNS_VARIABLES
# variables. Measured at 60 s on 2 shared cores, 4 workers (docs/planning.md,
# "Neighbourhoods of the search"): on q3 (118k variables) CP-SAT's own search moved the
# heuristic's 420,049 to 419,220 and never lifted the bound above the relaxation's, while
# the LNS with 0.7 / 0.8 / 0.9 of the time reached 413,728-414,132 / 413,609-413,649 /
# 413,575-413,612 (two runs each); on the generated scale-30-s1 (149k) 38,339 without it,
# 38,311 at 0.7, 38,297 at 0.9. A small full model (the shipped examples but q3, the tests'
# tiny ones) is left to CP-SAT, which proves most of them.
LNS_SHARE = 0.8
LNS_VARIABLES = 50_000


def _improve(
    model: CpModel,
    outcome: Outcome,
    hinted: Solution,
    params: SolveParams,
    share: float,
    started: float,
    workloads: int,
    progress: Callable[[int | None, int, float], None],
    phase: Callable[[str], None] | None = None,
) -> Outcome:
    """CP-SAT's outcome improved by the neighbourhood search with what is left of the limit,
    from the cheaper of its plan and the hinted baseline."""
    problem = model.problem
    start = hinted
    cost = round(hinted.cost(problem) * problem.money_scale)
    if outcome.solution is not None and outcome.objective is not None and outcome.objective < cost:
        start, cost = outcome.solution, outcome.objective
    settings = params.settings()
    if params.deterministic:
        left = params.time_limit * share
    else:
        left = search_seconds(params, started, workloads)
        if left < LNS_LEAST:  # its set-up alone would take the command past its limit
            return outcome
    bound = outcome.bound or 0
    began = time.perf_counter()
    if phase is not None:
        phase("searching a neighbourhood at a time")

    def improved(objective: int) -> None:
        progress(objective, bound, outcome.seconds + time.perf_counter() - began)

    solution, objective, terms, _ = improve(
        model, start, cost, replace(settings, time_limit=left), improved, params.executor
    )
    seconds = outcome.seconds + time.perf_counter() - began
    if outcome.objective is not None and objective >= outcome.objective:
        return replace(outcome, seconds=seconds)
    if not terms:  # nothing better than the hinted baseline: CP-SAT's plan, if any, stands
        return replace(outcome, seconds=seconds)
    return replace(
        outcome,
        status="feasible",
        solution=solution,
        objective=objective,
        terms=terms,
        seconds=seconds,
        ties_settled=False,
    )


@dataclass(frozen=True)
class Checked:
    """A plan the independent checker accepted, with its exact cost and where it came from."""

    source: str  # model | heuristic | per-service | shifted | bought | naive
    solution: Solution
    plan: Plan
    cost: Fraction

    def rank(self) -> tuple[Fraction, int]:
        """Cheapest first; on a tie the model's plan, then the heuristic's, then the
        heuristic's with each service alone, then that with the forced packages moved,
        then that with an optional package bought, then the naive."""
        order = ("model", "heuristic", "per-service", "shifted", "bought", "naive")
        return self.cost, order.index(self.source)


@dataclass(frozen=True)
class Settled:
    """What `_settle` decided: the plan to show (None: no plan at all), its status and
    bound, and the model inconsistency found ("" if none)."""

    status: Status
    chosen: Checked | None
    bound: Fraction | None
    inconsistency: str = ""
    # work the model's plan fits on a pool's cards but not on its machines, per pool
    conflicts: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Unbought:
    """The bound over plans that buy no optional package (planner.bound.without_packages;
    None: none) and those pools."""

    bound: Fraction | None
    optional: frozenset[tuple[str, str]]

    def bounds(self, plan: Plan) -> bool:
        """Whether `plan` is one of the plans the bound is over: it buys no optional package."""
        return self.bound is not None and not any(
            (r.offer, r.mode) in self.optional for r in plan.rentals
        )


def _settle(
    problem: Problem,
    outcome: Outcome,
    checked: list[Checked],
    floor: Fraction,
    unbought: Unbought = Unbought(None, frozenset()),
) -> Settled:
    """The one place where the model's answer meets the checked plans.

    The model is *inconsistent* with the scenario where the checker rejects its plan, its
    objective is below its plan's exact cost, it proves an optimum or a bound above a
    checked plan's cost (the bound without optional packages: above one that buys none),
    or it proves the scenario infeasible while a checked plan exists.
    Then the plan is the cheapest checked one, `feasible`, with no bound (an inconsistent
    model bounds nothing), and the inconsistency is named in one line a user can report."""
    scale = problem.money_scale
    faults: list[str] = []
    best = min(checked, key=Checked.rank) if checked else None
    if outcome.status == "infeasible" and best is not None:
        faults.append(
            f"CP-SAT proved the scenario infeasible, but the {best.source} plan "
            f"({_amount(best.cost, problem)}) passes the checker"
        )
    mine: Checked | None = None
    conflicts: Conflicts = {}
    if outcome.solution is not None:
        solution = outcome.solution
        try:
            exact = solution.cost(problem)
            plan = to_plan(problem, solution, outcome.status)
            plan = plan.model_copy(update={"cost_breakdown": breakdown(problem, solution, plan)})
        except Exception as error:  # a decoding bug: the checked baselines still stand
            faults.append(f"decoding the model's solution failed ({type(error).__name__}: {error})")
        else:
            if outcome.objective is not None and exact > Fraction(outcome.objective, scale):
                # below a proven optimum the solver may leave slack, never a lower objective
                faults.append(
                    "the model's objective "
                    f"{_amount(Fraction(outcome.objective, scale), problem)} is below its "
                    f"plan's exact cost {_amount(exact, problem)}"
                )
            verdict, plan, conflicts = _verdict(problem.scenario, plan, exact)
            if verdict:
                faults.append(f"the checker rejects the model's plan: {verdict}")
            else:
                mine = Checked("model", solution, plan, exact)
    optimal = outcome.status == "optimal" and mine is not None
    if optimal and best is not None and mine is not None and mine.cost > best.cost:
        faults.append(
            f"the model proved optimal a plan of {_amount(mine.cost, problem)}, dearer than "
            f"the checked {best.source} plan ({_amount(best.cost, problem)})"
        )
    accepted = checked + ([mine] if mine is not None else [])
    cheapest = min((c.cost for c in accepted), default=None)
    solver_bound = None if outcome.bound is None else Fraction(outcome.bound, scale)
    for name, value in (("CP-SAT's", solver_bound), ("the relaxation's", floor)):
        if value is not None and cheapest is not None and value > cheapest:
            faults.append(
                f"{name} bound {_amount(value, problem)} exceeds the cost of a checked plan "
                f"({_amount(cheapest, problem)})"
            )
    none = min((c for c in accepted if unbought.bounds(c.plan)), key=Checked.rank, default=None)
    if none is not None and unbought.bound is not None and unbought.bound > none.cost:
        faults.append(
            f"the bound without optional packages {_amount(unbought.bound, problem)} exceeds "
            f"the cost of the checked {none.source} plan, which buys none "
            f"({_amount(none.cost, problem)})"
        )
    if faults:
        chosen = min(accepted, key=Checked.rank) if accepted else None
        shown = (
            f"The plan shown is the cheapest checked plan (the {chosen.source}'s), not proven "
            "optimal"
            if chosen is not None
            else "No plan passes the checker"
        )
        line = (
            f"model inconsistency: {'; '.join(faults)}. {shown}; please report this line "
            "with the scenario."
        )
        if len(faults) == 1 and "[machines]" in faults[0]:  # counting cards is not placing
            then = (
                "the search learns such placements away and tries again (at most "
                f"{MAX_PLACEMENT_SEARCHES} times, within the time limit)"
                if conflicts
                else "no machine is held for it then"
            )
            line = f"{faults[0]}; {then}. {shown}."
        status = Status.FEASIBLE if chosen else Status.UNKNOWN
        return Settled(status, chosen, None, line, conflicts)
    bound = max(solver_bound or Fraction(0), floor)
    if mine is None:  # the solver found nothing (in time, or past the size gate)
        if best is None:
            return Settled(Status.UNKNOWN, None, None)
        return Settled(_met(Status.FEASIBLE, best, floor), best, floor)
    if not optimal and best is not None and best.cost < mine.cost:
        # never show a plan dearer than a baseline: CP-SAT may end the limit on a worse one
        return Settled(_met(Status.FEASIBLE, best, bound), best, bound)
    return Settled(_met(Status(outcome.status), mine, bound), mine, bound)


def _met(status: Status, chosen: Checked, bound: Fraction) -> Status:
    """A checked plan whose exact cost meets the bound is proven cheapest, whichever search
    found it (the neighbourhood search's plans, or a baseline, meeting CP-SAT's bound or
    the relaxation's)."""
    return Status.OPTIMAL if chosen.cost <= bound else status


def _bound_note(problem: Problem, forced: dict[tuple[str, str], Forced], relaxation: Bound) -> str:
    """What the bound knows of packages: those that only-there jobs force; when it priced
    one pool by time, where its forced package's cards are free to others; the pools
    charged by segment; and the pools whose purchases it decided day by day."""
    parts = []
    for key, f in sorted(forced.items()):
        days = problem.pools[key].days
        names = ", ".join(f.jobs[:3]) + (f" and {len(f.jobs) - 3} more" if len(f.jobs) > 3 else "")
        proof = "" if f.exact else " at least"
        parts.append(
            f"{key[0]} {key[1]}:{proof} {f.packages} unit-package(s) of {days} day(s), "
            f"forced by {names} (they run nowhere else)"
        )
    if relaxation.window is not None:
        (offer, mode), (start, _) = relaxation.window
        days = problem.pools[(offer, mode)].days
        parts.append(
            f"other workloads may use the {offer} {mode} cards at a low charge only while "
            f"one package is held ({days} day(s); the bound places it where that lowers the "
            f"bound most, here "
            f"from {problem.axis.local(start):%Y-%m-%d}) and pay the pool's full rate per "
            "card-hour outside it"
        )
    if relaxation.segments is not None:
        held = any(problem.pools[key].committed for key in relaxation.segments.by_pool)
        parts.append(
            "the package pools no job forces are charged per card-hour by day segment (dearer "
            "in the hours workloads want them), no package's span above its price"
            + (", and committed cards paid back only on the days they are held" if held else "")
            + (
                ", and serving pays the setups of the replicas it starts inside a run of demand"
                if relaxation.rises
                else ""
            )
        )
    if relaxation.bought:
        pools = ", ".join(f"{offer} {mode}" for offer, mode in relaxation.bought)
        parts.append(
            f"the purchases of {pools} are decided day by day: each package paid in full, "
            "its cards usable only on the days one is held (there in any number"
            + (
                "; by train jobs on any day of their windows, at the charge the packages are "
                "paid back)"
                if relaxation.anywhere
                else ")"
            )
            + (
                ", and serving pays the setups of the replicas it starts inside each day"
                if relaxation.daily_setups
                else ""
            )
        )
    return (
        "the bound knows these packages: "
        + "; ".join(parts)
        + "; the rest of it prices every other workload alone at its cheapest (stock shared "
        "between workloads, setups inside a run of demand and billing round-ups ignored), so "
        "it is low where workloads compete"
    )


def _verdict(scenario: Scenario, plan: Plan, objective: Fraction) -> tuple[str, Plan, Conflicts]:
    """The checker's first objection to `plan` priced at `objective`, or "" if none (every
    rule holds and its total is `objective`); the plan with what the checker could not
    decide (never an objection); and the work it found fits a pool's cards but not its
    machines."""
    check = check_plan(scenario, plan)
    plan = plan.model_copy(update={"unverified": check.undecided})
    if not check.ok:
        first = check.violations[0]
        more = len(check.violations) - 1
        return f"{first}" + (f" (and {more} more)" if more else ""), plan, check.conflicts
    if check.total != objective:
        return (
            (
                f"the checker's total {float(check.total):,.2f} differs from the model's "
                f"{float(objective):,.2f}"
            ),
            plan,
            {},
        )
    return "", plan, {}


def _amount(value: Fraction, problem: Problem) -> str:
    return f"{problem.scenario.spec.currency} {float(value):,.2f}"


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


def _buildable(problem: Problem) -> bool:
    """Whether `problem`'s model passes the size gate (how many configs top-K keeps)."""
    return estimated_variables(problem) <= MAX_VARIABLES


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
        spent = time.perf_counter() - started
        left = params.time_limit - spent
        build = estimate * BUILD_SECONDS_PER_VARIABLE
        if left <= 0:
            return (
                f"the steps before the search (loading, the baselines, the bound) took "
                f"{spent:,.1f} s of the {params.time_limit:g} s time limit, so no CP-SAT "
                "model was built; the plan is the best checked baseline, its gap against "
                f"the relaxation's bound (a --time-limit of "
                f"{math.ceil(build * 4 + spent)} s or more lets the solver improve it)"
            )
        if build > left / 2:
            return (
                f"building the CP-SAT model (about {estimate:,} variables, ~{build:,.0f} s) "
                f"would take more than half of the {left:,.0f} s left of the time limit; the "
                "plan is the best checked baseline, its gap against the relaxation's bound "
                f"(a --time-limit of {math.ceil(build * 4 + (time.perf_counter() - started))} s "
                "or more lets the solver improve it)"
            )
    return ""


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


def checked_solution(
    problem: Problem, solution: Solution | None, notes: dict[str, str], name: str
) -> Checked | None:
    """A baseline's plan, if it found one and the checker accepts it at its exact cost. A
    baseline the checker refuses is a bug in the baseline: said in its note, never priced,
    never a hint, never a plan to fall back on."""
    if solution is None:
        return None
    try:
        cost = solution.cost(problem)
        plan = to_plan(problem, solution, "feasible")
        plan = plan.model_copy(update={"cost_breakdown": breakdown(problem, solution, plan)})
    except ArithmeticError:  # decimal overflow: the same money the solver cannot hold
        raise _money_too_large(problem) from None
    verdict, plan, conflicts = _verdict(problem.scenario, plan, cost)
    if conflicts and verdict.startswith("[machines]"):  # a baseline counts cards only
        notes[name] = f"its plan fits the cards but not the machines: {verdict}"
        return None
    if verdict:
        notes[name] = f"its plan failed the independent checker (a bug): {verdict}"
        return None
    return Checked(name, solution, plan, cost)
