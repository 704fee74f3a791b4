"""Train assignments (rules 1-4): a legal config, runs replayed hour by hour from the stated
start, window, deadline and `after` order, one rental per run off held cards."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise

from planner.check.contract import SLACK, held_cards_rule, setup_hours, train_rate, units_for
from planner.check.ledger import Ledger
from planner.check.rentals import Held, hour_of
from planner.check.result import CheckResult, no_offer
from planner.domain.costs import CostTerm
from planner.domain.plan import Assignment, Plan
from planner.domain.scenario import Scenario
from planner.domain.workload import TrainWorkload
from planner.estimate.core import GIB
from planner.estimate.memory import for_card, train_memory, workload_setup
from planner.estimate.precision import supports

Runs = list[tuple[int, int]]
# A plan shows compute and setup hours to 4 decimals: a stated figure within one unit of the
# 4th decimal of the exact one is that figure rounded (float noise included).
FIGURE_SLACK = Fraction(1, 10**4)


@dataclass(frozen=True)
class Placed:
    """A train assignment the checker could read: its workload and real runs."""

    assignment: Assignment
    workload: TrainWorkload
    runs: Runs
    storage: Fraction
    rentals: list[str]  # the rentals that carry its runs, one per run (none on held cards)


def legal(scenario: Scenario, a: Assignment, w: TrainWorkload, result: CheckResult) -> bool:
    """Rule 1 and the estimates: the offer sells the card and mode, the cards sit in one node
    (unless the offer has a network), spot only for checkpointed work, memory fits."""
    offer = scenario.offers.get(a.offer)
    subject = a.workload
    if offer is None:
        result.add("config", subject, 1, "", no_offer(a.offer))
        return False
    if offer.card != a.card or a.mode not in offer.modes:
        result.add("config", subject, 1, "", f"offer {a.offer} does not rent {a.card} {a.mode}")
        return False
    why = None
    if a.cards < 1 or (w.max_cards is not None and a.cards > w.max_cards):
        why = f"{a.cards} card(s) is outside 1..{w.max_cards}"
    elif a.cards > offer.node_cards and offer.network is None:
        why = f"{a.cards} cards exceed one {offer.node_cards}-card node; {a.offer} has no network"
    elif a.mode == "spot" and w.checkpoint_every is None:
        why = "spot needs checkpoint_every"
    elif not supports(scenario.cards[a.card], w.precision):
        why = f"{a.card} does not support {w.precision}"
    elif held_why := held_cards_rule(scenario, a.offer, a.mode, a.held):
        why = held_why
    if why:
        result.add("config", subject, 1, "", why)
        return False
    setup = workload_setup(w, scenario.spec.usable_memory_fraction, scenario.spec.memory_margin)
    model = scenario.models[w.name]
    setup = for_card(setup, scenario, model, a.card, w.method)
    memory = train_memory(model, scenario.cards[a.card], a.cards, setup)
    if not memory.fits:
        over = -memory.headroom / GIB
        result.add(
            "memory", subject, over, "GiB", f"memory over by {over:.1f} GiB on {a.cards}× {a.card}"
        )
        return False
    return True


def replay(
    scenario: Scenario, w: TrainWorkload, first: int, compute: Fraction, setup: Fraction, held: bool
) -> Runs | str:
    """Rules 2-3 by walking hours: from `first`, every hour (every window hour) the job holds
    its cards; a run pays its setup first (on held cards only once), then works; the run
    ends with the hour in which its work is done. A reason if it cannot finish."""
    axis = scenario.axis
    window = w.daily_hours
    if window is not None and axis.in_window(first, window) is None:
        return "starts outside its daily window"
    runs: Runs = []
    remaining, setup_left = compute, setup
    run_start: int | None = None
    run_day: int | None = None  # the day whose window the current run is in
    stalled, h, before = 0, first, compute
    while h < axis.hours + 24 * 400:
        day = axis.in_window(h, window) if window is not None else None
        if window is not None and run_start is not None and day != run_day:
            # one run per window: "00:00-24:00" windows abut, yet each day is its own run
            runs.append((run_start, h))
            run_start = None
            stalled = stalled + 1 if remaining == before else 0
            if stalled >= 2:
                return "its daily window is too short for its setup: no progress"
        if window is not None and day is None:
            h += 1
            continue
        if run_start is None:
            run_start, run_day, before = h, day, remaining
            if runs and not held:
                setup_left = setup  # each day's rental downloads again
        spent = min(setup_left, Fraction(1))
        setup_left -= spent
        remaining -= min(remaining, 1 - spent)
        h += 1
        if remaining <= SLACK and setup_left <= SLACK:
            runs.append((run_start, h))
            return runs
    return "it does not finish within 400 days of the horizon end"


def check_train(
    scenario: Scenario,
    plan: Plan,
    held: dict[str, Held],
    used_rentals: dict[str, str],
    ledger: Ledger,
    result: CheckResult,
) -> dict[str, Placed]:
    """Every train workload assigned once, legally, on time, each run on its own rental or on
    held cards; returns what could be placed."""
    axis = scenario.axis
    placed: dict[str, Placed] = {}
    seen: set[str] = set()
    for a in plan.train:
        w = next((x for x in scenario.spec.workloads if x.name == a.workload), None)
        if not isinstance(w, TrainWorkload) or a.workload in seen:
            result.add("workload", a.workload, 1, "", "no such train workload, or assigned twice")
            continue
        seen.add(a.workload)
        if not legal(scenario, a, w, result):
            continue
        runs = [
            (
                hour_of(scenario, result, r.start, a.workload),
                hour_of(scenario, result, r.end, a.workload),
            )
            for r in a.runs
        ]
        if not runs or any(x is None or y is None for x, y in runs):
            result.add("duration", a.workload, 1, "", "no runs on the hour grid")
            continue
        stated: Runs = [(x, y) for x, y in runs if x is not None and y is not None]
        offer = scenario.offers[a.offer]
        compute, efficiency, factor = train_rate(
            scenario, w, offer, scenario.cards[a.card], a.cards, a.mode
        )
        setup = setup_hours(scenario, offer, w.name)
        _timing(scenario, a, w, stated, result)  # on the runs as stated, whatever follows
        # runs that are not the replay's are one violation; the runs as stated are still
        # what the plan orders, and are checked against every other rule below
        expected = replay(scenario, w, stated[0][0], compute, setup, a.held)
        if isinstance(expected, str):
            result.add(
                "window" if "window" in expected else "duration", a.workload, 1, "", expected
            )
        elif expected != stated:
            _differ(scenario, a.workload, stated, expected, result)
        if expected != stated and not _in_order(stated):  # nothing more can be read
            _claim(a, held, used_rentals)
            continue
        if a.hours != sum(y - x for x, y in stated):
            result.add(
                "duration",
                a.workload,
                a.hours - sum(y - x for x, y in stated),
                "h",
                "hours differ from its runs",
            )
        _stated_figures(scenario, a, stated, compute, setup, result)
        starts = 1 if a.held else len(stated)
        ledger.report(CostTerm.SETUP, setup * starts * a.cards)
        ledger.report(CostTerm.SCALING_LOSS, compute * a.cards * (1 - Fraction(efficiency)))
        ledger.report(CostTerm.SPOT_REWORK, compute * a.cards * (1 - Fraction(factor)))
        carried: list[str] = []
        if a.held:
            for x, y in stated:
                ledger.use((a.offer, a.mode), x, y, a.cards)
        else:
            carried = _rentals_of_runs(scenario, a, stated, held, used_rentals, result)
            if expected != stated:  # a rental the edit left behind is said once, above,
                _claim(a, held, used_rentals)  # and its money stays this workload's
                carried += [
                    r
                    for r in dict.fromkeys(a.rentals)
                    if r not in carried and used_rentals.get(r) == a.workload
                ]
        for rental_id in sorted(set(a.rentals)):
            extra = a.rentals.count(rental_id) - carried.count(rental_id)
            if rental_id not in held and not a.held:
                result.add(
                    "rental",
                    a.workload,
                    a.rentals.count(rental_id),
                    "rentals",
                    f"lists rental {rental_id}, which is not among the plan's rentals",
                )
            elif extra > 0 and expected == stated:  # its money would be counted here
                result.add(
                    "rental",
                    a.workload,
                    extra,
                    "rentals",
                    f"lists rental {rental_id} {extra} time(s) more than the runs it carries",
                )
        storage = Fraction(0)
        if offer.disk_price_per_gb_month is not None and w.disk_gb:
            # the whole span: disks of stopped instances keep billing (rule 9)
            span = stated[-1][1] - stated[0][0]
            storage = Fraction(offer.disk_price_per_gb_month) * Fraction(w.disk_gb) * span / 720
            month = f"{axis.local(stated[0][0]):%Y-%m}"
            ledger.pay(("storage", a.workload), CostTerm.STORAGE, storage, month)
        placed[a.workload] = Placed(a, w, stated, storage, carried)
    for w in scenario.spec.workloads:
        if isinstance(w, TrainWorkload) and w.name not in seen:
            result.add("workload", w.name, 1, "", "not done: no assignment")
    _dependencies(placed, result)
    return placed


def _in_order(runs: Runs) -> bool:
    """Runs of at least an hour each, each after the one before it."""
    return all(x < y for x, y in runs) and all(prev[1] <= nxt[0] for prev, nxt in pairwise(runs))


def _claim(a: Assignment, held: dict[str, Held], used_rentals: dict[str, str]) -> None:
    """The rentals an assignment lists, counted as used by it where its runs could not be
    matched to them (its runs break a rule already said): not also "used by no run"."""
    for rental_id in a.rentals:
        if rental_id in held:
            used_rentals.setdefault(rental_id, a.workload)


def _differ(
    scenario: Scenario, name: str, stated: Runs, expected: Runs, result: CheckResult
) -> None:
    """Runs that are not rule 3's from their first start: the first that differs, and the
    hours missing (or, where the totals agree, those of the runs misplaced)."""
    k = next(
        (i for i, (s, e) in enumerate(zip(stated, expected, strict=False)) if s != e),
        min(len(stated), len(expected)),
    )
    # the hours short (or over); where the totals agree, the hours of runs misplaced
    due = sum(y - x for x, y in expected)
    short = due - sum(y - x for x, y in stated)
    hours = short or sum(y - x for x, y in set(stated) - set(expected))
    said = _fmt(scenario, stated[k : k + 1]) if k < len(stated) else "none"
    wanted = _fmt(scenario, expected[k : k + 1]) if k < len(expected) else "none"
    result.add(
        "duration",
        name,
        hours,
        "h",
        f"run {k + 1} is {said} but should be {wanted} (a job's runs follow from its first "
        f"start: {len(expected)} run(s), {due} h)",
    )


def _timing(
    scenario: Scenario, a: Assignment, w: TrainWorkload, runs: Runs, result: CheckResult
) -> None:
    axis = scenario.axis
    earliest = axis.hour_of_local(w.earliest_start) if w.earliest_start else 0
    if runs[0][0] < earliest:
        result.add(
            "window",
            a.workload,
            earliest - runs[0][0],
            "h",
            f"starts {earliest - runs[0][0]} h before its earliest start",
        )
    deadline = axis.hour_of_local(w.deadline) if w.deadline else axis.hours
    if runs[-1][1] > deadline:
        late = runs[-1][1] - deadline
        result.add("deadline", a.workload, late, "h", f"deadline missed by {late} h")


def _stated_figures(
    scenario: Scenario,
    a: Assignment,
    runs: Runs,
    compute: Fraction,
    setup: Fraction,
    result: CheckResult,
) -> None:
    """Rules 1-2 as the plan states them: the assignment runs from its first run's start to
    its last run's end, and its compute and setup hours are rule 2's (to the 4 decimals a
    plan shows them with)."""
    start = hour_of(scenario, result, a.start, a.workload)
    end = hour_of(scenario, result, a.end, a.workload)
    if start is not None and end is not None and (start, end) != (runs[0][0], runs[-1][1]):
        result.add(
            "duration",
            a.workload,
            abs(end - runs[-1][1]) + abs(start - runs[0][0]),
            "h",
            f"states {_fmt(scenario, [(start, end)])}; its runs go from "
            f"{_fmt(scenario, [(runs[0][0], runs[-1][1])])}",
        )
    for name, stated, exact in (
        ("compute", a.compute_hours, compute),
        ("setup", a.setup_hours, setup),
    ):
        if abs(Fraction(stated) - exact) > FIGURE_SLACK:
            result.add(
                "duration",
                a.workload,
                float(Fraction(stated) - exact),
                "h",
                f"states {stated} {name} hours, recomputed {float(exact):.4f}",
            )


def _dependencies(placed: dict[str, Placed], result: CheckResult) -> None:
    for name, p in placed.items():
        for before in p.workload.after:
            if before in placed:
                gap = placed[before].runs[-1][1] - p.runs[0][0]
                if gap > 0:
                    result.add(
                        "dependency", name, gap, "h", f"starts {gap} h before {before} finishes"
                    )


def _rentals_of_runs(
    scenario: Scenario,
    a: Assignment,
    runs: Runs,
    held: dict[str, Held],
    used_rentals: dict[str, str],
    result: CheckResult,
) -> list[str]:
    """Rule 4: each run is its own rental of this offer and mode with enough units, held
    exactly over the run, listed by the assignment and serving no other run. The rentals
    that carry the runs."""
    offer = scenario.offers[a.offer]
    units = units_for(offer, a.cards)
    carried: list[str] = []
    for k, (x, y) in enumerate(runs):
        match = None
        for rental_id in a.rentals:
            h = held.get(rental_id)
            if h is None or rental_id in used_rentals or h.rental.committed:
                continue
            if (
                (h.start, h.end, h.rental.offer, h.rental.mode) == (x, y, a.offer, a.mode)
                and h.rental.units >= units
                and h.rental.workload in (None, a.workload)
            ):
                match = h
                break
        if match is None:
            result.add(
                "rental",
                a.workload,
                y - x,
                "h",
                f"run {k + 1} ({_fmt(scenario, [(x, y)])}) has no rental of its own of "
                f"{units} unit(s) of {a.offer} {a.mode}",
            )
            continue
        used_rentals[match.rental.id] = a.workload
        carried.append(match.rental.id)
    return carried


def _fmt(scenario: Scenario, runs: Runs) -> str:
    return ", ".join(f"{scenario.axis.text(x)} to {scenario.axis.text(y)}" for x, y in runs)
