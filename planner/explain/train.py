"""Conflicts of one train workload on its own, decided from the estimates and the rules:
it fits no card's memory; its fastest config is too slow for its window (its own, or the
one `after` leaves it); or every config needs more units at once than the stock sells."""

from __future__ import annotations

import datetime as dt
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

from planner.configs import COUNTS, Config, train_configs
from planner.domain.catalog import Offer
from planner.domain.scenario import Scenario
from planner.domain.workload import TrainWorkload
from planner.estimate.core import usable_bytes
from planner.estimate.memory import for_card, train_memory, workload_setup
from planner.estimate.precision import supports
from planner.explain.conflict import (
    NO_OFFERS,
    Conflict,
    Kind,
    Relaxation,
    by_value,
    gib,
    merged,
    plural,
    stamp,
    stock_patch,
    when,
    within_limits,
    workload_patch,
)
from planner.prices import unit_price
from planner.problem import Infeasible, Job, build_problem, quote_job
from planner.rules import PACKAGE_MODES, package_hours, setup_hours

MAX_CHAINS = 8  # deadlines tried when `after` pulled a job's deadline in


def train_conflicts(scenario: Scenario, jobs: Sequence[Job]) -> list[Conflict]:
    """A conflict for every train job (windows tightened) that cannot run even alone."""
    conflicts = []
    for job in jobs:
        if job.configs:
            found = stock(scenario, job)
        else:
            found = memory(scenario, job.workload) or window(scenario, jobs, job)
        if found is not None:
            conflicts.append(found)
    return conflicts


# --- memory ---------------------------------------------------------------------------------


def memory(scenario: Scenario, w: TrainWorkload) -> Conflict | None:
    """No card × count that `train_configs` may use fits the job's memory per card; None if
    one does. The memory per card does not depend on the card, only on the count."""
    model = scenario.models[w.name]
    fraction = scenario.spec.usable_memory_fraction
    setup = workload_setup(w, fraction, scenario.spec.memory_margin)
    offers = _rentable(scenario, w)
    if not offers:
        sold = ", ".join(sorted({o.card for o in scenario.offers.values()}))
        needed = f"a card that computes in {w.precision}, on a mode it may use"
        available = (
            f"none of {sold}" + (", but on spot" if _spot_only(scenario, w) else "")
            if sold
            else NO_OFFERS
        )
        spot = tuple(_checkpointed(scenario, w))
        return Conflict("memory", (w.name,), needed, available, spot)
    options = [(o, n) for o in offers for n in COUNTS if _allowed(w, o.node_cards, o.network, n)]
    if any(_fits(scenario, w, o.card, n) for o, n in options):
        return None
    most = max(n for _, n in options)
    card = max((scenario.cards[o.card] for o in offers), key=lambda c: c.memory_gib.value)
    estimate = train_memory(model, card, most, for_card(setup, scenario, model, card.id, w.method))
    need = estimate.need  # what the margin asks for
    above = next((n for n in COUNTS if n > most), None)
    if above is None:
        why = "the most any job may use"
    elif w.max_cards and above > w.max_cards:
        why = f"max_cards {w.max_cards}"
    else:
        why = "one node: no offer of a card that fits has a `network`"
    shape = f"{w.method}, {w.precision}, sequence {w.seq_len} × micro-batch {w.micro_batch}"
    if estimate.margin:
        shape += f"; with the {estimate.margin:+.0%} memory margin"
    needed = f"{gib(need)} per card at {plural(most, 'card')}, its most ({why}; {shape})"
    available = (
        f"{gib(usable_bytes(card, fraction))} usable on the largest card it may rent "
        f"({card.id}: {card.memory_gib.value:g} GiB × {fraction:.0%})"
    )
    relaxations = [*_more_cards(scenario, w, most), *_checkpointed(scenario, w)]
    relaxations.append(
        Relaxation(f"a card with at least {gib(need)} usable ({gib(need / fraction)} reported)")
    )
    return Conflict("memory", (w.name,), needed, available, tuple(relaxations))


def _rentable(scenario: Scenario, w: TrainWorkload) -> list[Offer]:
    """Offers of a card that computes in the job's precision, on a mode it may use (spot
    only with checkpoints)."""
    return [
        o
        for o in scenario.offers.values()
        if supports(scenario.cards[o.card], w.precision)
        and any(m != "spot" or w.checkpoint_every is not None for m in o.modes)
    ]


def _spot_only(scenario: Scenario, w: TrainWorkload) -> list[Offer]:
    """Offers of a card that computes in its precision, sold only on spot, if it has no
    checkpoints."""
    if w.checkpoint_every is not None:
        return []
    return [
        o
        for o in scenario.offers.values()
        if supports(scenario.cards[o.card], w.precision) and set(o.modes) == {"spot"}
    ]


def _checkpointed(scenario: Scenario, w: TrainWorkload) -> list[Relaxation]:
    """Checkpoints every 30 minutes, where a card sold only on spot holds the job: kept if
    the job then has a config (verified by building the changed scenario's problem)."""
    holding = sorted(
        {
            o.card
            for o in _spot_only(scenario, w)
            for n in COUNTS
            if _allowed(w, o.node_cards, o.network, n) and _fits(scenario, w, o.card, n)
        }
    )
    patch = workload_patch(w.name, checkpoint_every="30m")
    if not holding or not _has_configs(within_limits(scenario, patch), w.name):
        return []
    text = f"checkpoints (checkpoint_every: 30m) to run on spot, where {', '.join(holding)} hold it"
    return [Relaxation(text, patch)]


def _allowed(w: TrainWorkload, node_cards: int, network: object, count: int) -> bool:
    """The counts `train_configs` tries: up to max_cards, within a node unless networked."""
    return not (w.max_cards and count > w.max_cards) and (
        count <= node_cards or network is not None
    )


def _fits(scenario: Scenario, w: TrainWorkload, card: str, count: int) -> bool:
    setup = workload_setup(w, scenario.spec.usable_memory_fraction, scenario.spec.memory_margin)
    model = scenario.models[w.name]
    setup = for_card(setup, scenario, model, card, w.method)
    return train_memory(model, scenario.cards[card], count, setup).fits


def _more_cards(scenario: Scenario, w: TrainWorkload, most: int) -> list[Relaxation]:
    """The fewest cards above `most` that fit on some offer: allowed by raising max_cards
    where the offer's node (or network) holds them, else named as needing a network."""
    offers = _rentable(scenario, w)
    for n in (n for n in COUNTS if n > most):
        fitting = [o for o in offers if _fits(scenario, w, o.card, n)]
        if not fitting:
            continue
        if any(n <= o.node_cards or o.network is not None for o in fitting):
            text = f"allow {n} cards" + (f" (max_cards {w.max_cards})" if w.max_cards else "")
            return [Relaxation(text, workload_patch(w.name, max_cards=n))]
        cards = ", ".join(sorted({o.card for o in fitting}))
        return [Relaxation(f"{n} cards of {cards} across nodes (an offer with a `network`)")]
    return []


# --- the window -----------------------------------------------------------------------------


def window(scenario: Scenario, jobs: Sequence[Job], job: Job) -> Conflict:
    """The job fits memory but no config finishes inside its window (tightened along
    `after`): the fastest config's earliest finish against the deadline, and the deadline
    that would let it finish (moved at the end of the chain of `after` that set it)."""
    axis = scenario.axis
    w = job.workload
    kind: Kind = "dependency" if quote_job(scenario, w.name).configs else "deadline"
    fastest = _fastest(scenario, job)
    if job.deadline > job.earliest:
        available = f"{job.deadline - job.earliest:,} h from {when(axis, job.earliest)} to "
        available += when(axis, job.deadline)
    else:  # what comes before leaves it no window at all
        available = f"none: it may start at {when(axis, job.earliest)}, " + (
            f"{job.earliest - job.deadline:,} h past its deadline {when(axis, job.deadline)}"
            if job.earliest > job.deadline
            else "its deadline"
        )
    available += _tightened(scenario, jobs, job)
    if fastest is None:
        return _no_config(scenario, job, kind, available)
    config, start = fastest
    finish = start + config.span
    if config.starts is None:
        needed = (
            f"{config.span:,} h from {when(axis, start)} on its fastest config "
            f"({config.label()}: {float(config.compute_hours):,.1f} h of work + "
            f"{float(config.setup_hours):.2f} h setup, rounded up to whole hours)"
        )
    else:
        needed = (
            f"{len(config.runs)} daily windows of {w.daily_hours}, {config.span:,} h from its "
            f"start at {when(axis, start)}, on its fastest config ({config.label()})"
        )
    relaxation = _later_deadline(scenario, jobs, job, finish - job.deadline)
    more = _more_cards_in_time(scenario, job)  # or more cards, where max_cards binds
    return Conflict(kind, (w.name,), needed, available, (*relaxation, *more))


def _no_config(scenario: Scenario, job: Job, kind: Kind, available: str) -> Conflict:
    """No config can finish at any deadline: each needs more units than its offer sells,
    or (windowed) a day's window is shorter than its setup, or no window opens between its
    earliest start and the horizon end."""
    w = job.workload
    configs = _lifted(scenario, job)
    if configs:
        found = stock(scenario, replace(job, configs=tuple(configs)))
        if found is not None:
            return found
    axis = scenario.axis
    window = w.daily_hours
    # from the day before: a window that crosses midnight is open in the first hours
    windows = [] if window is None else [axis.window(d, window) for d in range(-1, axis.days)]
    left = [(max(a, job.earliest), min(b, axis.hours)) for a, b in windows]
    left = [(a, b) for a, b in left if a < b]
    if left:
        model = scenario.models[w.name]
        setup = min(setup_hours(o, model, w.setup_minutes) for o in _rentable(scenario, w))
        if any(b - a > setup for a, b in windows if b > a):
            # windows hold more than a setup: the hours left before the horizon ends are
            # too few for the work on any config
            hours = sum(b - a for a, b in left)
            due = sum(max(0, min(b, job.deadline) - a) for a, b in left)
            needed = (
                "more window hours than are left: no config finishes its work in them "
                "(its fastest card and count included)"
            )
            since = f"of {window} windows from {when(axis, job.earliest)} to"
            available = f"{hours:,} h {since} the horizon's end"
            if job.deadline < axis.hours:  # a deadline before it leaves fewer
                deadline = when(axis, job.deadline)
                available = f"{due:,} h {since} its deadline {deadline} ({hours:,} h to its end)"
            return Conflict(kind, (w.name,), needed, available, _more_cards_in_time(scenario, job))
        needed = f"a daily window longer than its setup ({float(setup):.2f} h at the least)"
        return Conflict(kind, (w.name,), needed, f"{window} each day")
    needed = f"a window hour at or after {when(axis, job.earliest)}"
    available = "none before the horizon ends"
    return Conflict(kind, (w.name,), needed, available)


def _more_cards_in_time(scenario: Scenario, job: Job) -> tuple[Relaxation, ...]:
    """The fewest cards above `max_cards` on which the job finishes inside its window (from
    its earliest start to its deadline, tightened as it is), on units its offer's stock
    holds; none where `max_cards` does not bind or no count does."""
    w = job.workload
    if w.max_cards is None:
        return ()
    committed = {(c.offer, c.mode) for c in scenario.spec.commitments}
    for n in (n for n in COUNTS if n > w.max_cards):
        more = w.model_copy(update={"max_cards": n, "deadline": None})
        for config in train_configs(scenario, job.index, more, committed):
            start = _first_start(scenario, job, config)
            if start is not None and start + config.span <= job.deadline:
                text = f"allow {n} cards (max_cards {w.max_cards})"
                return (Relaxation(text, workload_patch(w.name, max_cards=n)),)
    return ()


def _first_start(scenario: Scenario, job: Job, config: Config) -> int | None:
    """The config's first start at or after the job's earliest one, where its offer's stock
    holds its units (None: never usable, or no start left)."""
    cap = scenario.offers[config.offer].most_units(config.mode)
    if cap is not None and config.units > cap:
        return None  # more units at once than its offer sells
    return next((s for s in (config.starts or (job.earliest,)) if s >= job.earliest), None)


def _lifted(scenario: Scenario, job: Job) -> list[Config]:
    """The job's configs with its deadline lifted to the horizon end (runs may end after)."""
    lifted = job.workload.model_copy(update={"deadline": None})
    committed = {(c.offer, c.mode) for c in scenario.spec.commitments}
    return train_configs(scenario, job.index, lifted, committed)


def _fastest(scenario: Scenario, job: Job) -> tuple[Config, int] | None:
    """The config and start that finish earliest from the job's (tightened) earliest start,
    its deadline lifted to the horizon end (runs may end after it), among the configs whose
    units the stock can hold."""
    best: tuple[int, Config, int] | None = None
    for config in _lifted(scenario, job):
        start = _first_start(scenario, job, config)
        if start is not None and (best is None or start + config.span < best[0]):
            best = (start + config.span, config, start)
    return None if best is None else (best[1], best[2])


def _own_deadline(scenario: Scenario, w: TrainWorkload) -> int:
    axis = scenario.axis
    return axis.hour_of_local(w.deadline) if w.deadline else axis.hours


def _successors(jobs: Sequence[Job], job: Job) -> list[Job]:
    return [j for j in jobs if job.index in j.after]


def _chains(scenario: Scenario, jobs: Sequence[Job], job: Job) -> list[list[Job]]:
    """Paths along `after` from the job to each job after it, nearest first; the job alone
    first when its own deadline is the one in force, last when a later job's pulled it in."""
    paths, queue, seen = [], deque([[job]]), {job.index}
    while queue:
        path = queue.popleft()
        for nxt in _successors(jobs, path[-1]):
            if nxt.index not in seen:
                seen.add(nxt.index)
                paths.append([*path, nxt])
                queue.append([*path, nxt])
    own = _own_deadline(scenario, job.workload) == job.deadline
    return [[job], *paths] if own else [*paths, [job]]


def _tightened(scenario: Scenario, jobs: Sequence[Job], job: Job) -> str:
    """What `after` did to the window, said in words ('' when nothing)."""
    axis = scenario.axis
    w = job.workload
    notes = []
    own_start = axis.hour_of_local(w.earliest_start) if w.earliest_start else 0
    if job.earliest > own_start:
        before = ", ".join(jobs[p].name for p in job.after)
        notes.append(f"it opens when {before} can have finished at the earliest")
    if job.deadline < _own_deadline(scenario, w):
        later = [s.name for s in _successors(jobs, job)]
        whose = "its deadline" if len(later) == 1 else "their deadlines"
        notes.append(f"it closes early enough for {', '.join(later)} to run before {whose}")
    return f" ({'; '.join(notes)})" if notes else ""


def _later_deadline(
    scenario: Scenario, jobs: Sequence[Job], job: Job, extra: int
) -> tuple[Relaxation, ...]:
    """The job's deadline, or the one at the end of a chain of `after` that pulled it in,
    moved by the `extra` hours the fastest config lacks (past the horizon end: the horizon
    extended too); the first such move that gives the job a config, verified by building
    the changed scenario's problem."""
    axis = scenario.axis
    for chain in _chains(scenario, jobs, job)[:MAX_CHAINS]:
        last = chain[-1]
        hour = _own_deadline(scenario, last.workload) + extra
        patch = workload_patch(last.name, deadline=stamp(axis, hour))
        text = f"move the deadline of {last.name} to {when(axis, hour)} (+{extra:,} h)"
        if len(chain) > 1:
            text += f", at the end of the chain {' → '.join(j.name for j in chain)}"
        if hour > axis.hours:
            local = axis.local(hour)
            end = local.date() + dt.timedelta(days=0 if local.time() == dt.time() else 1)
            patch = merged({"horizon": {"end": end.isoformat()}}, patch)
            text = f"extend the horizon to {end} and {text}"
        if _has_configs(within_limits(scenario, patch), job.name):
            return (Relaxation(text, patch),)
    return ()


def _has_configs(scenario: Scenario | None, name: str) -> bool:
    if scenario is None:  # the change is past the input limits
        return False
    try:
        problem = build_problem(scenario, serving=True)
    except Infeasible as exc:
        return any(j.configs for j in exc.jobs if j.name == name)
    return any(j.configs for j in problem.jobs if j.name == name)


# --- stock ----------------------------------------------------------------------------------


def stock(scenario: Scenario, job: Job) -> Conflict | None:
    """Every config needs more units at once than its offer and mode sell (stock, or the
    offer's cap over all modes): None if one fits."""
    caps = {c.pool: scenario.offers[c.offer].most_units(c.mode) for c in job.configs}
    limited = {pool: cap for pool, cap in caps.items() if cap is not None}
    if len(limited) < len(caps) or any(c.units <= limited[c.pool] for c in job.configs):
        return None
    fewest = min(job.configs, key=lambda c: (c.units, c.offer, c.mode))
    needed = f"{plural(fewest.units, 'unit')} at once on its smallest config ({fewest.label()})"
    sold = [(f"{o} {m}", plural(cap, "unit")) for (o, m), cap in sorted(limited.items())]
    available = f"the most sold at once: {by_value(sold)}"
    cheapest = min(job.configs, key=lambda c: (_price(scenario, c), c.offer, c.mode))
    return Conflict("stock", (job.name,), needed, available, (_more_stock(scenario, cheapest),))


def _price(scenario: Scenario, config: Config) -> Fraction:
    """What the job alone pays on the config: its rentals, or whole packages covering its
    span (nominal lengths: a ranking, not a bill)."""
    if not config.held:
        return config.cost
    if config.mode not in PACKAGE_MODES:
        return config.storage_cost  # committed hourly units: paid as the commitment
    packages = -(-config.span // package_hours(config.mode))
    price = unit_price(scenario.offers[config.offer], config.mode)
    return price * config.units * packages + config.storage_cost


def _more_stock(scenario: Scenario, config: Config) -> Relaxation:
    """Raise the stock (and the offer's cap over its modes) to the config's units plus what
    commitments hold there: enough for the job alone."""
    offer = scenario.offers[config.offer]
    commitments = scenario.spec.commitments
    need = config.units + sum(c.units for c in commitments if (c.offer, c.mode) == config.pool)
    cap_need = config.units + sum(c.units for c in commitments if c.offer == offer.id)
    stock_now, cap_now = offer.billing(config.mode).stock, offer.max_units
    parts, new_stock, new_cap = [], None, None
    if stock_now is not None and stock_now < need:
        new_stock = need
        parts.append(
            f"add {plural(need - stock_now, 'unit')} of {offer.id} {config.mode} stock "
            f"(it needs {need} at once, stock {stock_now})"
        )
    if cap_now is not None and cap_now < cap_need:
        new_cap = cap_need
        parts.append(f"raise the max_units of {offer.id} from {cap_now} to {cap_need}")
    return Relaxation(" and ".join(parts), stock_patch(offer.id, config.mode, new_stock, new_cap))
