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
nothing better than the incumbent (a local optimum over them all). Each neighbourhood
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

from ortools.sat.python import cp_model

from planner.cpsat.model import CpModel, SolverSettings
from planner.domain.costs import CostTerm
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


def improve(
    model: CpModel,
    incumbent: Solution,
    objective: int,
    settings: SolverSettings,
    on_improve: Callable[[int], None] | None = None,
) -> tuple[Solution, int, dict[CostTerm, int], Stats]:
    """The best plan found within `settings.time_limit` (deterministic units where
    `settings.deterministic`, else seconds), starting from `incumbent` of cost `objective`
    (money scale); draws neighbourhoods with `settings.seed`."""
    rng = random.Random(settings.seed)
    pool = neighbourhoods(model)
    fixed = decisions(model)
    stats = Stats()
    terms: dict[CostTerm, int] = {}
    model.model.minimize(model.cost)
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
