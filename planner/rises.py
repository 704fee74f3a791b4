"""A replica job's least cost alone on rented and committed hourly cards, counting the
setups of the replicas it starts inside a run of demand, as a dynamic program over its
replica counts (planner.bound's floors for plans that buy no optional package).

A plan holds some replicas of each config in each segment. In the first segment of a run
of demand every replica pays its opening (its setup, or the gap's hours if held through
it); inside a run, a config whose count rises by k started k replicas there, each paying
its setup hours. Dropping replicas costs nothing. The program follows, segment by segment,
the counts of a few `singled` configs one by one and of all the others together: a rise of
the others' total pays at least the least setup among the others usable there (the sum of
their rises is at least the rise of their sum), and each segment's others cover what the
singled ones leave at their least cost by that many replicas. Every plan is one of the
program's paths, so its least total bounds every plan: with no config singled it counts
only rises of the whole count; singling out a config also counts switches into it at a
constant count (another config's replicas dropped while its own start and pay).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from planner.cover import cheapest_mix, covers_by_count
from planner.prices import ReplicaRate
from planner.serving import ReplicaJob

# the others' replicas counted one by one up to this many; from it on, as one state
RISING_MOST = 16
# the most states the program keeps per segment (singled configs' counts × the others'):
# 10,000 prices the 75 services of a generated 300-workload quarter in about 6 s on 2 cores
STATES = 10_000
# the most states when the program decodes a schedule on the few configs a first path used
# (`least(..., states=DECODE_STATES)`): one service's program, run once per start
DECODE_STATES = 200_000
# sums of whole parts above this are not exact in float64: the program gives up
EXACT = 2**53


@dataclass(frozen=True)
class Priced:
    """A replica job's items (per config: capacity, whole parts per replica-hour) in a few
    variants, and per segment the variant that prices it."""

    items: tuple[tuple[tuple[int, int], ...], ...]
    of_segment: tuple[int, ...]


class Kinds(Protocol):
    """A replica job's segments grouped by their usable configs, demand and minimum."""

    @property
    def kinds(self) -> tuple[tuple[tuple[int, ...], int, int], ...]:
        """Per kind: its usable configs (indices), demand and minimum."""

    @property
    def of_segment(self) -> tuple[int, ...]:
        """Per segment: its kind, or -1 where inactive."""


# what a segment's step is made of, but an opening's leads (`least`'s `step`)
Step = tuple[int, int, tuple[int, ...], int]

Covers = dict[tuple[tuple[tuple[int, int], ...], int, int], list[list[float]] | None]


def least(
    job: ReplicaJob,
    segments: Sequence[tuple[int, int]],
    kinds: Kinds,
    items: Sequence[tuple[int, int]],
    paying: Sequence[ReplicaRate],
    covers: Covers,
    singled: tuple[int, ...] = (),
    path: list[tuple[int, np.ndarray, list[int] | None]] | None = None,
    states: int | None = None,
    priced: Priced | None = None,
    days: Sequence[int] | None = None,
) -> int | None:
    """`job`'s least cost alone over the horizon in whole parts of the items' scale, its
    configs (by index) `singled` counted one by one and the others together (module
    docstring); `items`: per config (capacity, whole parts per replica-hour), `paying`:
    per config its ReplicaRate; `covers`: the others' cover tables already worked out.
    None where a table or the states would be too large. `path`, where given, gets per
    active segment its index, the least cost of each state by its end, and the rises
    into it (None at an opening), for `schedule` to follow back. `states`: the most
    states kept per segment (default STATES). `priced`: the items per segment instead,
    where held cards carry a charge by segment (rented configs, which alone pay setups,
    cost the same in every variant). Where every usable config is singled, every
    switch between configs is counted, and the others' axis stops at 1 (no cover has
    any of theirs). `days`: per segment, its day; where given, a day inside a run whose
    segments repeat the day before's is not worked out again once that day moved every
    state by one sum (`_Repeats`): the program is the same, so the states are too, that
    sum higher."""
    alone = all(i in singled for usable, _, _ in kinds.kinds for i in usable)
    most = 1 if alone else max(RISING_MOST, *job.minimum, 1)  # no others: none of theirs
    tops = [max(job.bounds[job.configs[t]], default=0) for t in singled]
    shape = (*(top + 1 for top in tops), most + 1)
    if math.prod(shape) > (STATES if states is None else states):
        return None
    counts = np.indices(shape[:-1]) if singled else np.zeros((0,), dtype=int)
    openings = job.openings(segments)
    ramps = [
        np.arange(n, dtype=float).reshape([n if k == j else 1 for k in range(len(shape))])
        for j, n in enumerate(shape)
    ]  # per axis, its counts, shaped to broadcast
    costs: dict[tuple[object, ...], np.ndarray] = {}
    bounded = [job.bounds[job.configs[t]] for t in singled]  # by index: configs hash slowly

    def step(s: int) -> Step:
        """What segment `s`'s step is made of, but an opening's leads: its kind, hours,
        singled configs' bounds and charge variant."""
        a, b = segments[s]
        limits = tuple(bound[s] for bound in bounded)
        return kinds.of_segment[s], b - a, limits, 0 if priced is None else priced.of_segment[s]

    repeats = None if days is None else _Repeats(days, kinds, openings, step)
    total = 0
    state: np.ndarray | None = None
    skip = 0  # segments before this one are a repeated day, already accounted for

    def table(others: tuple[tuple[int, int], ...], demand: int) -> list[list[float]] | None:
        key = (others, demand, most)
        if key not in covers:
            covers[key] = covers_by_count(others, demand, most)
        return covers[key]

    for s in range(len(segments)):
        if s < skip:
            continue
        if repeats is not None and state is not None:
            shifted = repeats.enter(s, state, path)
            if shifted is not None:
                state, skip = shifted
                continue
        kind = kinds.of_segment[s]
        if kind < 0:
            if state is not None:  # a run ends: its least path
                low = float(state.min())
                if not low < math.inf:
                    return None
                total += int(low)
                state = None
            continue
        usable, demand, minimum = kinds.kinds[kind]
        made = step(s)
        _, hours, limits, variant = made
        opening = s in openings
        leads = tuple(paying[i].opening(openings[s]) for i in usable) if opening else None
        if priced is not None:
            items = priced.items[variant]
        # the days repeat: so do most segments' costs
        key = (made, leads)
        cost = costs.get(key)
        if cost is None:
            # per config, what one replica pays over the segment (and its opening, if one)
            lead = dict(zip(usable, leads or (0,) * len(usable), strict=True))
            span = {i: items[i][1] * (hours + lead[i]) for i in usable}
            others = [i for i in usable if i not in singled]
            # the others' covers: per hour inside a run (shared by every length), whole at
            # an opening
            each = {i: span[i] if opening else items[i][1] for i in others}
            found = table(tuple(sorted({(items[i][0], each[i]) for i in others})), demand)
            if found is None:
                return None
            found_hours = np.array(found, dtype=float) * (1 if opening else hours)
            cost = _segment(limits, singled, counts, items, span, found_hours, demand, minimum)
            costs[key] = cost
        if opening or state is None:
            state = cost
            if path is not None:
                path.append((s, state, None))
        else:
            rises = [paying[t].setup * items[t][1] for t in singled]
            setups = (paying[i].setup * items[i][1] for i in usable if i not in singled)
            rises.append(min(setups, default=0))  # the others': their least
            state = cost + _moved(state, rises, ramps)
            if path is not None:
                path.append((s, state, rises))
        if repeats is not None:
            repeats.leave(s, state, path)
    low = 0.0 if state is None else float(state.min())  # the last run, if still open
    if not low < math.inf or total + low >= EXACT:
        return None
    return total + int(low)


class _Repeats:
    """The days of a replica job's program that repeat the day before inside a run.

    The program's step over a day maps the states at its start to those at its end; it
    depends only on the day's segments (their kinds, hours, bounds and charge variants:
    what a segment's cost and rises are made of). Adding one sum to every state at the
    start adds it to every state along the day. So where a day moved every state by one
    sum c (the same states unreachable), the next day with the same segments moves them
    by c again: its states are the day before's plus c, not worked out again. A path
    through it (`followed`) takes the day before's states as they are: adding one sum to a
    segment's states changes none of its least ones."""

    def __init__(
        self,
        days: Sequence[int],
        kinds: Kinds,
        openings: dict[int, int | None],
        step: Callable[[int], Step],
    ) -> None:
        self.first: dict[int, int] = {}  # per day, its first segment
        self.last: dict[int, int] = {}  # and its last
        for s, day in enumerate(days):
            self.first.setdefault(day, s)
            self.last[day] = s
        self.days = days
        # per day inside a run (every segment active, none opening one): what its steps are
        self.made: dict[int, tuple[Step, ...]] = {}
        for day, first in self.first.items():
            span = range(first, self.last[day] + 1)
            if all(kinds.of_segment[s] >= 0 and s not in openings for s in span):
                self.made[day] = tuple(step(s) for s in span)
        self.started: np.ndarray | None = None  # the states at the start of this day
        self.moved: dict[int, float] = {}  # per day worked out: the one sum it moved by
        self.steps: dict[int, list[tuple[int, np.ndarray, list[int] | None]]] = {}

    def enter(
        self,
        s: int,
        state: np.ndarray,
        path: list[tuple[int, np.ndarray, list[int] | None]] | None,
    ) -> tuple[np.ndarray, int] | None:
        """At segment `s` inside a run: where it starts a day that repeats the day before,
        the states at that day's end and the segment after it (the day's steps added to
        `path`); otherwise None, and the day's start is kept."""
        day = self.days[s]
        if self.first[day] != s:
            return None
        self.started = state
        before = day - 1
        made = self.made.get(day)
        if made is None or made != self.made.get(before) or before not in self.moved:
            return None
        sum_ = self.moved[before]
        self.moved[day] = sum_
        self.started = None
        if path is not None:
            # the segments' own indices, the day before's states (their least are the same)
            steps = self.steps[before]
            offset = s - steps[0][0]  # (a repeated day's steps keep the first day's indices)
            path.extend((i + offset, states, rises) for i, states, rises in steps)
            self.steps[day] = steps
        return state + sum_, self.last[day] + 1

    def leave(
        self,
        s: int,
        state: np.ndarray,
        path: list[tuple[int, np.ndarray, list[int] | None]] | None,
    ) -> None:
        """After segment `s` worked out: where it ends a day inside a run, whether that
        day moved every state by one sum."""
        day = self.days[s]
        if self.last[day] != s:
            return
        start, self.started = self.started, None
        if day not in self.made or start is None:
            return
        reached = np.isfinite(state)
        if not reached.any() or not np.array_equal(reached, np.isfinite(start)):
            return
        moved = state[reached] - start[reached]
        if moved.min() == moved.max():
            self.moved[day] = float(moved[0])
            if path is not None:
                self.steps[day] = path[self.first[day] - self.last[day] - 1 :]


def ranked(
    job: ReplicaJob,
    segments: Sequence[tuple[int, int]],
    kinds: Kinds,
    items: Sequence[tuple[int, int]],
) -> tuple[int, ...]:
    """The configs to single out: those the least covers of the job's segments use, by
    replica-hours (most first; ties by index), as many as keep the states within STATES.
    Any choice gives a bound; singling out more never lowers it."""
    hours = [0] * len(kinds.kinds)
    for s, kind in enumerate(kinds.of_segment):
        if kind >= 0:
            hours[kind] += segments[s][1] - segments[s][0]
    used = [0] * len(job.configs)
    for kind, (usable, demand, minimum) in enumerate(kinds.kinds):
        mix = cheapest_mix([items[i] for i in usable], demand, minimum)
        for i, n in zip(usable, mix or (), strict=False):
            used[i] += n * hours[kind]
    states = max(RISING_MOST, *job.minimum, 1) + 1
    singled = []
    for i in sorted((i for i in range(len(used)) if used[i]), key=lambda i: (-used[i], i)):
        top = max(job.bounds[job.configs[i]], default=0) + 1
        if states * top <= STATES:
            singled.append(i)
            states *= top
    return tuple(singled)


def _segment(
    limits: tuple[int, ...],
    singled: tuple[int, ...],
    counts: np.ndarray,
    items: Sequence[tuple[int, int]],
    span: dict[int, int],
    others: np.ndarray,
    demand: int,
    minimum: int,
) -> np.ndarray:
    """A segment's cost per state: the singled configs' replicas at `span` each (none
    where a config is not usable or over its bound there, `limits`), and the others' least
    cover of what they leave by each count (`others`: per count and demand carried)."""
    if not singled:
        cost = others[:, demand].copy()
        cost[: max(minimum, 0)] = math.inf
        return cost
    paid = np.zeros(counts.shape[1:])
    carried = np.zeros(counts.shape[1:], dtype=int)
    held = np.zeros(counts.shape[1:], dtype=int)
    allowed = np.ones(counts.shape[1:], dtype=bool)
    for k, t in enumerate(singled):
        x = counts[k]
        allowed &= x <= limits[k]
        paid += x * span.get(t, 0)
        carried += x * items[t][0]
        held += x
    left = np.clip(demand - carried, 0, demand)
    cost = np.moveaxis(others[:, left], 0, -1) + paid[..., None]  # (... singled, others)
    n = np.arange(others.shape[0])
    cost[(n + held[..., None] < minimum) | ~allowed[..., None]] = math.inf
    return cost


def _moved(state: np.ndarray, rises: list[int], ramps: list[np.ndarray]) -> np.ndarray:
    """The least cost of reaching each state from `state`, where along axis k a count that
    falls costs nothing and one that rises pays `rises[k]` per replica started (separable:
    one axis at a time). Reaching v from u ≤ v costs state[u] + rise × (v − u), so the
    least is rise × v + the running least of state[u] − rise × u. `ramps[k]`: axis k's
    counts, shaped to broadcast."""
    for k, rise in enumerate(rises):
        back = (slice(None),) * k + (slice(None, None, -1),)
        kept = np.minimum.accumulate(state[back], axis=k)[back]
        paid = ramps[k] * rise
        risen = np.subtract(state, paid)  # a new array, then worked on in place
        np.minimum.accumulate(risen, axis=k, out=risen)
        risen += paid
        state = np.minimum(kept, risen, out=risen)
    return state


def followed(path: list[tuple[int, np.ndarray, list[int] | None]]) -> dict[int, tuple[int, ...]]:
    """Per active segment, the state (singled counts, then the others' count) of a least
    path through `least`'s program, followed back from each run's end: ties go to the
    first state in C order."""
    out: dict[int, tuple[int, ...]] = {}
    after: tuple[int, ...] | None = None  # the state chosen in the next segment of the run
    rises: list[int] | None = None
    # a day that repeats shares the day before's states (`_Repeats`): the same states, rises
    # and state after them choose the same state (by the states' identity: the path keeps
    # them alive)
    chosen: dict[tuple[int, Toward | None], tuple[int, ...]] = {}
    for s, state, into in reversed(path):
        toward = None if after is None or rises is None else (tuple(rises), after)
        key = (id(state), toward)
        if key not in chosen:
            chosen[key] = _least_state(state, toward)
        after = chosen[key]
        out[s] = after
        rises = into
        if into is None:
            after = None  # an opening: the run before is followed from its own end
    return out


# the rises into the next segment and the state chosen there
Toward = tuple[tuple[int, ...], tuple[int, ...]]


def _least_state(state: np.ndarray, toward: Toward | None) -> tuple[int, ...]:
    """The least of `state` (ties: the first in C order); where `toward` = (rises, the
    next segment's state), reaching that state pays the rises along each axis."""
    pick = state
    if toward is not None:
        rises, after = toward
        for k, rise in enumerate(rises):
            shape = [1] * state.ndim
            shape[k] = state.shape[k]
            u = np.arange(state.shape[k]).reshape(shape)
            pick = pick + rise * np.maximum(after[k] - u, 0)
    flat = int(np.argmin(pick))
    return tuple(int(i) for i in np.unravel_index(flat, state.shape))


def schedule(
    job: ReplicaJob,
    kinds: Kinds,
    items: Sequence[tuple[int, int]],
    singled: tuple[int, ...],
    path: list[tuple[int, np.ndarray, list[int] | None]],
) -> dict[int, dict[int, int]] | None:
    """Per active segment, replicas per config (by index) along a least path of `least`'s
    program (`followed`): the singled configs' counts, and at least the path's count of
    the others, carrying what the singled ones leave at their least cost per hour
    (`cheapest_mix`; of configs alike in capacity and cost, the first). None where a mix is
    too large to work out."""
    mixes: dict[tuple[tuple[tuple[int, int], ...], int, int], tuple[int, ...] | None] = {}
    out = {}
    for s, state in followed(path).items():
        usable, demand, minimum = kinds.kinds[kinds.of_segment[s]]
        counts = {t: state[k] for k, t in enumerate(singled) if state[k]}
        others: dict[tuple[int, int], int] = {}
        for i in usable:
            if i not in singled:
                others.setdefault(items[i], i)
        left = max(0, demand - sum(items[t][0] * n for t, n in counts.items()))
        fewest = max(state[-1], minimum - sum(counts.values()), 0)
        key = (tuple(others), left, fewest)
        if key not in mixes:
            mixes[key] = cheapest_mix(key[0], left, fewest)
        mix = mixes[key]
        if mix is None:
            return None
        counts.update((i, n) for i, n in zip(others.values(), mix, strict=True) if n)
        out[s] = counts
    return out
