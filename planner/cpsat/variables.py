"""Decision variables: one config per job, its start, its runs as intervals; packages bought."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from fractions import Fraction

from ortools.sat.python import cp_model

from planner.configs import ReplicaConfig
from planner.problem import Problem
from planner.serving import ReplicaJob


@dataclass(frozen=True)
class Short:
    """Rentals of a replica config ended younger than a billing window over a piece of a
    segment: at least the starts of `recent` segments less the replicas of `segment`; paid
    for `hours` (the piece's length × the window's weight)."""

    count: cp_model.IntVar
    job: int
    config: int
    segment: int
    recent: tuple[int, ...]
    hours: Fraction


@dataclass(frozen=True)
class Ends:
    """Rentals of a replica config that end at one hour, each billed `hours` beyond those
    it held (planner.cpsat.steps)."""

    count: cp_model.LinearExprT
    job: int
    config: int
    hours: Fraction


@dataclass
class Pools:
    """One stepped config's counts: `cohorts[(u, s)]` rentals started at segment u < s held
    in segment s (within the minimum, or joining their pool at s), `survivors[(phase, s)]`
    rentals of a pool held in segment s - 1 and still in s."""

    job: int
    config: int
    cohorts: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    survivors: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)


@dataclass
class Variables:
    present: list[cp_model.IntVar] = field(default_factory=list)  # one per job
    choose: list[list[cp_model.IntVar]] = field(default_factory=list)  # job → config
    start: list[cp_model.IntVar] = field(default_factory=list)  # job → start hour
    end: list[cp_model.LinearExpr] = field(default_factory=list)  # job → finish hour
    runs: dict[tuple[int, int], list[cp_model.IntervalVar]] = field(default_factory=dict)
    packages: dict[tuple[str, str], dict[int, cp_model.IntVar]] = field(default_factory=dict)
    # pool capacity not held, per (pool, segment start): added by the pool constraints
    free: dict[tuple[tuple[str, str], int], cp_model.IntVar] = field(default_factory=dict)
    # serve/reserve replicas per (replica job, config, segment), and hourly rental starts
    replicas: dict[tuple[int, int, int], cp_model.IntVar] = field(default_factory=dict)
    starts: dict[tuple[int, int, int], cp_model.IntVar] = field(default_factory=dict)
    # replicas of a held (package) config started per segment, where a min hold needs them
    held_starts: dict[tuple[int, int, int], cp_model.IntVar] = field(default_factory=dict)
    # replica rentals ended younger than a billing window: added by the constraints
    short: list[Short] = field(default_factory=list)
    # stepped rentals' cohorts and pools (planner.cpsat.steps.Pools), and their billed ends
    steps: list[Pools] = field(default_factory=list)
    ends: list[Ends] = field(default_factory=list)
    # what replicas hold per (offer, mode), held (cards) or rented (units), and segment
    # start: added by the constraints
    usage: dict[tuple[tuple[str, str], bool, int], cp_model.IntVar] = field(default_factory=dict)
    # a variable per slice of a cumulative that holds a sum of fixed parts, with the sum
    sums: list[tuple[cp_model.IntVar, cp_model.LinearExpr]] = field(default_factory=list)


def make_variables(model: cp_model.CpModel, problem: Problem) -> Variables:
    v = Variables()
    for job in problem.jobs:
        starts = sorted({s for c in job.configs for s in job.start_range(c)})
        present = model.new_bool_var(f"present[{job.name}]")
        choose = [model.new_bool_var(f"choose[{job.name},{k}]") for k in range(len(job.configs))]
        start = model.new_int_var_from_domain(
            cp_model.Domain.from_values(starts), f"start[{job.name}]"
        )
        v.present.append(present)
        v.choose.append(choose)
        v.start.append(start)
        v.end.append(start + sum(x * c.span for x, c in zip(choose, job.configs, strict=True)))
        for k, config in enumerate(job.configs):
            v.runs[(job.index, k)] = [
                model.new_optional_fixed_size_interval_var(
                    start + offset, length, choose[k], f"run[{job.name},{k},{r}]"
                )
                for r, (offset, length) in enumerate(config.runs)
            ]
    for j, replica_job in enumerate(problem.replica_jobs):
        for k, replica in enumerate(replica_job.configs):
            for s in range(len(problem.segments)):
                most = replica_bound(replica_job, replica, s)
                if most:
                    name = f"{replica_job.name},{k},{s}"
                    v.replicas[(j, k, s)] = model.new_int_var(0, most, f"r[{name}]")
                    if replica.rented:
                        v.starts[(j, k, s)] = model.new_int_var(0, most, f"up[{name}]")
                    elif replica_job.hold:
                        v.held_starts[(j, k, s)] = model.new_int_var(0, most, f"up[{name}]")
    for key, pool in problem.pools.items():
        if pool.days == 0:
            continue  # committed hourly cards: nothing to buy
        cap = pool_cap(problem, key)
        days = range(problem.axis.days)  # one purchase per local day, at its 00:00
        v.packages[key] = {
            d: model.new_int_var(0, cap, f"packages[{key[0]},{key[1]},{d}]") for d in days
        }
    return v


def replica_bound(job: ReplicaJob, config: ReplicaConfig, segment: int) -> int:
    """Most replicas of one config a segment can use (`ReplicaJob.with_bounds` says why
    no plan is lost)."""
    return job.bounds[config][segment]


def pool_cap(problem: Problem, key: tuple[str, str]) -> int:
    """Most units a pool may hold: what all its users could use at once plus its
    commitments, and never more than its stock (more units than its users could fill
    only add cost, so no optimal plan is lost; the money limit counts the same)."""
    pool = problem.pools[key]
    users = sum(
        max((c.units for c in j.configs if c.held and c.pool == key), default=0)
        for j in problem.jobs
    )
    segments = range(len(problem.segments))
    users += sum(
        max((replica_bound(r, c, s) * c.units for s in segments), default=0)
        for r in problem.replica_jobs
        for c in r.configs
        if c.held and (c.offer, c.mode) == key
    )
    wanted = users + sum(c.units for c in pool.committed)
    return wanted if pool.stock is None else min(pool.stock, wanted)


def estimated_variables(problem: Problem) -> int:
    """About how many variables `make_variables` and the constraints will create, counted
    before building anything: replica counts (and rental starts) per config and segment,
    cohorts and pools per stepped config and segment, a choice, start and run intervals
    per train config, purchases and free units per pool and day, and the pools'
    per-segment usage."""
    count = 0
    for job in problem.replica_jobs:
        for config in job.configs:
            active = sum(1 for most in job.bounds[config] if most)
            count += active * (2 if config.rented or job.hold else 1)
            rate = problem.replica_rate(job.name, config)
            if config.rented and rate.stepped:  # cohorts and pools (planner.cpsat.steps)
                held = [s for s, most in enumerate(job.bounds[config]) if most]
                joined: dict[int, int] = {}  # phase → the first segment its pool holds
                for s in held:
                    phase = problem.segments[s][0] % rate.phases
                    first = rate.joins(problem.segments, s)
                    joined[phase] = min(joined.get(phase, first), first)
                    count += first - s  # the cohort's counts
                count += sum(len(held) - bisect.bisect_right(held, j) for j in joined.values())
    for train in problem.jobs:
        count += 2 + sum(1 + len(c.runs) for c in train.configs)
    count += 2 * len(problem.pools) * problem.axis.days
    count += 2 * len(problem.pools) * len(problem.segments)
    return count
