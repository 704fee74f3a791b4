"""Workloads that fit alone but not together. CP-SAT finds an infeasible core over the
train jobs' presence literals; serve and reserve workloads (always present) are narrowed
by leaving each out in turn; then the smallest deadline move and the smallest stock raise
that let the core run together are searched by bisection, each step a re-solve. Every
relaxation reported was verified by a solve that found a plan for the core; the search
stops at a budget of solves (and, unless deterministic, of seconds)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from planner.cpsat.model import CpModel, SolverSettings
from planner.cpsat.variables import replica_bound
from planner.domain.scenario import Scenario
from planner.domain.workload import TrainWorkload
from planner.explain.conflict import (
    Conflict,
    Relaxation,
    by_value,
    patched,
    plural,
    stamp,
    stock_patch,
    when,
    within_limits,
    workload_patch,
)
from planner.problem import Infeasible, Problem, build_problem

MAX_PROBES = 40  # solves one explanation may run
EXPLAIN_SECONDS = 20.0  # wall-clock cap on them, at most the time limit (not deterministic)
PROBE_SECONDS = 2.0  # per solve (deterministic units with --deterministic), at most the limit
MAX_CORES = 3  # disjoint conflicts reported at most


@dataclass
class Probes:
    """The budget of re-solves: each answers whether named train jobs can all be present
    (others free to be left out), and when not, which of them cannot."""

    settings: SolverSettings
    left: int = MAX_PROBES
    until: float | None = None
    # the model of the last problem checked: only the assumptions change between checks
    model: tuple[Problem, CpModel] | None = None

    @classmethod
    def start(cls, settings: SolverSettings) -> Probes:
        limit = min(settings.time_limit, PROBE_SECONDS)
        seconds = min(settings.time_limit, EXPLAIN_SECONDS)  # no more than the solve had
        until = None if settings.deterministic else time.monotonic() + seconds
        return cls(replace(settings, time_limit=limit, workers=1), MAX_PROBES, until)

    def ok(self) -> bool:
        return self.left > 0 and (self.until is None or time.monotonic() < self.until)

    def check(self, problem: Problem, names: Sequence[str]) -> tuple[str, list[str]]:
        self.left -= 1
        index = {j.name: j.index for j in problem.jobs}
        settings = self.settings
        if self.until is not None:
            left = max(self.until - time.monotonic(), 0.1)
            settings = replace(settings, time_limit=min(settings.time_limit, left))
        if self.model is None or self.model[0] is not problem:
            self.model = (problem, CpModel(problem, require_all=False))
        return self.model[1].explain(settings, [index[n] for n in names])

    def run(self, scenario: Scenario, names: Sequence[str]) -> tuple[str, list[str]]:
        try:
            problem = build_problem(scenario, serving=True)
        except Infeasible:
            self.left -= 1
            return "infeasible", []
        return self.check(problem, names)

    def fits(self, scenario: Scenario, names: Sequence[str]) -> bool:
        return self.run(scenario, names)[0] in ("optimal", "feasible")


def joint_conflicts(problem: Problem, settings: SolverSettings) -> list[Conflict]:
    """Disjoint sets of workloads that cannot all be planned together, each with the
    relaxations found; one conflict naming every workload if no core is found in time."""
    probes = Probes.start(settings)
    trains = [j.name for j in problem.jobs]
    status, core = probes.check(problem, trains)
    if status != "infeasible":
        return [_unexplained(problem)]
    conflicts: list[Conflict] = []
    seen: set[str] = set()
    while True:
        conflicts.append(_core_conflict(probes, problem, core))
        seen |= set(core)
        rest = [n for n in trains if n not in seen]
        if not core or not rest or len(conflicts) >= MAX_CORES or not probes.ok():
            return conflicts
        status, core = probes.check(problem, rest)
        if status != "infeasible" or not core:
            return conflicts


def _unexplained(problem: Problem) -> Conflict:
    names = tuple(w.name for w in problem.scenario.spec.workloads)
    return Conflict(
        "joint",
        names,
        "every workload planned",
        "the solver proved that no plan fits every deadline, window, dependency and stock "
        "limit together, and found no smaller conflicting set in time",
    )


def _core_conflict(probes: Probes, problem: Problem, core: list[str]) -> Conflict:
    # Narrowed on the smallest scenario first: serve and reserve workloads make most of a
    # model, and a model without them is solved in a fraction of the time.
    scenario, replicas = _needed_replicas(probes, problem.scenario, core)
    if len(core) > 1:
        core = _minimal(probes, build_problem(scenario, serving=True), core)
        scenario = _unlinked_out(scenario, core)
    needed, available = _describe(problem, core, replicas)
    relaxations = _later_deadline(probes, scenario, core) + _more_stock(
        probes, scenario, problem, core, replicas
    )
    return Conflict("joint", (*core, *replicas), needed, available, relaxations)


def _minimal(probes: Probes, problem: Problem, core: list[str]) -> list[str]:
    """The solver's core need not be minimal: each job left out in turn, dropped if the
    rest still cannot all be planned (kept when the budget runs out first)."""
    kept = list(core)
    for name in core:
        if len(kept) > 1 and probes.ok():
            rest = [n for n in kept if n != name]
            status, smaller = probes.check(problem, rest)
            if status == "infeasible":
                kept = [n for n in rest if n in smaller]
    return kept


def _needed_replicas(
    probes: Probes, scenario: Scenario, core: list[str]
) -> tuple[Scenario, list[str]]:
    """The serve and reserve workloads the core needs to be infeasible, and the scenario
    without the others and without the train jobs `after` does not link to the core (left
    out, they constrain nothing). All replicas are left out first (they make most of the
    model), then each in turn, kept if the rest then fit (or if the budget runs out)."""
    scenario = _unlinked_out(scenario, core)
    replicas = [w.name for w in scenario.spec.workloads if w.kind != "train"]
    if not replicas:
        return scenario, []
    if probes.ok() and len(replicas) < len(scenario.spec.workloads):  # a file has one at least
        bare = _without(scenario, replicas)
        if probes.run(bare, core)[0] == "infeasible":
            return bare, []
    kept: list[str] = []
    for name in replicas:
        if probes.ok() and len(scenario.spec.workloads) > 1:
            trial = _without(scenario, [name])
            if probes.run(trial, core)[0] == "infeasible":
                scenario = trial
                continue
        kept.append(name)
    return scenario, kept


def _without(scenario: Scenario, names: list[str]) -> Scenario:
    if not names:
        return scenario
    return patched(scenario, {"workloads": [{"name": n, "delete": True} for n in names]})


def _unlinked_out(scenario: Scenario, core: list[str]) -> Scenario:
    """Without the train jobs `after` does not link to the core: absent, they constrain
    nothing the core does."""
    linked = _linked(scenario, core)
    return _without(
        scenario,
        [w.name for w in scenario.spec.workloads if w.kind == "train" and w.name not in linked],
    )


def _linked(scenario: Scenario, core: list[str]) -> set[str]:
    """The core and every train job linked to it by `after`, either way, transitively."""
    edges = [
        (w.name, before)
        for w in scenario.spec.workloads
        if isinstance(w, TrainWorkload)
        for before in w.after
    ]
    linked, grown = set(core), True
    while grown:
        more = {b for a, b in edges if a in linked} | {a for a, b in edges if b in linked}
        grown = not more <= linked
        linked |= more
    return linked


def _describe(problem: Problem, core: list[str], replicas: list[str]) -> tuple[str, str]:
    """What the core needs (each job's fastest run in its window, each service's peak) and
    the limits its configs share (stock, offer caps)."""
    axis = problem.axis
    needs, pools = [], set()
    for job in (j for j in problem.jobs if j.name in core):
        fastest = min(c.span for c in job.configs)
        needs.append(
            f"{job.name}: {fastest:,} h (its fastest) between {when(axis, job.earliest)} and "
            f"{when(axis, job.deadline)}"
        )
        pools |= {c.pool for c in job.configs}
    for r in (r for r in problem.replica_jobs if r.name in replicas):
        what = "request" if r.kind == "serve" else "card"
        needs.append(f"{r.name}: up to {plural(max(r.demand), what)} at once")
        pools |= {(c.offer, c.mode) for c in r.configs}
    limits = []
    for offer_id, mode in sorted(pools):
        stock = problem.offers[offer_id].billing(mode).stock
        if stock is not None:
            limits.append((f"{offer_id} {mode}", f"stock {plural(stock, 'unit')}"))
    for offer_id in sorted({o for o, _ in pools}):
        cap = problem.offers[offer_id].max_units
        if cap is not None:
            limits.append((offer_id, f"max_units {cap}"))
    available = by_value(limits) or "their windows and the dependencies between them"
    return "; ".join(needs) or "the commitments", available


def _smallest(fits: Callable[[int], bool], high: int) -> int | None:
    """The smallest n in [1, high] with fits(n), fits monotone; None if not even high."""
    if high < 1 or not fits(high):
        return None
    low = 1
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if fits(mid) else (mid + 1, high)
    return low


def _later_deadline(probes: Probes, scenario: Scenario, core: list[str]) -> tuple[Relaxation, ...]:
    """The smallest move of one core job's deadline (within the horizon) that lets the core
    run together; the candidates searched below the best move found so far."""
    axis = scenario.axis
    best: tuple[int, str, dict[str, Any]] | None = None
    for name in core:
        w = scenario.workload(name)
        assert isinstance(w, TrainWorkload)  # cores name train jobs
        own = axis.hour_of_local(w.deadline) if w.deadline else axis.hours
        room = axis.hours - own if best is None else min(axis.hours - own, best[0] - 1)

        def fits(extra: int, name: str = name, own: int = own) -> bool:
            patch = workload_patch(name, deadline=stamp(axis, own + extra))
            changed = within_limits(scenario, patch)
            return probes.ok() and changed is not None and probes.fits(changed, core)

        extra = _smallest(fits, room)
        if extra is not None:
            hour = own + extra
            text = f"move the deadline of {name} to {when(axis, hour)} (+{extra} h)"
            best = (extra, text, workload_patch(name, deadline=stamp(axis, hour)))
    return () if best is None else (Relaxation(best[1], best[2]),)


def _patches(
    offer: str, mode: str | None, stock: int | None, cap: int | None
) -> Callable[[int], dict[str, Any]]:
    """k → the patch adding k units to the stock of `offer`'s `mode` and/or to its cap (each
    where given)."""

    def patch(k: int) -> dict[str, Any]:
        return stock_patch(
            offer,
            mode or "",
            None if stock is None else stock + k,
            None if cap is None else cap + k,
        )

    return patch


def _more_stock(
    probes: Probes, scenario: Scenario, problem: Problem, core: list[str], replicas: list[str]
) -> tuple[Relaxation, ...]:
    """The fewest units that let the core run together: added to an offer's `max_units`
    alone, to one stock its configs use, or to both; on a tie the change of fewer figures
    (the cap alone, then the stock alone), then offer and mode."""
    usable: dict[tuple[str, str], int] = {}  # pool → most units the core could hold there
    for job in (j for j in problem.jobs if j.name in core):
        for c in job.configs:
            usable[c.pool] = usable.get(c.pool, 0) + c.units
    for r in (r for r in problem.replica_jobs if r.name in replicas):
        for rc in r.configs:
            peak = max(replica_bound(r, rc, s) for s in range(len(r.demand))) * rc.units
            usable[(rc.offer, rc.mode)] = usable.get((rc.offer, rc.mode), 0) + peak
    # (units added, figures changed, text, patch); each candidate searched below the best
    best: tuple[int, int, str, dict[str, Any]] | None = None

    def smallest(room: int, patch_of: Callable[[int], dict[str, Any]]) -> int | None:
        room = room if best is None else min(room, best[0])

        def fits(k: int) -> bool:
            changed = within_limits(scenario, patch_of(k))
            return probes.ok() and changed is not None and probes.fits(changed, core)

        return _smallest(fits, room)

    def consider(k: int | None, figures: int, text: str, patch: dict[str, Any]) -> None:
        nonlocal best
        if k is not None and (best is None or (k, figures) < best[:2]):
            best = (k, figures, text, patch)

    for offer_id in sorted({offer_id for offer_id, _ in usable}):  # the cap alone
        cap = scenario.offers[offer_id].max_units
        if cap is None:
            continue
        room = sum(units for (o, _), units in usable.items() if o == offer_id)
        raised = _patches(offer_id, None, None, cap)
        k = smallest(room, raised)
        if k is not None:
            consider(k, 1, f"raise the max_units of {offer_id} from {cap} to {cap + k}", raised(k))
    for (offer_id, mode), most in sorted(usable.items()):
        offer = scenario.offers[offer_id]
        stock, cap = offer.billing(mode).stock, offer.max_units
        if stock is None:
            continue
        added = _patches(offer_id, mode, stock, None)
        k = smallest(most, added)
        text = f"of {offer_id} {mode} stock (stock {stock})"
        if k is not None:
            consider(k, 1, f"add {plural(k, 'unit')} {text}", added(k))
        if cap is None:
            continue
        both = _patches(offer_id, mode, stock, cap)
        k = smallest(most, both)
        if k is not None:
            said = f"add {plural(k, 'unit')} {text} and raise its max_units from {cap} to {cap + k}"
            consider(k, 2, said, both(k))
    return () if best is None else (Relaxation(best[2], best[3]),)
