"""Rule 5 on machines: the work on a pool of held cards must fit its machines, not only its
card count.

Counting cards per pool (`rentals.pools`) accepts plans no one can run: two 4-card jobs on
two different 8-card machines leave 8 cards free that one 8-card job cannot use, and a job
whose package ends mid-run must move to another machine. Here every held unit (a package's
or commitment's unit: an 8-card machine, or a 1-card container) is a machine held from its
start to its end; a unit bought on the day another ends may be its renewal (the same
machine, held on). The checker searches, with its own CP-SAT feasibility model, for a
placement in which

- a train job sits on the same unit(s) from its first run to its last (following a unit
  into its renewal), ceil(cards ÷ unit cards) units, each fully if it needs more than one;
- each replica of a use on held cards (a constant count over a time range) sits on one
  unit for as long as no unit of the pool starts or ends (it may restart elsewhere then:
  starts on held cards cost nothing);
- at every hour the cards that runs and replicas use on a unit are at most its cards.

No placement is a violation naming a smallest set of the pool's work that cannot be
placed together (`CheckResult.conflicts`, from which the solver learns). The search is
exact (CP-SAT proves infeasibility); one that runs out of time is a violation too, so a
plan is never passed unproven.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass

from ortools.sat.python import cp_model

from planner.check.rentals import Held
from planner.check.result import CheckResult
from planner.check.train import Placed
from planner.domain.plan import Plan, ReplicaAssignment
from planner.domain.scenario import Scenario

SECONDS = 30.0  # per pool; far more than the pools of a quarter need (benchmarks/RESULTS.md)


@dataclass(frozen=True)
class Unit:
    start: int
    end: int


@dataclass(frozen=True)
class Work:
    """Something placed on a pool's units: a train job (count 1, its runs) or a replica use
    (count replicas, one range)."""

    name: str
    runs: tuple[tuple[int, int], ...]
    cards: int
    count: int
    fixed: bool  # a train job: the same units all along; replicas may move between pieces


def check_machines(
    scenario: Scenario,
    plan: Plan,
    rentals: list[Held],
    placed: dict[str, Placed],
    result: CheckResult,
) -> None:
    units: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for h in rentals:
        if h.package or h.rental.committed:
            units[h.key] += [Unit(h.start, h.end)] * h.rental.units
    work: dict[tuple[str, str], list[Work]] = defaultdict(list)
    for name, p in placed.items():
        job = p.assignment
        if job.held and p.runs:
            work[(job.offer, job.mode)].append(Work(name, tuple(p.runs), job.cards, 1, True))
    for a in plan.assignments:
        if not isinstance(a, ReplicaAssignment):
            continue
        for i, u in enumerate(a.uses):
            if u.held:
                span = ((scenario.axis.hour(u.start), scenario.axis.hour(u.end)),)
                label = f"{a.workload} replicas #{i + 1}"
                work[(u.offer, u.mode)].append(Work(label, span, u.cards, u.replicas, False))
    for key in sorted(work):
        size = scenario.offers[key[0]].unit_cards
        held = units.get(key, [])
        status = place(held, work[key], size)
        if status == "placed":
            continue
        subject = f"{key[0]} {key[1]}"
        if status == "unknown":
            names = ", ".join(sorted(w.name for w in work[key]))
            message = f"no placement of {names} on its units was found or refuted in {SECONDS:g} s"
            result.add("machines", subject, 1, "", message)
            continue
        if status.startswith("uncovered"):
            result.add("machines", subject, 1, "", status.removeprefix("uncovered: "))
            continue
        core = _conflict(held, work[key], size)
        result.conflicts[key] = tuple(w.name for w in core)
        result.add(
            "machines",
            subject,
            1,
            "",
            f"the cards fit at every hour, but no placement on its {len(held)} unit(s) of "
            f"{size} card(s) runs {', '.join(w.name for w in core)} without moving one of "
            "them between units",
        )


def _conflict(units: list[Unit], work: list[Work], size: int) -> list[Work]:
    """A smallest-by-deletion set of `work` that cannot be placed: each member dropped in
    turn, kept only if the rest then fits."""
    core = list(work)
    for w in list(core):
        rest = [x for x in core if x is not w]
        if rest and place(units, rest, size) == "infeasible":
            core = rest
    return core


def place(units: list[Unit], work: list[Work], size: int) -> str:
    """ "placed", "infeasible", "unknown", or "uncovered: why" (work where no unit is held)."""
    model = cp_model.CpModel()
    cuts = sorted({t for u in units for t in (u.start, u.end)})
    # renewals: a unit may continue as one that starts when it ends, each at most once
    follow: dict[tuple[int, int], cp_model.IntVar] = {}
    for e, s in itertools.product(range(len(units)), repeat=2):
        if units[e].end == units[s].start:
            follow[(e, s)] = model.new_bool_var(f"renew[{e},{s}]")
    for e in range(len(units)):
        model.add(sum(x for (a, _), x in follow.items() if a == e) <= 1)
        model.add(sum(x for (_, b), x in follow.items() if b == e) <= 1)
    # a unit's load changes only where a run or a piece starts: its most is at one of those
    events = sorted({*cuts, *(x for w in work for x, _ in w.runs)})
    load: dict[tuple[int, int], list[cp_model.LinearExprT]] = defaultdict(list)  # (unit, hour)
    for w in work:
        need = 1 if w.cards <= size else -(-w.cards // size)
        each = min(w.cards, size)
        first, last = w.runs[0][0], w.runs[-1][1]
        bounds = [first, *(t for t in cuts if first < t < last), last]
        pieces = list(itertools.pairwise(bounds))
        on: list[dict[int, cp_model.IntVar]] = []
        for q, (a, b) in enumerate(pieces):
            cover = [u for u, unit in enumerate(units) if unit.start <= a and b <= unit.end]
            if not cover:
                return f"uncovered: {w.name} needs held cards at hours {a}-{b} when no unit is"
            top = w.count * need
            here = {u: model.new_int_var(0, top, f"on[{w.name},{q},{u}]") for u in cover}
            model.add(sum(here.values()) == top)
            hours = [t for x_, y_ in w.runs for t in events if max(x_, a) <= t < min(y_, b)]
            for u, x in here.items():
                if w.fixed:
                    model.add(x <= 1)
                for t in hours:
                    load[(u, t)].append(x * each)
            if w.fixed and on:
                _carry(model, on[-1], here, follow, units, a, f"{w.name},{q}")
            on.append(here)
    for parts in load.values():
        model.add(sum(parts) <= size)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = SECONDS
    solver.parameters.num_workers = 1
    status = solver.solve(model)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return "placed"
    return "infeasible" if status == cp_model.INFEASIBLE else "unknown"


def _carry(
    model: cp_model.CpModel,
    before: dict[int, cp_model.IntVar],
    after: dict[int, cp_model.IntVar],
    follow: dict[tuple[int, int], cp_model.IntVar],
    units: list[Unit],
    at: int,
    name: str,
) -> None:
    """A job on unit u before hour `at` is on u after it, or, where u ends at `at`, on the
    unit u is renewed into."""
    for u, x in before.items():
        if units[u].end > at:
            model.add(after[u] >= x)
            continue
        nexts = [(s, f) for (e, s), f in follow.items() if e == u and s in after]
        moved = []
        for s, f in nexts:
            z = model.new_bool_var(f"carry[{name},{u},{s}]")
            model.add(z <= f)
            model.add(z <= after[s])
            moved.append(z)
        model.add(sum(moved) >= x)
