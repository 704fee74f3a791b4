"""Large-neighbourhood search of our own, anytime, from a plan: free one neighbourhood's
decisions, fix every other decision at the incumbent, re-optimise with CP-SAT, keep strict
improvements.

The neighbourhoods (which decisions each frees) are in planner.cpsat.hoods.

Each neighbourhood is solved on a cut of the full model (planner.cpsat.cut): every
variable its freed decisions do not reach through the constraints (other than through a
pinned decision, a cumulative or a redundant cut) is fixed at the incumbent's value, and
only the constraints the reached ones appear in are kept; what is dropped holds at the
incumbent, so every incumbent is a plan of the full problem, and the caller checks the
final one as always. The cut leaves CP-SAT's presolve a few thousand constraints instead
of the whole quarter's (q3: a week's window 4.1 s -> 1.3 s).

Draws go where they pay: a kind is drawn by its record (improvements + 1 over the steps
its solves used + 1: on q3 a whole service's or pool's solve spends its step in presolve
and finds nothing, a month's or a week's finds improvements in a fraction of a step) and a
neighbourhood of that kind by the money its freed decisions carry in the incumbent's
objective. A neighbourhood not proven within its step gets twice the step the next time
(up to MAX_STEP), so a service's month is eventually proven. The search stops when its
budget is spent or when every neighbourhood is proven to hold nothing better than the
incumbent (a local optimum over them all).

It runs in rounds: each round draws as many neighbourhoods as the executor has jobs (one
without an executor; local processes or Ray actors, `planner.parallel`), solves them at
once, each with the solver's threads, and keeps the best improvement (the first drawn among
equals); every worker parses the model once. Under a fixed seed and deterministic budget
the rounds give the same plan wherever they run. Which neighbourhoods found improvements
is counted (`Stats`) for the benchmarks.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model, cp_model_helper

from planner.cpsat.cut import Cut
from planner.cpsat.hoods import Decisions, Neighbourhood, neighbourhoods, packages
from planner.cpsat.model import PORTFOLIO, CpModel, SolverSettings
from planner.domain.costs import CostTerm
from planner.parallel import Executor, Kind
from planner.solution import Solution

# Deterministic time (or seconds) of a neighbourhood's first solve; one not proven within
# its step gets twice as long the next time, up to MAX_STEP.
STEP = 2.0
MAX_STEP = 8.0
# The least a neighbourhood solve is charged, so that a budget of solves that take no time
# (tiny models, decided in presolve) still runs out.
MIN_STEP = 0.01


@dataclass
class Stats:
    tried: Counter[str] = field(default_factory=Counter)
    improved: Counter[str] = field(default_factory=Counter)
    used: dict[str, float] = field(default_factory=dict)  # budget (s or deterministic time)
    saved: Counter[str] = field(default_factory=Counter)  # scaled money, per kind

    def line(self, scale: int) -> str:
        kinds = sorted(self.tried)
        return "; ".join(
            f"{k}: {self.improved[k]} of {self.tried[k]} improved, "
            f"{self.saved[k] / scale:,.2f} saved"
            for k in kinds
        )


# --- rounds of neighbourhoods -----------------------------------------------------------------


@dataclass(frozen=True)
class Draw:
    """One neighbourhood solve as a worker receives it: the incumbent's values (every
    variable's), the decision variables the neighbourhood frees, the budget and seed."""

    values: tuple[int, ...]
    free: tuple[int, ...]
    step: float
    seed: int
    deterministic: bool
    threads: int = 1
    portfolio: bool = False


@dataclass(frozen=True)
class Found:
    """A worker's answer: CP-SAT's status, the objective and every variable's value where a
    plan was found, the budget used and, under a wall-clock budget, the seconds of it the
    cut of the neighbourhood's model took."""

    status: int
    objective: int | None
    values: tuple[int, ...] | None
    used: float
    cut: float = 0.0


class Worker:
    """One worker's copy of the model (parsed once from its text form where it came from
    another process: protos do not pickle) and its cut."""

    def __init__(self, model: str | Any, decisions: frozenset[int], redundant: int) -> None:
        proto = cp_model.CpModel().proto
        if isinstance(model, str):
            proto.parse_text_format(model)
        else:
            proto.copy_from(model)
        self.cut = Cut(proto, decisions, redundant)

    def solve(self, draw: Draw) -> Found:
        """Under a wall-clock budget the step counts from here: cutting the neighbourhood's
        model out of the full one (seconds on large quarters) is taken from its solve's
        limit and counted in `used`."""
        began = time.perf_counter()
        sub = self.cut.model(draw.values, draw.free)
        cut = 0.0 if draw.deterministic else time.perf_counter() - began
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
            params.max_time_in_seconds = max(draw.step - cut, 0.01)
        status = solver.solve(sub)
        used = solver.deterministic_time if draw.deterministic else time.perf_counter() - began
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return Found(int(status), None, None, used, cut)
        values = tuple(solver.response_proto.solution)
        return Found(int(status), round(solver.objective_value), values, used, cut)


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


def _values(model: CpModel, incumbent: Solution) -> tuple[int, ...] | None:
    """Every variable's value in `incumbent`, as the model hints it; None if the hint
    leaves a variable out (no cut could pin it)."""
    model.hint(incumbent)
    proto = model.model.proto
    hint = dict(zip(proto.solution_hint.vars, proto.solution_hint.values, strict=True))
    if len(hint) != len(proto.variables):
        return None
    return tuple(hint[i] for i in range(len(proto.variables)))


class _Draws:
    """Which neighbourhood to solve next: a kind by its record, then one of its open
    neighbourhoods by the money it carries in the incumbent."""

    def __init__(self, model: CpModel, decisions: Decisions, seed: int) -> None:
        self.model = model
        self.decisions = decisions
        self.static = neighbourhoods(model, decisions=decisions)
        self.rng = random.Random(seed)
        objective = model.model.proto.objective
        self.coeffs = dict(zip(objective.vars, objective.coeffs, strict=True))
        self.pool: list[Neighbourhood] = []
        self.values: Sequence[int] = ()
        self.money: dict[Neighbourhood, int] = {}
        self.entries: dict[Neighbourhood, list[tuple[int, int]]] = {}
        self.steps: dict[tuple[str, str], float] = {}

    def follow(self, incumbent: Solution, values: Sequence[int]) -> None:
        """The neighbourhoods of a new incumbent."""
        self.pool = self.static + packages(self.model, self.decisions, incumbent)
        self.values = values
        self.money = {}

    def carried(self, h: Neighbourhood) -> int:
        """The money `h`'s decisions carry in the incumbent's objective."""
        if h not in self.money:
            if h not in self.entries:  # the objective's terms on its decisions
                self.entries[h] = [(x, c) for x in h.free if (c := self.coeffs.get(x))]
            self.money[h] = sum(c * self.values[x] for x, c in self.entries[h])
        return self.money[h]

    def draw(self, width: int, settled: set[Neighbourhood], stats: Stats) -> list[Neighbourhood]:
        """Up to `width` open neighbourhoods, each drawn without replacement."""
        chosen: list[Neighbourhood] = []
        for _ in range(width):
            open_ = [h for h in self.pool if h not in settled and h not in chosen]
            if not open_:
                break
            kinds = sorted({h.kind for h in open_})
            record = [(stats.improved[k] + 1) / (stats.used.get(k, 0) / STEP + 1) for k in kinds]
            kind = self.rng.choices(kinds, weights=record)[0]
            of_kind = [h for h in open_ if h.kind == kind]
            weights = [max(self.carried(h), 0) + 1 for h in of_kind]
            chosen.append(self.rng.choices(of_kind, weights=weights)[0])
        return chosen

    def step(self, hood: Neighbourhood) -> float:
        return self.steps.get((hood.kind, hood.name), STEP)

    def unproven(self, hood: Neighbourhood) -> None:
        """`hood` ran out of its step: twice as long next time."""
        self.steps[(hood.kind, hood.name)] = min(2 * self.step(hood), MAX_STEP)


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
    one job (or Ray), neighbourhoods are solved in rounds of that many."""
    started = time.perf_counter()
    model.model.minimize(model.cost)
    stats = Stats()
    terms: dict[CostTerm, int] = {}
    start = _values(model, incumbent)
    if start is None:  # the model's hint is complete on every model built today
        return incumbent, objective, terms, stats
    values = start
    chosen = Decisions(model)
    fixed = frozenset(chosen.all())
    draws = _Draws(model, chosen, settings.seed)
    draws.follow(incumbent, values)
    source: Any = model.model.proto
    if executor is None or (executor.kind is Kind.local and executor.jobs <= 1):
        executor = Executor(Kind.local, 1)
    else:  # other processes parse the model's text
        source = str(source)
    width = max(executor.jobs, 1)
    # each neighbourhood gets the solver's threads, as one at a time would (fewer find far
    # less in a step on q3: 1-2 interleaved threads improved 0 of 12 neighbourhoods, 4
    # threads 3); a Ray actor reserves them (Executor.cpus_per_task)
    left = settings.time_limit
    # under a wall-clock limit, the most a round took beyond its longest solve (each solve's
    # time counts its cut; this is passing the work to the workers and back): kept back
    # from the next round's budget, so the last round ends within the limit; and no round
    # starts with less left than the longest cut seen (its solve would have no time)
    overhead = cuts = 0.0
    settled: set[Neighbourhood] = set()  # proven to hold nothing better than the incumbent
    with executor.workers(Worker, source, fixed, model.cuts) as workers:
        if not settings.deterministic:  # the set-up (the workers' cuts) took wall time too
            left = min(left, settings.time_limit - (time.perf_counter() - started))
        while left - overhead - cuts > 0.05:
            hoods = draws.draw(width, settled, stats)
            if not hoods:
                break
            batch = [
                Draw(
                    values,
                    tuple(sorted(h.free)),
                    min(draws.step(h), left - overhead),
                    settings.seed + i,
                    settings.deterministic,
                    settings.workers,
                    settings.portfolio,
                )
                for i, h in enumerate(hoods)
            ]
            began = time.perf_counter()
            found = workers.map(_solve, batch)
            if settings.deterministic:  # the budget is work: every solve of the round counts
                left -= sum(max(f.used, MIN_STEP) for f in found)
            else:  # the budget is wall time: the round took as long as its longest solve
                longest = max(max(f.used, MIN_STEP) for f in found)
                overhead = max(overhead, time.perf_counter() - began - longest)
                cuts = max(cuts, *(f.cut for f in found))
                left -= longest
                left = min(left, settings.time_limit - (time.perf_counter() - started))
            best: tuple[int, Neighbourhood, Found] | None = None
            for hood, f in zip(hoods, found, strict=True):
                stats.tried[hood.kind] += 1
                stats.used[hood.kind] = stats.used.get(hood.kind, 0.0) + max(f.used, MIN_STEP)
                if f.status not in (cp_model.OPTIMAL, cp_model.INFEASIBLE):
                    draws.unproven(hood)
                if f.objective is None:
                    continue
                if f.objective >= objective and f.status == cp_model.OPTIMAL:
                    settled.add(hood)  # a local optimum for this neighbourhood
                if f.objective < objective and (best is None or f.objective < best[0]):
                    best = (f.objective, hood, f)
            if best is None:
                continue
            found_objective, hood, f = best
            assert f.values is not None
            settled.clear()
            if f.status == cp_model.OPTIMAL:  # the new incumbent is this neighbourhood's best
                settled.add(hood)
            stats.improved[hood.kind] += 1
            stats.saved[hood.kind] += objective - found_objective
            incumbent, terms = model._decode(_Values(f.values))
            values, objective = f.values, found_objective
            draws.follow(incumbent, values)
            if on_improve is not None:
                on_improve(objective)
    return incumbent, objective, terms, stats
