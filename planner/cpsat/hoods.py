"""The neighbourhoods of the search (planner.cpsat.lns): which decision variables each frees.

Decisions are what a plan chooses: each train job's config and start, each replica job's
replicas (and their starts) per segment, and every pool's package purchases. `window`
and `pool` neighbourhoods also free the purchases of the pools their configs may use
(a window's: those whose packages hold cards in its week), `package` ones their own
pool's; the rest of the model (stock, pool capacity, cumulative slices, costs) follows by
propagation. Kinds:

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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from planner.cpsat.model import CpModel
from planner.solution import Solution

WEEK = 168
# A `month` neighbourhood's span, and how far apart two of one workload's begin.
MONTH = 4 * WEEK
MONTH_EVERY = 2 * WEEK


@dataclass(frozen=True)
class Neighbourhood:
    kind: str  # job | service | month | package | pool | window
    name: str
    free: frozenset[int]  # variable indices of the decisions it frees, purchases included


class Decisions:
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
    model: CpModel, incumbent: Solution | None = None, decisions: Decisions | None = None
) -> list[Neighbourhood]:
    """Every neighbourhood of the model, in a fixed order (the search draws from them); the
    `package` ones only with an incumbent, around its purchases."""
    problem = model.problem
    d = Decisions(model) if decisions is None else decisions
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
        out += packages(model, d, incumbent)
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


def packages(model: CpModel, d: Decisions, incumbent: Solution) -> list[Neighbourhood]:
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
    return Decisions(model).all()
