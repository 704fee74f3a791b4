"""Redundant cuts: inequalities every integer plan satisfies, added so that the LP relaxation
(and with it the bound CP-SAT reports) sees what whole replicas cost.

Without them the relaxation covers a segment's demand with fractions of replicas: a night
demand of 8 requests in flight costs 8/80 of a 2-card replica, and the bound of a serving
quarter falls to a few percent of what any plan pays.

**Cover cut** (one per replica job and segment). For any non-negative integer weights w,
every integer replica vector r of the segment with Σ c·r ≥ demand and Σ r ≥ minimum has
Σ w·r ≥ L(w), the least value of Σ w·r over such vectors (`least_cover`). The cut holds
for every weight; the weights only decide how much it helps: a config's price per held hour
(hourly rentals: units × the hourly price, with their disk; held cards: the package's price
spread over its hours, per card), so that the LP pays for whole replicas.

**Package cuts** (train jobs on packages). Which package a job's cards come from is a
cumulative, which the LP does not see: without these the relaxation runs a job on a machine
nobody bought. *Presence*: a job on config k of a package pool runs while at least
ceil(cards ÷ unit cards) of that pool's units are held, so packages bought on days whose
span meets the job's window number at least that many. *Energy*: over a window W, the
card-hours that jobs whose windows lie inside W (and replicas in W) use on a pool are at
most the card-hours its packages hold inside W.
"""

from __future__ import annotations

import math

from ortools.sat.python import cp_model

from planner.configs import ReplicaConfig
from planner.cover import least_cover
from planner.cpsat.variables import Variables
from planner.prices import card_hour_price
from planner.problem import Problem

# Weights are prices per hour at this many times the money scale, rounded down (any
# non-negative integer weights give a valid cut).
WEIGHT_SCALE = 100


def cover_cuts(model: cp_model.CpModel, problem: Problem, v: Variables) -> int:
    """Add one cover cut per replica job and segment with demand; returns how many."""
    added = 0
    memo: dict[tuple[tuple[tuple[int, int], ...], int, int], int] = {}
    for j, job in enumerate(problem.replica_jobs):
        weights = [replica_weight(problem, job.name, c) for c in job.configs]
        for s in range(len(problem.segments)):
            present = [k for k in range(len(job.configs)) if (j, k, s) in v.replicas]
            if not present or not (job.demand[s] or job.minimum[s]):
                continue
            items = tuple(sorted({(job.configs[k].capacity, weights[k]) for k in present}))
            key = (items, job.demand[s], job.minimum[s])
            if key not in memo:
                memo[key] = least_cover(items, job.demand[s], job.minimum[s])
            least = memo[key]
            if least > 0:
                terms = [v.replicas[(j, k, s)] * weights[k] for k in present if weights[k]]
                model.add(cp_model.LinearExpr.sum(terms) >= least)
                added += 1
    return added


def package_cuts(model: cp_model.CpModel, problem: Problem, v: Variables) -> int:
    """Add presence and energy cuts for every package pool train jobs may use; returns how
    many."""
    added = 0
    windows: dict[tuple[str, str], set[tuple[int, int]]] = {}
    for job in problem.jobs:
        need: dict[tuple[str, str], list[cp_model.LinearExprT]] = {}
        for k, c in enumerate(job.configs):
            if c.held and c.pool in v.packages:
                unit_cards = problem.offers[c.offer].unit_cards
                need.setdefault(c.pool, []).append(
                    v.choose[job.index][k] * -(-c.cards // unit_cards)
                )
        for key, units in need.items():
            days = _days_meeting(problem, key, job.earliest, job.deadline)
            model.add(sum(v.packages[key][d] for d in days) >= sum(units))
            windows.setdefault(key, set()).add((job.earliest, job.deadline))
            added += 1
    segment_end = dict(problem.segments)
    for key, spans in windows.items():
        unit_cards = problem.offers[key[0]].unit_cards
        for w1, w2 in spans | {(0, problem.hours)}:
            used: list[cp_model.LinearExprT] = []
            for job in problem.jobs:
                if not (w1 <= job.earliest and job.deadline <= w2):
                    continue
                for k, c in enumerate(job.configs):
                    if c.held and c.pool == key:
                        hours = sum(length for _, length in c.runs)
                        used.append(v.choose[job.index][k] * (c.cards * hours))
            for (pool, held, a), cards in v.usage.items():
                b = segment_end[a]
                if pool == key and held and w1 <= a and b <= w2:
                    used.append(cards * (b - a))
            if not used:
                continue
            held_hours = []
            for d in _days_meeting(problem, key, w1, w2):
                a, b = problem.package(key, d)
                held_hours.append(v.packages[key][d] * (unit_cards * (min(b, w2) - max(a, w1))))
            model.add(sum(used) <= sum(held_hours))
            added += 1
    return added


def _days_meeting(problem: Problem, key: tuple[str, str], w1: int, w2: int) -> list[int]:
    """Purchase days of a pool whose package span meets the hours [w1, w2)."""
    days = []
    for d in range(problem.axis.days):
        a, b = problem.package(key, d)
        if a < w2 and b > w1:
            days.append(d)
    return days


def replica_weight(problem: Problem, job: str, config: ReplicaConfig) -> int:
    """A replica's price per held hour, as an integer weight (see the module's docstring):
    rented, its units' hourly price; on held cards, their price per card-hour (a package
    spread over its nominal hours; committed hourly units at their hourly price); plus its
    disk. Any non-negative weights give a valid cut."""
    rate = problem.replica_rate(job, config)
    hour = rate.per_hour
    if not config.rented:
        hour += card_hour_price(problem.offers[config.offer], config.mode) * config.cards
    return math.floor(hour * problem.money_scale * WEIGHT_SCALE)
