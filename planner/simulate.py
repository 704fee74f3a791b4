"""`plan simulate`: a plan's spot work replayed many times with random preemptions.

The model is the planner's own (docs/estimates.md, "Spot"), drawn instead of averaged: over
the useful hours W of a spot run, preemptions arrive as a Poisson process at the offer's
rate λ per hour; each one loses the work since the last checkpoint (uniform over the
interval c) and the restart time r. The planner budgets W·(1 + λ(c/2 + r)) hours, the mean
of this process, so the simulated mean is the plan's (up to sampling and the billing
round-ups of the extra hours) and the spread is what the plan could not say. Extra hours extend
the workload's last rental (billed by its offer's rules); a job with daily hours carries
them into the next windows, each day paying its setup again. Rework is not itself preempted
(a λ² effect, under 0.1% at the shipped rates), stock is not checked for the extra hours,
and a run resumes on the same offer. Jobs that run `after` a spot job keep their planned
starts: how often the spot job finishes past each one's start is reported, the delay it
would pass on, not replayed.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from planner.domain.catalog import HourlyBilling
from planner.domain.plan import Assignment, Plan
from planner.domain.scenario import Scenario
from planner.domain.workload import TrainWorkload
from planner.estimate.speed import spot_factor
from planner.prices import unit_price
from planner.rules import billed_hours

HOUR = dt.timedelta(hours=1)


@dataclass(frozen=True)
class SpotRisk:
    """One spot workload's simulated outcomes (arrays over the runs)."""

    workload: str
    offer: str
    planned_hours: float  # compute hours the plan budgets (rework included)
    useful_hours: float
    preemptions_per_hour: float
    deadline: dt.datetime
    planned_end: dt.datetime
    compute_hours: np.ndarray  # realised
    finish_hours: np.ndarray  # realised finish, hours after the planned end (may be < 0)
    extra_cost: np.ndarray  # realised cost minus planned, in the plan's currency
    successors: tuple[tuple[str, dt.datetime], ...] = ()  # jobs `after` it: name, planned start

    def late_past(self, moment: dt.datetime) -> float:
        """The share of runs that finish after `moment`."""
        slack = (moment - self.planned_end) / HOUR
        return float(np.mean(self.finish_hours > slack + 1e-9))

    @property
    def miss_probability(self) -> float:
        return self.late_past(self.deadline)


@dataclass(frozen=True)
class Simulation:
    runs: int
    seed: int
    planned_cost: Decimal
    total_cost: np.ndarray  # per run
    risks: tuple[SpotRisk, ...]

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.total_cost, q))


def _billed(hours: np.ndarray, billing: HourlyBilling) -> np.ndarray:
    """Rule 4 (`planner.rules.billed_hours`, the one rule) on arrays of whole held hours:
    each distinct value billed once, then spread back."""
    values, inverse = np.unique(hours, return_inverse=True)
    assert np.all(values == np.round(values)), "held hours are whole hours"
    billed = np.array([float(billed_hours(int(v), billing)) for v in values])
    result: np.ndarray = billed[inverse].reshape(np.shape(hours))
    return result


def _losses(
    rng: np.random.Generator, rate: float, useful: float, c: float, r: float, n: int
) -> np.ndarray:
    """Hours lost per run: Σ over N ~ Poisson(λ·W) preemptions of (U·c + r), U ~ U(0, 1)."""
    counts = rng.poisson(rate * useful, size=n)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(n)
    uniforms = rng.random(total)
    owner = np.repeat(np.arange(n), counts)
    lost = np.bincount(owner, weights=uniforms, minlength=n) * c
    return lost + counts * r


def _extend(
    scenario: Scenario, w: TrainWorkload, a: Assignment, extra: np.ndarray, billing: HourlyBilling
) -> tuple[np.ndarray, np.ndarray]:
    """Finish (hours after the planned end) and extra billed unit-hours per run, when the
    work takes `extra` hours more (or less) than planned."""
    last = a.runs[-1]
    held = (last.end - last.start) / HOUR
    planned = _billed(np.array([held]), billing)  # the last rental as the plan bills it
    # what the last run needs: its held hours less the part of its last hour left unused
    # (occupied hours are whole: compute and setup rounded up), which absorbs extra work first
    slack = sum((r.end - r.start) / HOUR for r in a.runs) - (a.compute_hours + a.setup_hours)
    needed = held - max(slack, 0.0)
    if w.daily_hours is None:
        new_held = np.maximum(1.0, np.ceil(needed + extra - 1e-9))
        return new_held - held, _billed(new_held, billing) - planned
    # Daily window: fill the rest of today's window, then whole windows, setup each day.
    window = float(w.daily_hours.hours)
    setup = a.setup_hours / max(len(a.runs), 1)
    useful = max(window - setup, 1e-9)
    room = window - needed
    today = np.maximum(1.0, np.ceil(needed + np.minimum(extra, room) - 1e-9))
    finish = np.where(extra <= room, today - held, 0.0)
    cost = _billed(today, billing)
    cost -= planned
    over = np.maximum(extra - room, 0.0)
    days = np.ceil(over / useful - 1e-9)
    leftover = over - (days - 1) * useful
    spill = days > 0
    finish = np.where(spill, 24.0 * days - held + np.ceil(setup + leftover - 1e-9), finish)
    whole = _billed(np.array([window]), billing)[0]
    last_day = _billed(np.ceil(setup + leftover - 1e-9), billing)
    cost = cost + np.where(spill, np.maximum(days - 1, 0) * whole + last_day, 0.0)
    return finish, cost


def simulate(
    scenario: Scenario,
    plan: Plan,
    runs: int = 1000,
    seed: int = 0,
    on_progress: Callable[[int, int], None] | None = None,
) -> Simulation:
    """Replay the plan's spot assignments `runs` times; the rest of the plan is fixed."""
    rng = np.random.default_rng(seed)
    workloads = {w.name: w for w in scenario.spec.workloads}
    spot = [a for a in plan.train if a.mode == "spot"]
    starts = {a.workload: a.start for a in plan.train}
    total = np.full(runs, float(plan.total_cost))
    risks = []
    for done, a in enumerate(spot, 1):
        w = workloads[a.workload]
        assert isinstance(w, TrainWorkload) and w.checkpoint_every is not None
        offer = scenario.offers[a.offer]
        assert offer.spot is not None
        rate = offer.spot.preemptions_per_hour
        c, r = w.checkpoint_every / 60, offer.spot.restart_minutes / 60
        factor = spot_factor(rate, w.checkpoint_every, offer.spot.restart_minutes)
        useful = a.compute_hours * factor
        compute = useful + _losses(rng, rate, useful, c, r, runs)
        finish, unit_hours = _extend(scenario, w, a, compute - a.compute_hours, offer.spot)
        units = math.ceil(a.cards / offer.unit_cards)
        extra_cost = unit_hours * units * float(unit_price(offer, "spot"))
        total += extra_cost
        axis = scenario.axis
        deadline = axis.instant(axis.hour_of_local(w.deadline) if w.deadline else axis.hours)
        risks.append(
            SpotRisk(
                a.workload,
                a.offer,
                a.compute_hours,
                useful,
                rate,
                deadline,
                a.end,
                compute,
                finish,
                extra_cost,
                tuple(
                    (v.name, starts[v.name])
                    for v in scenario.spec.workloads
                    if isinstance(v, TrainWorkload) and a.workload in v.after and v.name in starts
                ),
            )
        )
        if on_progress is not None:
            on_progress(done, len(spot))
    return Simulation(runs, seed, plan.total_cost, total, tuple(risks))


def summary(sim: Simulation, currency: str) -> dict[str, object]:
    """The simulation as plain data: the plan's cost spread and each spot workload's risk."""

    def money(value: float) -> float:
        return round(value, 2)

    return {
        "runs": sim.runs,
        "seed": sim.seed,
        "currency": currency,
        "planned_cost": float(sim.planned_cost),
        "cost": {
            "mean": money(float(np.mean(sim.total_cost))),
            "p50": money(sim.percentile(50)),
            "p95": money(sim.percentile(95)),
            "max": money(float(np.max(sim.total_cost))),
            "std": money(float(np.std(sim.total_cost))),
        },
        "spot_workloads": [
            {
                "workload": r.workload,
                "offer": r.offer,
                "preemptions_per_hour": r.preemptions_per_hour,
                "planned_compute_hours": round(r.planned_hours, 3),
                "useful_hours": round(r.useful_hours, 3),
                "compute_hours": {
                    "mean": round(float(np.mean(r.compute_hours)), 3),
                    "p50": round(float(np.percentile(r.compute_hours, 50)), 3),
                    "p95": round(float(np.percentile(r.compute_hours, 95)), 3),
                },
                "planned_end": r.planned_end.isoformat(),
                "deadline": r.deadline.isoformat(),
                "finish_p50": (
                    r.planned_end + float(np.percentile(r.finish_hours, 50)) * HOUR
                ).isoformat(),
                "finish_p95": (
                    r.planned_end + float(np.percentile(r.finish_hours, 95)) * HOUR
                ).isoformat(),
                "miss_probability": round(r.miss_probability, 4),
                "successors": [
                    {
                        "workload": name,
                        "planned_start": start.isoformat(),
                        "delay_probability": round(r.late_past(start), 4),
                    }
                    for name, start in r.successors
                ],
                "extra_cost_mean": money(float(np.mean(r.extra_cost))),
                "extra_cost_p95": money(float(np.percentile(r.extra_cost, 95))),
            }
            for r in sim.risks
        ],
    }
