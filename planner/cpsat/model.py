"""Wire variables, constraints and objective; set parameters; solve; decode a Solution."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ortools.sat.python import cp_model, cp_model_helper

from planner.configs import ReplicaConfig
from planner.cpsat.constraints import Constraints
from planner.cpsat.cuts import cover_cuts, package_cuts
from planner.cpsat.objective import cost_terms, tie_levels
from planner.cpsat.steps import hint as hint_steps
from planner.cpsat.variables import make_variables, pool_cap
from planner.domain.costs import CostTerm
from planner.problem import Problem
from planner.reference import Place, Reference
from planner.solution import Solution


class Values(Protocol):
    """What decoding reads: a solver after a solve, or a worker's values (cpsat.lns)."""

    def value(self, expression: Any) -> int: ...

    def boolean_value(self, literal: Any) -> bool: ...


STATUS = {
    cp_model.OPTIMAL: "optimal",
    cp_model.FEASIBLE: "feasible",
    cp_model.INFEASIBLE: "infeasible",
    cp_model.MODEL_INVALID: "invalid",
    cp_model.UNKNOWN: "unknown",
}
# Full-problem subsolvers, in the order CP-SAT takes them as workers allow. `max_lp` (the
# full LP relaxation, cuts included) first: with CP-SAT's default four (default_lp, core,
# no_lp) the LP worker of a 140k-variable quarter sat on a bound of one service's cost;
# max_lp in its place, 50 s on 2 cores, lifted a generated 10-workload quarter's bound from
# 4,532 to 19,225 (plan 19,946) and q3's from 386,705 to 391,068 (benchmarks/RESULTS.md).
PORTFOLIO = (
    "max_lp",
    "core",
    "no_lp",
    "quick_restart",
    "default_lp",
    "reduced_costs",
    "pseudo_costs",
    "lb_tree_search",
    "probing",
)
# incumbent (None when only the bound moved), bound (scaled money), elapsed s
Progress = Callable[[int | None, int, float], None]


@dataclass(frozen=True)
class SolverSettings:
    time_limit: float = 60.0  # wall seconds; deterministic units when deterministic
    workers: int = 1
    seed: int = 0
    deterministic: bool = False
    portfolio: bool = True  # PORTFOLIO's subsolvers; False: CP-SAT's default ones


@dataclass(frozen=True)
class Outcome:
    status: str
    solution: Solution | None
    objective: int | None  # scaled money
    bound: int | None
    seconds: float
    size: dict[str, int]
    terms: dict[CostTerm, int] = field(default_factory=dict)  # scaled money per paid term
    ties_settled: bool = False  # every tie level proven: the one plan of the tie order


class _Progress(cp_model.CpSolverSolutionCallback):
    def __init__(self, report: Progress) -> None:
        super().__init__()
        self.report = report

    def on_solution_callback(self) -> None:
        self.report(round(self.objective_value), round(self.best_objective_bound), self.wall_time)


class CpModel:
    """The CP-SAT program of a problem."""

    def __init__(self, problem: Problem, require_all: bool = True, cuts: bool = True) -> None:
        self.problem = problem
        self.model = cp_model.CpModel()
        self.v = make_variables(self.model, problem)
        Constraints(self.model, problem, self.v, require_all).add_constraints()
        self.cuts = (
            cover_cuts(self.model, problem, self.v) + package_cuts(self.model, problem, self.v)
            if cuts
            else 0
        )
        self.terms = cost_terms(problem, self.v)
        self.cost = cp_model.LinearExpr.sum(list(self.terms.values()))

    def size(self) -> dict[str, int]:
        proto = self.model.proto
        return {"variables": len(proto.variables), "constraints": len(proto.constraints)}

    def hint(self, solution: Solution) -> None:
        """Start the search from a known plan (each variable hinted once)."""
        self.model.clear_hints()  # type: ignore[no-untyped-call]
        for job in self.problem.jobs:
            self.model.add_hint(self.v.present[job.index], 1)
            for k, x in enumerate(self.v.choose[job.index]):
                self.model.add_hint(x, int(k == solution.configs[job.index]))
            self.model.add_hint(self.v.start[job.index], solution.starts[job.index])
        for key, bought in self.v.packages.items():
            chosen = solution.packages.get(key, {})
            for day, n in bought.items():
                self.model.add_hint(n, chosen.get(day, 0))
        for (j, k, s), replicas in self.v.replicas.items():
            count = solution.replicas.get((j, k, s), 0)
            self.model.add_hint(replicas, count)
            for starts in (self.v.starts, self.v.held_starts):  # held: under a min hold
                if (j, k, s) in starts:
                    rise = count - solution.replicas.get((j, k, s - 1), 0)
                    self.model.add_hint(starts[(j, k, s)], max(0, rise))
        for short in self.v.short:  # rentals ended younger than a window, oldest first
            j, k = short.job, short.config
            rises = sum(
                max(
                    0, solution.replicas.get((j, k, u), 0) - solution.replicas.get((j, k, u - 1), 0)
                )
                for u in short.recent
            )
            held = solution.replicas.get((j, k, short.segment), 0)
            self.model.add_hint(short.count, max(0, rises - held))
        hint_steps(self.model, self.problem, self.v, solution)
        segment_index = {a: s for s, (a, _) in enumerate(self.problem.segments)}
        by_segment: dict[int, list[tuple[int, int, ReplicaConfig]]] = {}
        for j, k, s in solution.replicas:  # grouped once: a scan per usage took seconds
            by_segment.setdefault(s, []).append((j, k, self.problem.replica_jobs[j].configs[k]))
        for (key, held, hour), usage in self.v.usage.items():
            s = segment_index[hour]
            configs = by_segment.get(s, [])
            self.model.add_hint(
                usage,
                sum(
                    solution.replicas[(j, k, s)]
                    * (self.problem.held_cards(c.offer, c.cards) if held else c.units)
                    for j, k, c in configs
                    if (c.offer, c.mode) == key and c.held == held
                ),
            )
        caps = {key: pool_cap(self.problem, key) for key in self.problem.pools}
        for (key, hour), free in self.v.free.items():  # a complete hint is followed exactly
            pool = self.problem.pools[key]
            if pool.days:  # committed packages are among those bought
                day = self.problem.axis.day_of(hour)
                chosen = solution.packages.get(key, {})
                units = sum(chosen.get(d, 0) for d in range(day - pool.days + 1, day + 1))
            else:
                units = sum(c.units for c in pool.committed if c.start <= hour < c.end)
            self.model.add_hint(free, caps[key] - units)
        # the slices of a cumulative hold sums of what is hinted above: a complete hint
        hinted = dict(
            zip(
                self.model.proto.solution_hint.vars,
                self.model.proto.solution_hint.values,
                strict=True,
            )
        )
        for var, total in self.v.sums:
            flat = cp_model_helper.FlatIntExpr(total)
            value = flat.offset + sum(
                c * hinted[x.index] for x, c in zip(flat.vars, flat.coeffs, strict=True)
            )
            self.model.add_hint(var, value)

    def solve(
        self,
        settings: SolverSettings,
        progress: Progress | None = None,
        reference: Reference | None = None,
    ) -> Outcome:
        """Minimise money; at a proven optimum, break ties by the documented order with what
        is left of the same time limit (first, when given, staying near `reference`)."""
        started = time.perf_counter()
        self.model.minimize(self.cost)
        solver = self._solver(settings, settings.time_limit)
        callback = _Progress(progress) if progress else None
        if progress is not None:
            solver.best_bound_callback = lambda bound: progress(
                None, round(bound), time.perf_counter() - started
            )
        status = solver.solve(self.model, callback)
        name = STATUS[status]
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return Outcome(name, None, None, None, time.perf_counter() - started, self.size())
        objective = round(solver.objective_value)  # a float: 1.9999999999999996 means 2
        bound = round(solver.best_objective_bound)
        solution, terms = self._decode(solver)
        settled = False
        if status == cp_model.OPTIMAL:
            used = solver.deterministic_time if settings.deterministic else solver.wall_time
            left = replace(settings, time_limit=settings.time_limit - used)
            solution, terms, settled = self._break_ties(left, objective, solution, terms, reference)
        seconds = time.perf_counter() - started
        return Outcome(name, solution, objective, bound, seconds, self.size(), terms, settled)

    def least_cost(self, settings: SolverSettings) -> tuple[str, int, Solution | None]:
        """Minimise money and return (status, proven lower bound at the money scale, the
        best solution found): no tie is broken."""
        self.model.minimize(self.cost)
        solver = self._solver(settings, settings.time_limit)
        status = solver.solve(self.model)
        if status == cp_model.OPTIMAL:
            return "optimal", round(solver.objective_value), self._decode(solver)[0]
        if status == cp_model.FEASIBLE:
            bound = math.ceil(solver.best_objective_bound - 1e-6)
            return "feasible", bound, self._decode(solver)[0]
        return STATUS[status], 0, None

    def explain(
        self, settings: SolverSettings, jobs: Collection[int] | None = None
    ) -> tuple[str, list[str]]:
        """Whether train jobs `jobs` (default: all) can all be present, the others free to be
        left out (build with require_all=False): the solver's status, and when infeasible
        the names of a core of them that cannot all be planned together (an infeasible core
        over their presence literals; serve and reserve workloads are always present)."""
        chosen = range(len(self.problem.jobs)) if jobs is None else jobs
        self.model.clear_assumptions()
        self.model.add_assumptions([self.v.present[i] for i in chosen])
        solver = self._solver(replace(settings, workers=1), settings.time_limit)
        status = solver.solve(self.model)
        if status != cp_model.INFEASIBLE:
            return STATUS[status], []
        core = set(solver.sufficient_assumptions_for_infeasibility())
        names = [j.name for j in self.problem.jobs if self.v.present[j.index].index in core]
        return "infeasible", names

    def _break_ties(
        self,
        settings: SolverSettings,
        objective: int,
        best: Solution,
        terms: dict[CostTerm, int],
        reference: Reference | None = None,
    ) -> tuple[Solution, dict[CostTerm, int], bool]:
        """Among plans of the optimal cost, the least by the tie order (docs/rules.md, rule 12;
        `reference`'s placements first when given), one level at a time within
        `settings.time_limit` in all; True if every level was proven (the plan is then the
        one minimiser, whatever the search before it found)."""
        self.model.add(self.cost == objective)
        budget = settings.time_limit
        levels = tie_levels(self.problem, self.v)
        if reference is not None:
            levels.insert(0, ("stay", self._moves(reference)))
        for _, level in levels:
            if budget <= 0.01:
                return best, terms, False
            self.model.minimize(level)
            self.hint(best)
            solver = self._solver(settings, budget)
            status = solver.solve(self.model)
            budget -= solver.deterministic_time if settings.deterministic else solver.wall_time
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                return best, terms, False
            best, terms = self._decode(solver)
            if status != cp_model.OPTIMAL:
                return best, terms, False
            self.model.add(level == round(solver.objective_value))
        return best, terms, True

    def _moves(self, reference: Reference) -> cp_model.LinearExpr:
        """How far a plan is from `reference` (planner.reference): train jobs off their
        place or start, plus replicas on a place their workload did not use at that hour."""
        moves: list[cp_model.LinearExprT] = []
        for job in self.problem.jobs:
            if job.name not in reference.train:
                continue
            place, start = reference.train[job.name]
            same = [
                x
                for x, c in zip(self.v.choose[job.index], job.configs, strict=True)
                if (c.card, c.cards, c.offer, c.mode) == place
            ]
            kept = self.model.new_bool_var(f"kept_{job.index}")
            self.model.add(sum(same) >= 1).only_enforce_if(kept)
            self.model.add(self.v.start[job.index] == start).only_enforce_if(kept)
            moves.append(1 - kept)
        places: dict[tuple[str, int], set[Place]] = {}
        for (j, k, s), replicas in self.v.replicas.items():
            name = self.problem.replica_jobs[j].name
            hour = self.problem.segments[s][0]
            if (name, hour) not in places:
                places[(name, hour)] = reference.replica_places(name, hour)
            c = self.problem.replica_jobs[j].configs[k]
            if (c.card, c.cards, c.offer, c.mode) not in places[(name, hour)]:
                moves.append(replicas)
        return cp_model.LinearExpr.sum(moves)

    def _solver(self, settings: SolverSettings, limit: float) -> cp_model.CpSolver:
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.num_workers = settings.workers
        params.random_seed = settings.seed
        # With few workers CP-SAT runs one full-problem LP search, which can sit on a bound
        # of 0 (seen on serving instances); interleaving all subsolvers proves them at once.
        params.interleave_search = settings.workers < 4
        if settings.portfolio and not params.interleave_search:
            params.subsolvers.extend(PORTFOLIO)
        if settings.deterministic:
            params.max_deterministic_time = limit
        else:
            params.max_time_in_seconds = limit
        return solver

    def _decode(self, solver: Values) -> tuple[Solution, dict[CostTerm, int]]:
        """The solution the solver holds, and the value of each paid term there."""
        configs = tuple(
            next(k for k, x in enumerate(choose) if solver.boolean_value(x))
            for choose in self.v.choose
        )
        starts = tuple(int(solver.value(s)) for s in self.v.start)
        packages = {
            key: {d: int(solver.value(n)) for d, n in bought.items() if solver.value(n)}
            for key, bought in self.v.packages.items()
        }
        replicas = {key: int(solver.value(r)) for key, r in self.v.replicas.items()}
        solution = Solution(
            configs,
            starts,
            {k: b for k, b in packages.items() if b},
            {key: n for key, n in replicas.items() if n},
        )
        return solution, {t: int(solver.value(expr)) for t, expr in self.terms.items()}
