"""Large-neighbourhood search of our own, anytime, from a plan: free one neighbourhood's
decisions, fix every other decision at the incumbent, re-optimise with CP-SAT, keep strict
improvements.

Decisions are what a plan chooses: each train job's config and start, each replica job's
replicas (and their starts) per segment, and every pool's package purchases. The
purchases are always free (a neighbourhood's change may need fewer or more packages); the
rest of the model (stock, pool capacity, cumulative slices, costs) follows by propagation.
Neighbourhoods:

- `job`: one train job;
- `service`: one serve or reserve workload over the whole horizon;
- `pool`: every workload with a config on one package pool (those sharing its cards);
- `window`: the train jobs whose windows meet a random week, with every replica of the
  segments in that week.

The search stops when its budget is spent or when every neighbourhood is proven to hold
nothing better than the incumbent (a local optimum over them all). With an executor of
several jobs (local processes or Ray actors, `planner.parallel`) it runs in rounds: each
round draws that many neighbourhoods of the incumbent and solves them at once, each with
the solver's threads, and keeps the best improvement (the first drawn among
equals); every worker parses the model once. Under a fixed seed and budget the rounds give
the same plan wherever they run. Each neighbourhood
solve is a copy of the full model with fixed domains, so every
incumbent is a plan of the full problem; the caller checks the final one as always. Which
neighbourhoods found improvements is counted (`Stats`) for the benchmarks.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model, cp_model_helper

from planner.cpsat.model import PORTFOLIO, CpModel, SolverSettings
from planner.domain.costs import CostTerm
from planner.parallel import Executor, Kind
from planner.solution import Solution

WEEK = 168
# Deterministic time (or seconds) of one neighbourhood solve, and its share of what is left.
STEP = 2.0
# The least a neighbourhood solve is charged, so that a budget of solves that take no time
# (tiny models, decided in presolve) still runs out.
MIN_STEP = 0.01


@dataclass(frozen=True)
class Neighbourhood:
    kind: str  # job | service | pool | window
    name: str
    free: frozenset[int]  # variable indices of the decisions it frees


@dataclass
class Stats:
    tried: Counter[str] = field(default_factory=Counter)
    improved: Counter[str] = field(default_factory=Counter)
    saved: Counter[str] = field(default_factory=Counter)  # scaled money, per kind

    def line(self, scale: int) -> str:
        kinds = sorted(self.tried)
        return "; ".join(
            f"{k}: {self.improved[k]} of {self.tried[k]} improved, "
            f"{self.saved[k] / scale:,.2f} saved"
            for k in kinds
        )


def neighbourhoods(model: CpModel) -> list[Neighbourhood]:
    """Every neighbourhood of the model, in a fixed order (the search draws from them)."""
    problem, v = model.problem, model.v
    job_vars = {
        j.index: {v.start[j.index].index, *(x.index for x in v.choose[j.index])}
        for j in problem.jobs
    }
    replica_vars: dict[int, set[int]] = {}
    by_segment: dict[int, set[int]] = {}
    for table in (v.replicas, v.starts, v.held_starts):
        for (j, _, s), x in table.items():
            replica_vars.setdefault(j, set()).add(x.index)
            by_segment.setdefault(s, set()).add(x.index)
    out = [Neighbourhood("job", j.name, frozenset(job_vars[j.index])) for j in problem.jobs]
    out += [
        Neighbourhood("service", r.name, frozenset(replica_vars.get(j, ())))
        for j, r in enumerate(problem.replica_jobs)
        if replica_vars.get(j)
    ]
    for key in sorted(problem.pools):
        free: set[int] = set()
        for job in problem.jobs:
            if any(c.pool == key for c in job.configs):
                free |= job_vars[job.index]
        for r, replica_job in enumerate(problem.replica_jobs):
            if any((c.offer, c.mode) == key for c in replica_job.configs):
                free |= replica_vars.get(r, set())
        if free:
            out.append(Neighbourhood("pool", f"{key[0]} {key[1]}", frozenset(free)))
    for week in range(0, problem.hours, WEEK):
        free = set()
        for job in problem.jobs:
            if job.earliest < week + WEEK and job.deadline > week:
                free |= job_vars[job.index]
        for s, (a, b) in enumerate(problem.segments):
            if a < week + WEEK and b > week:
                free |= by_segment.get(s, set())
        if free:
            out.append(Neighbourhood("window", f"hours {week}-{week + WEEK}", frozenset(free)))
    return out


def decisions(model: CpModel) -> set[int]:
    """The variable indices of every decision but the package purchases."""
    v = model.v
    out = {x.index for x in v.start}
    out |= {x.index for choose in v.choose for x in choose}
    for table in (v.replicas, v.starts, v.held_starts):
        out |= {x.index for x in table.values()}
    return out


def _begin(
    model: CpModel, settings: SolverSettings
) -> tuple[random.Random, list[Neighbourhood], set[int], Stats]:
    """What a search starts from: its seeded draws, the neighbourhoods, the decisions a
    neighbourhood may pin, empty counts; and the model minimising money."""
    model.model.minimize(model.cost)
    return random.Random(settings.seed), neighbourhoods(model), decisions(model), Stats()


def improve(
    model: CpModel,
    incumbent: Solution,
    objective: int,
    settings: SolverSettings,
    on_improve: Callable[[int], None] | None = None,
    executor: Executor | None = None,
) -> tuple[Solution, int, dict[CostTerm, int], Stats]:
    """The best plan found within `settings.time_limit` (deterministic units where
    `settings.deterministic`, else seconds), starting from `incumbent` of cost `objective`
    (money scale); draws neighbourhoods with `settings.seed`. With an executor of more than
    one job (or Ray), neighbourhoods are solved in rounds of that many (`_rounds`)."""
    if executor is not None and (executor.kind is Kind.ray or executor.jobs > 1):
        return _rounds(model, incumbent, objective, settings, on_improve, executor)
    rng, pool, fixed, stats = _begin(model, settings)
    terms: dict[CostTerm, int] = {}
    left = settings.time_limit
    started = time.perf_counter()
    settled: set[Neighbourhood] = set()  # proven to hold nothing better than the incumbent
    hinted: Solution | None = None
    hint: dict[int, int] = {}
    proto = model.model.proto
    while left > 0.05 and len(settled) < len(pool):
        hood = rng.choice([h for h in pool if h not in settled])
        if hinted is not incumbent:  # the model's hint follows the incumbent
            model.hint(incumbent)
            proto = model.model.proto
            hint = dict(zip(proto.solution_hint.vars, proto.solution_hint.values, strict=True))
            hinted = incumbent
        sub = cp_model.CpModel()
        sub.proto.copy_from(proto)
        for index in fixed - hood.free:
            if index in hint:
                domain = sub.proto.variables[index].domain
                domain.clear()
                domain.extend([hint[index], hint[index]])
        if not settings.deterministic:  # copying and hinting took wall time too
            left = min(left, settings.time_limit - (time.perf_counter() - started))
            if left <= 0.05:
                break
        step = min(STEP, left)
        solver = model._solver(settings, step)
        status = solver.solve(sub)
        used = solver.deterministic_time if settings.deterministic else solver.wall_time
        left -= max(used, MIN_STEP)
        if not settings.deterministic:
            left = min(left, settings.time_limit - (time.perf_counter() - started))
        stats.tried[hood.kind] += 1
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            continue
        found = round(solver.objective_value)
        if found >= objective and status == cp_model.OPTIMAL:
            settled.add(hood)  # a local optimum for this neighbourhood
        if found < objective:
            settled.clear()
            stats.improved[hood.kind] += 1
            stats.saved[hood.kind] += objective - found
            incumbent, terms = model._decode(solver)
            objective = found
            if on_improve is not None:
                on_improve(objective)
    return incumbent, objective, terms, stats


# --- rounds of neighbourhoods solved at once --------------------------------------------------


@dataclass(frozen=True)
class Draw:
    """One neighbourhood solve as a worker receives it: the incumbent's values, the decision
    variables the neighbourhood frees, the budget and seed."""

    hint: tuple[tuple[int, int], ...]  # (variable index, value) of the incumbent
    free: tuple[int, ...]
    step: float
    seed: int
    deterministic: bool
    threads: int = 1
    portfolio: bool = False


@dataclass(frozen=True)
class Found:
    """A worker's answer: CP-SAT's status, the objective and every variable's value where a
    plan was found, and the budget used."""

    status: int
    objective: int | None
    values: tuple[int, ...] | None
    used: float


class Worker:
    """One worker's copy of the model, parsed once from its text form (protos do not pickle),
    and the decision variables a neighbourhood may pin."""

    def __init__(self, text: str, decisions: frozenset[int]) -> None:
        self.model = cp_model.CpModel()
        self.model.proto.parse_text_format(text)
        self.decisions = decisions

    def solve(self, draw: Draw) -> Found:
        sub = cp_model.CpModel()
        sub.proto.copy_from(self.model.proto)
        hint = dict(draw.hint)
        sub.clear_hints()  # type: ignore[no-untyped-call]
        sub.proto.solution_hint.vars.extend(list(hint))
        sub.proto.solution_hint.values.extend(list(hint.values()))
        for index in self.decisions - set(draw.free):
            if index in hint:
                domain = sub.proto.variables[index].domain
                domain.clear()
                domain.extend([hint[index], hint[index]])
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.num_workers = draw.threads
        # as CpModel._solver: with few threads all subsolvers take turns (deterministic)
        params.interleave_search = draw.threads < 4
        if draw.portfolio and not params.interleave_search:
            params.subsolvers.extend(PORTFOLIO)
        params.random_seed = draw.seed
        if draw.deterministic:
            params.max_deterministic_time = draw.step
        else:
            params.max_time_in_seconds = draw.step
        status = solver.solve(sub)
        used = solver.deterministic_time if draw.deterministic else solver.wall_time
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return Found(int(status), None, None, used)
        values = tuple(solver.response_proto.solution)
        return Found(int(status), round(solver.objective_value), values, used)


def _solve(worker: Worker, draw: Draw) -> Found:
    return worker.solve(draw)


class _Values:
    """A worker's variable values, read as a solver's (for CpModel._decode)."""

    def __init__(self, values: tuple[int, ...]) -> None:
        self.response = cp_model_helper.CpSolverResponse()
        self.response.solution.extend(values)

    def value(self, expression: Any) -> int:
        return int(cp_model_helper.ResponseHelper.value(self.response, expression))

    def boolean_value(self, literal: Any) -> bool:
        return bool(cp_model_helper.ResponseHelper.boolean_value(self.response, literal))


def _hint(model: CpModel, incumbent: Solution) -> tuple[tuple[int, int], ...]:
    """(variable index, value) of every variable the model hints for `incumbent`."""
    model.hint(incumbent)
    proto = model.model.proto
    return tuple(zip(proto.solution_hint.vars, proto.solution_hint.values, strict=True))


def _rounds(
    model: CpModel,
    incumbent: Solution,
    objective: int,
    settings: SolverSettings,
    on_improve: Callable[[int], None] | None,
    executor: Executor,
) -> tuple[Solution, int, dict[CostTerm, int], Stats]:
    rng, pool, fixed, stats = _begin(model, settings)
    terms: dict[CostTerm, int] = {}
    text = str(model.model.proto)
    width = max(executor.jobs, 1)
    # each neighbourhood gets the solver's threads, as one at a time would (fewer find far
    # less in a step on q3: 1-2 interleaved threads improved 0 of 12 neighbourhoods, 4
    # threads 3); a Ray actor reserves them (Executor.cpus_per_task)
    left = settings.time_limit
    started = time.perf_counter()
    settled: set[Neighbourhood] = set()
    hint = _hint(model, incumbent)  # the incumbent's values, again only when it changes
    with executor.workers(Worker, text, frozenset(fixed)) as workers:
        while left > 0.05 and len(settled) < len(pool):
            open_ = [h for h in pool if h not in settled]
            hoods = rng.sample(open_, min(width, len(open_)))
            step = min(STEP, left)
            draws = [
                Draw(
                    hint,
                    tuple(sorted(h.free)),
                    step,
                    settings.seed + i,
                    settings.deterministic,
                    settings.workers,
                    settings.portfolio,
                )
                for i, h in enumerate(hoods)
            ]
            found = workers.map(_solve, draws)
            if settings.deterministic:  # the budget is work: every solve of the round counts
                left -= sum(max(f.used, MIN_STEP) for f in found)
            else:  # the budget is wall time: the round took as long as its longest solve
                left -= max(max(f.used, MIN_STEP) for f in found)
                left = min(left, settings.time_limit - (time.perf_counter() - started))
            best: tuple[int, Neighbourhood, Found] | None = None
            for hood, f in zip(hoods, found, strict=True):
                stats.tried[hood.kind] += 1
                if f.objective is None:
                    continue
                if f.objective >= objective and f.status == cp_model.OPTIMAL:
                    settled.add(hood)
                if f.objective < objective and (best is None or f.objective < best[0]):
                    best = (f.objective, hood, f)
            if best is None:
                continue
            found_objective, hood, f = best
            assert f.values is not None
            settled.clear()
            stats.improved[hood.kind] += 1
            stats.saved[hood.kind] += objective - found_objective
            incumbent, terms = model._decode(_Values(f.values))
            hint = _hint(model, incumbent)
            objective = found_objective
            if on_improve is not None:
                on_improve(objective)
    return incumbent, objective, terms, stats
