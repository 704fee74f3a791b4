"""Large-neighbourhood search of our own, anytime, from a plan: free one neighbourhood's
decisions, fix every other decision at the incumbent, re-optimise with CP-SAT, keep strict
improvements.

Decisions are what a plan chooses: each train job's config and start, each replica job's
replicas (and their starts) per segment, and every pool's package purchases. `window`
and `pool` neighbourhoods also free the purchases of the pools their configs may use
(a window's: those whose packages hold cards in its week), `package` ones their own
pool's; the rest of the model (stock, pool capacity, cumulative slices, costs) follows by
propagation. Neighbourhoods:

- `job`: one train job;
- `service`: one serve or reserve workload over the whole horizon;
- `month`: one serve or reserve workload over four weeks (one every two weeks), small
  enough to be proven in a step or two where the whole horizon is not;
- `package`: a bought package's pool (its purchases on every day), the train jobs that may
  run on it and every workload's replicas in the weeks around the package's first and
  last day, so that the package, what fills it and what serves around it move together
  (drawn from the incumbent's purchases);
- `pool`: every workload with a config on one package pool (those sharing its cards);
- `window`: the train jobs whose windows meet a random week, with every replica of the
  segments in that week.

Each neighbourhood is solved on a cut of the full model: every variable its freed
decisions do not reach through the constraints (other than through a pinned decision, a
cumulative or a redundant cut) is fixed at the incumbent's value, and only the constraints
the reached ones appear in are kept; what is dropped holds at the incumbent, so every
incumbent is a plan of the full problem, and the caller checks the final one as always.
The cut leaves CP-SAT's presolve a few thousand constraints instead of the whole
quarter's (q3: a week's window 4.1 s -> 1.3 s).

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model, cp_model_helper

from planner.cpsat.model import PORTFOLIO, CpModel, SolverSettings
from planner.domain.costs import CostTerm
from planner.parallel import Executor, Kind
from planner.solution import Solution

WEEK = 168
# A `month` neighbourhood's span, and how far apart two of one workload's begin.
MONTH = 4 * WEEK
MONTH_EVERY = 2 * WEEK
# Deterministic time (or seconds) of a neighbourhood's first solve; one not proven within
# its step gets twice as long the next time, up to MAX_STEP.
STEP = 2.0
MAX_STEP = 8.0
# The least a neighbourhood solve is charged, so that a budget of solves that take no time
# (tiny models, decided in presolve) still runs out.
MIN_STEP = 0.01


@dataclass(frozen=True)
class Neighbourhood:
    kind: str  # job | service | month | package | pool | window
    name: str
    free: frozenset[int]  # variable indices of the decisions it frees, purchases included


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


class _Decisions:
    """A model's decision variables, grouped as the neighbourhoods free them."""

    def __init__(self, model: CpModel) -> None:
        problem, v = model.problem, model.v
        self.model = model
        self.job = {
            j.index: {v.start[j.index].index, *(x.index for x in v.choose[j.index])}
            for j in problem.jobs
        }
        self.replica: dict[int, set[int]] = {}  # per replica job
        self.segment: dict[int, dict[int, set[int]]] = {}  # per segment, per replica job
        self.pools: dict[int, tuple[str, str]] = {}  # a held config's variable -> its pool
        for table in (v.replicas, v.starts, v.held_starts):
            for (j, k, s), x in table.items():
                self.replica.setdefault(j, set()).add(x.index)
                self.segment.setdefault(s, {}).setdefault(j, set()).add(x.index)
                replica = problem.replica_jobs[j].configs[k]
                if replica.held:
                    self.pools[x.index] = (replica.offer, replica.mode)
        for job in problem.jobs:
            for c, x in zip(job.configs, v.choose[job.index], strict=True):
                if c.held:
                    self.pools[x.index] = c.pool
        self.purchases = {  # per pool, per day
            key: {day: x.index for day, x in bought.items()} for key, bought in v.packages.items()
        }

    def all(self) -> set[int]:
        """Every decision's variable index, purchases included."""
        out = set().union(*self.job.values(), *self.replica.values())
        return out.union(*(set(days.values()) for days in self.purchases.values()))

    def between(self, a: int, b: int, jobs: Iterable[int] | None = None) -> set[int]:
        """The replica decisions of segments that meet hours [a, b) (of `jobs` only, when
        given)."""
        out: set[int] = set()
        for s, (start, end) in enumerate(self.model.problem.segments):
            if start < b and end > a:
                by_job = self.segment.get(s, {})
                for j in by_job if jobs is None else jobs:
                    out |= by_job.get(j, set())
        return out

    def bought(self, key: tuple[str, str], a: int = 0, b: int | None = None) -> set[int]:
        """The purchases of pool `key` whose packages hold cards in hours [a, b)."""
        problem = self.model.problem
        axis, days = problem.axis, problem.pools[key].days
        b = problem.hours if b is None else b
        return {
            x
            for day, x in self.purchases.get(key, {}).items()
            if axis.day_start(day) < b and axis.day_start(min(day + days, axis.days)) > a
        }

    def hood(
        self, kind: str, name: str, free: set[int], buying: tuple[int, int] | None = None
    ) -> Neighbourhood:
        """`free`, and where `buying` names hours [a, b) the purchases of every pool its
        configs may use whose packages hold cards then."""
        if buying is not None:
            pools = sorted({self.pools[i] for i in free if i in self.pools})
            free = free.union(*(self.bought(p, *buying) for p in pools))
        return Neighbourhood(kind, name, frozenset(free))


def neighbourhoods(
    model: CpModel, incumbent: Solution | None = None, decisions: _Decisions | None = None
) -> list[Neighbourhood]:
    """Every neighbourhood of the model, in a fixed order (the search draws from them); the
    `package` ones only with an incumbent, around its purchases."""
    problem = model.problem
    d = _Decisions(model) if decisions is None else decisions
    out = [d.hood("job", j.name, d.job[j.index]) for j in problem.jobs]
    out += [
        d.hood("service", r.name, d.replica[j])
        for j, r in enumerate(problem.replica_jobs)
        if d.replica.get(j)
    ]
    for j, r in enumerate(problem.replica_jobs):
        for a in range(0, max(problem.hours - MONTH_EVERY, 1), MONTH_EVERY):
            b = min(a + MONTH, problem.hours)
            span = d.between(a, b, [j])
            if span and span != d.replica[j]:
                out.append(d.hood("month", f"{r.name} hours {a}-{b}", span))
    if incumbent is not None:
        out += _packages(model, d, incumbent)
    for key in sorted(problem.pools):
        free: set[int] = set()
        for job in problem.jobs:
            if any(c.pool == key for c in job.configs):
                free |= d.job[job.index]
        for j, replica_job in enumerate(problem.replica_jobs):
            if any((c.offer, c.mode) == key for c in replica_job.configs):
                free |= d.replica.get(j, set())
        if free:
            out.append(d.hood("pool", f"{key[0]} {key[1]}", free, (0, problem.hours)))
    for week in range(0, problem.hours, WEEK):
        free = set()
        for job in problem.jobs:
            if job.earliest < week + WEEK and job.deadline > week:
                free |= d.job[job.index]
        free |= d.between(week, week + WEEK)
        if free:
            name = f"hours {week}-{week + WEEK}"
            out.append(d.hood("window", name, free, (week, week + WEEK)))
    return out


def _packages(model: CpModel, d: _Decisions, incumbent: Solution) -> list[Neighbourhood]:
    """One `package` neighbourhood per day the incumbent buys packages of a pool."""
    problem = model.problem
    axis = problem.axis
    out = []
    for key, bought in sorted(incumbent.packages.items()):
        days = problem.pools[key].days
        jobs = set().union(
            *(d.job[j.index] for j in problem.jobs if any(c.pool == key for c in j.configs))
        )
        for day in sorted(bought):
            first = axis.day_start(day)
            last = axis.day_start(min(day + days, axis.days - 1))
            free = d.bought(key) | jobs
            free |= d.between(first - WEEK, first + WEEK) | d.between(last - WEEK, last + WEEK)
            name = f"{key[0]} {key[1]} from {axis.local(first):%Y-%m-%d}"
            out.append(d.hood("package", name, free))
    return out


def decisions(model: CpModel) -> set[int]:
    """The variable indices of every decision, package purchases included."""
    return _Decisions(model).all()


# --- the cut of the model a neighbourhood is solved on ----------------------------------------


def _var(ref: int) -> int:
    return ref if ref >= 0 else -ref - 1


def _expr_vars(expr: Any) -> list[int]:
    return list(expr.vars)


class Cut:
    """The constraints of a model by variable, to solve a neighbourhood on the part of the
    model its freed decisions reach."""

    def __init__(self, proto: Any, fixed: frozenset[int], redundant: int = 0) -> None:
        self.proto = proto
        self.fixed = fixed  # decisions: pinned at the incumbent unless freed
        self.uses: list[list[int]] = []  # per constraint, its variables
        self.intervals: list[list[int]] = []  # per constraint, the intervals it names
        constraints = proto.constraints
        # the last `redundant` constraints are cuts (planner.cpsat.cuts) every plan meets:
        # never kept, as each ties a config to its pool's use at every hour of the quarter
        last = len(constraints) - redundant
        for index, c in enumerate(constraints):
            uses = [_var(x) for x in c.enforcement_literal]
            named: list[int] = []
            if index >= last:
                uses = []
            elif c.has_linear():
                uses += c.linear.vars
            elif c.has_interval():
                uses += _interval_vars(c)
            elif c.has_cumulative():
                uses += _expr_vars(c.cumulative.capacity)
                for demand in c.cumulative.demands:
                    uses += _expr_vars(demand)
                named = list(c.cumulative.intervals)
                for i in named:
                    uses += [_var(x) for x in constraints[i].enforcement_literal]
                    uses += _interval_vars(constraints[i])
            else:  # the model writes only these three kinds
                raise ValueError(f"constraint kind not cut: {c}")
            self.uses.append(uses)
            self.intervals.append(named)
        self.at: list[list[int]] = [[] for _ in proto.variables]
        for i, uses in enumerate(self.uses):
            for x in uses:
                self.at[x].append(i)
        self._base: tuple[Sequence[int], Any] | None = None

    def reach(self, free: Iterable[int]) -> tuple[set[int], list[int]]:
        """The variables `free` reaches through constraints without passing a pinned
        decision, and the constraints those appear in (with the intervals they name)."""
        reached = set(free)
        todo = list(reached)
        kept: set[int] = set()
        while todo:
            for i in self.at[todo.pop()]:
                if i in kept:
                    continue
                kept.add(i)
                if self.intervals[i]:
                    continue  # a cumulative is kept, but what it names is not freed by it
                for x in self.uses[i]:
                    if x not in reached and x not in self.fixed:
                        reached.add(x)
                        todo.append(x)
        for i in list(kept):
            kept.update(self.intervals[i])
        return reached, sorted(kept)

    def model(self, values: Sequence[int], free: Iterable[int]) -> cp_model.CpModel:
        """The model with every variable `free` does not reach fixed at `values` (a complete
        solution of the model), keeping only the constraints of those it reaches; hinted
        with `values`."""
        reached, kept = self.reach(free)
        sub = cp_model.CpModel()
        proto = sub.proto
        proto.copy_from(self._fixed_at(values))
        variables = proto.variables
        for x in reached:
            domain = variables[x].domain
            domain.clear()
            domain.extend(list(self.proto.variables[x].domain))
        constraints = self.proto.constraints
        proto.constraints.extend([constraints[i] for i in kept])
        renumbered = {i: n for n, i in enumerate(kept)}
        for n, i in enumerate(kept):
            if self.intervals[i]:
                named = proto.constraints[n].cumulative.intervals
                numbers = [renumbered[k] for k in named]
                named.clear()
                named.extend(numbers)
        reached_sorted = sorted(reached)
        proto.solution_hint.vars.extend(reached_sorted)
        proto.solution_hint.values.extend([values[x] for x in reached_sorted])
        return sub

    def _fixed_at(self, values: Sequence[int]) -> Any:
        """The model's variables fixed at `values`, its objective, no constraint: built
        once, then only the variables whose values changed are set again."""
        if self._base is None:
            base = cp_model.CpModel().proto
            base.copy_from(self.proto)
            base.constraints.clear()
            base.clear_solution_hint()
            changed: Iterable[int] = range(len(values))
        else:
            before, base = self._base
            if before == values:
                return base
            changed = [x for x, (a, b) in enumerate(zip(before, values, strict=True)) if a != b]
        variables = base.variables
        for x in changed:
            domain = variables[x].domain
            domain.clear()
            domain.extend([values[x], values[x]])
        self._base = (values, base)
        return base


def _interval_vars(c: Any) -> list[int]:
    i = c.interval
    return _expr_vars(i.start) + _expr_vars(i.end) + _expr_vars(i.size)


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
    plan was found, and the budget used."""

    status: int
    objective: int | None
    values: tuple[int, ...] | None
    used: float


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
        sub = self.cut.model(draw.values, draw.free)
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

    def __init__(self, model: CpModel, decisions: _Decisions, seed: int) -> None:
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
        self.pool = self.static + _packages(self.model, self.decisions, incumbent)
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
    chosen = _Decisions(model)
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
    settled: set[Neighbourhood] = set()  # proven to hold nothing better than the incumbent
    with executor.workers(Worker, source, fixed, model.cuts) as workers:
        while left > 0.05:
            hoods = draws.draw(width, settled, stats)
            if not hoods:
                break
            batch = [
                Draw(
                    values,
                    tuple(sorted(h.free)),
                    min(draws.step(h), left),
                    settings.seed + i,
                    settings.deterministic,
                    settings.workers,
                    settings.portfolio,
                )
                for i, h in enumerate(hoods)
            ]
            found = workers.map(_solve, batch)
            if settings.deterministic:  # the budget is work: every solve of the round counts
                left -= sum(max(f.used, MIN_STEP) for f in found)
            else:  # the budget is wall time: the round took as long as its longest solve
                left -= max(max(f.used, MIN_STEP) for f in found)
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
