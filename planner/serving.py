"""Serve and reserve workloads as replica jobs over segments of constant demand.

A *replica job* needs, in every segment of the horizon where it is active, replicas whose
capacity covers its demand (requests in flight for `serve`, cards for `reserve`) and at
least its minimum count. Time is compressed into segments: the hours between two changes of
any replica job's demand, cut at every local 00:00 so package holdings stay constant within
one. Hours are real hours on the scenario's time axis; demand follows local wall-clock time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from planner.configs import ReplicaConfig, replica_configs, replica_modes
from planner.demand import hourly_demand
from planner.domain.scenario import Scenario
from planner.domain.timeaxis import TimeAxis
from planner.domain.values import instant_datetime
from planner.domain.workload import ReserveWorkload, ServeWorkload


@dataclass(frozen=True)
class ReplicaJob:
    """A serve or reserve workload: its configs and, per segment, demand and minimum."""

    name: str
    kind: str  # serve | reserve
    configs: tuple[ReplicaConfig, ...]
    demand: tuple[int, ...]  # per segment: requests in flight (serve) or cards (reserve)
    minimum: tuple[int, ...]  # per segment: replicas that must run (0 where inactive)
    hold: int = 0  # serve `min_hold_hours`: a replica started is held this long (0: no hold)
    within: tuple[bool, ...] = ()  # per segment: inside the workload's [start, end)
    # per config, the most replicas each segment may hold (`with_bounds`)
    bounds: dict[ReplicaConfig, tuple[int, ...]] = field(
        default_factory=dict, compare=False, hash=False
    )

    def need(self, config: ReplicaConfig, segment: int) -> int:
        """Replicas of `config` alone that carry the segment's demand and minimum."""
        return int(max(self.minimum[segment], -(-self.demand[segment] // config.capacity)))

    def with_bounds(
        self, segments: Sequence[tuple[int, int]], bridge: Callable[[ReplicaConfig], int]
    ) -> ReplicaJob:
        """This job with each config's most replicas per segment. Under a min hold: the
        config's peak need anywhere in the span (a hold keeps replicas no demand needs).
        Otherwise: the most any segment within `bridge(config)` hours before or after
        needs, between the first and last active segments. A replica kept through a dip
        beyond what the dip needs saves a start only where the dip is shorter than what a
        start can cost (rented: ceil(setup) unit-hours, plus under a minimum of `short`
        serving hours at most 2 × short rounded up to the rentals either side; held
        cards: starts are free, so 0); releasing it in a longer dip and starting it again
        costs no more money and holds fewer units. So these bounds lose no plan.
        """
        active = [s for s in range(len(self.demand)) if self.active(s)]
        bounds = {}
        # configs of one capacity (and reach) have one row: worked out once
        rows: dict[tuple[int, int], tuple[int, ...]] = {}
        for c in self.configs:
            reach = 0 if self.hold or not active else bridge(c)
            if (c.capacity, reach) not in rows:
                rows[c.capacity, reach] = self._bound_row(segments, active, c, reach)
            bounds[c] = rows[c.capacity, reach]
        return replace(self, bounds=bounds)

    def _bound_row(
        self,
        segments: Sequence[tuple[int, int]],
        active: list[int],
        config: ReplicaConfig,
        reach: int,
    ) -> tuple[int, ...]:
        """`with_bounds` for the configs of `config`'s capacity and bridge `reach`."""
        needs = [self.need(config, s) for s in range(len(self.demand))]
        if not active:
            return tuple(0 for _ in needs)
        if self.hold:
            peak = max(needs[s] for s in active)
            return tuple(peak if inside else 0 for inside in self.within)
        first, last = active[0], active[-1]
        row = [0] * len(segments)
        for s in range(first, last + 1):
            a, b = segments[s]
            lo = hi = s  # segments within `reach` hours, contiguous around s
            while lo > first and segments[lo - 1][1] > a - reach:
                lo -= 1
            while hi < last and segments[hi + 1][0] < b + reach:
                hi += 1
            row[s] = max(needs[lo : hi + 1])
        return tuple(row)

    def active(self, segment: int) -> bool:
        return self.demand[segment] > 0 or self.minimum[segment] > 0

    def openings(self, segments: Sequence[tuple[int, int]]) -> dict[int, int | None]:
        """The active segments that follow no active one, each with the hours since the
        last active segment ended (None for the first). Every replica there was started
        there or held through those hours, when the job needs nothing."""
        out: dict[int, int | None] = {}
        last: int | None = None  # the end of the last active segment
        for s, (a, b) in enumerate(segments):
            if not self.active(s):
                continue
            if s == 0 or not self.active(s - 1):
                out[s] = None if last is None else a - last
            last = b
        return out

    def held_from(self, segments: tuple[tuple[int, int], ...], segment: int) -> range:
        """Segments whose replicas, once started, must still be held in `segment`: those
        starting in (start(segment) − hold, start(segment)] (none past the workload's end).

        Exact for the hourly rule: counts change only at segment starts, so inside a
        segment the replicas started in the last `hold` hours are most at its first hour;
        and the segments are cut where the hold of a replica started at a segment start
        ends (`_hold_ends`), so no hold keeps its replicas past its own end."""
        if not self.hold or not self.within[segment]:
            return range(0)
        a = segments[segment][0]
        first = segment
        while first > 0 and segments[first - 1][0] > a - self.hold:
            first -= 1
        return range(first, segment + 1)

    def kept(self, segments: tuple[tuple[int, int], ...], series: list[int]) -> list[int]:
        """A config's replica counts per segment kept up until every replica started has
        been held `hold` hours (or to the workload's end): a count falls only to the
        replicas started in the last hold hours. Without a hold, `series` itself."""
        kept = list(series)
        if not self.hold:
            return kept
        started = [0] * len(kept)
        begun = [0] * (len(kept) + 1)  # replicas started before each segment
        first = 0  # the first segment starting within `hold` hours of segment s's start
        for s in range(len(kept)):  # as held_from, with one pointer for all segments
            recent = 0
            if self.within[s]:
                while segments[first][0] <= segments[s][0] - self.hold:
                    first += 1
                recent = begun[s] - begun[first]
            kept[s] = max(kept[s], recent)
            started[s] = max(0, kept[s] - (kept[s - 1] if s else 0))
            begun[s + 1] = begun[s] + started[s]
        return kept


def reserve_configs(scenario: Scenario, workload: ReserveWorkload) -> list[ReplicaConfig]:
    """One unit of every offer of a suitable card is a 'replica' carrying its cards."""
    configs = []
    for offer in scenario.offers.values():
        card = scenario.cards[offer.card]
        wanted = (
            (card.id == workload.card)
            if workload.card
            else (card.memory_gib.value >= (workload.min_memory_gib or 0))
        )
        if not wanted:
            continue
        for mode, held in replica_modes(scenario, offer):  # people's cards: never spot
            # rented: a whole unit; held: single cards of the held machines (rule 5)
            cards = 1 if held else offer.unit_cards
            configs.append(ReplicaConfig(card.id, cards, offer.id, mode, 1, "", cards, 0.0, held))
    return configs


def undominated(configs: list[ReplicaConfig], disks: bool = False) -> list[ReplicaConfig]:
    """Drop a config when another of the same offer and mode does its work for no more:
    one replica of it carries at least as much with no more of what it takes (units
    rented, or cards of held machines), or k replicas of it take exactly as much and carry
    at least as much (money, setup hours and stock are per unit or card, so the same; not
    where each replica pays a disk of its own, `disks`). Any plan using the dropped config
    is matched by the other."""

    def size(c: ReplicaConfig) -> int:
        return c.cards if c.held else c.units

    def beats(o: ReplicaConfig, c: ReplicaConfig) -> bool:
        if o is c or (o.offer, o.mode, o.held) != (c.offer, c.mode, c.held):
            return False
        if size(o) <= size(c) and o.capacity >= c.capacity:
            return (size(o), -o.capacity, o.cards) < (size(c), -c.capacity, c.cards)
        k, rest = divmod(size(c), size(o))
        return not disks and k >= 2 and not rest and k * o.capacity >= c.capacity

    return [c for c in configs if not any(beats(o, c) for o in configs)]


def _disks(scenario: Scenario, w: ServeWorkload) -> bool:
    """Whether each replica pays a disk of its own on some offer (rule 9)."""
    return bool(w.disk_gb) and any(
        o.disk_price_per_gb_month is not None for o in scenario.offers.values()
    )


def reserve_hours(scenario: Scenario, workload: ReserveWorkload) -> list[int]:
    """Cards needed at every hour: `cards` inside its hours on its days, from start to end.
    A window that crosses midnight belongs to the day it opens: the tail of one opened the
    day before `start` is not needed, and the one opened on the last day ends at `end`."""
    axis = scenario.axis
    first, last = axis.hour_of_local(workload.start), axis.hour_of_local(workload.end)
    first_day = instant_datetime(workload.start).date()
    levels = []
    for h in range(axis.hours):
        opened = axis.in_window(h, workload.hours)  # the local day its window opened
        day = None if opened is None else axis.date(opened)
        inside = day is not None and day >= first_day and day.weekday() in workload.days
        levels.append(workload.cards if inside and first <= h < last else 0)
    return levels


def segments_of(axis: TimeAxis, series: list[list[int]]) -> list[tuple[int, int]]:
    """Maximal hour ranges over which no series changes, cut at every local 00:00."""
    hours = axis.hours
    cuts = {0, hours} | {axis.day_start(d) for d in range(axis.days)}
    for levels in series:
        cuts |= {h for h in range(1, hours) if levels[h] != levels[h - 1]}
    return list(itertools.pairwise(sorted(cuts)))


def _hold_ends(
    segments: list[tuple[int, int]], holds: dict[str, int], spans: dict[str, list[int]]
) -> list[tuple[int, int]]:
    """`segments` also cut where the hold of a replica started at a segment start ends,
    inside its workload's span. Counts are constant over a segment, so a hold that ended
    inside one would keep its replicas to the segment's end: one replica needed 09-10
    under a 3 h hold is held 09-12, not through an idle 10-24 segment (or from 00:00)."""
    if not segments:
        return segments
    ends: set[int] = set()
    for name, hold in holds.items():
        span = spans[name]
        if not hold or not any(span):
            continue
        last = len(span) - span[::-1].index(1)  # the workload's end (or the horizon's)
        ends |= {a + hold for a, _ in segments if span[a] and a + hold < last}
    cuts = {a for a, _ in segments} | {segments[-1][1]} | ends
    return list(itertools.pairwise(sorted(cuts)))


def replica_jobs(
    scenario: Scenario, only: str | None = None
) -> tuple[list[tuple[int, int]], list[ReplicaJob]]:
    """Segments of the horizon and every serve and reserve workload as a replica job; or,
    given `only`, that workload alone on the segments of its own curve (what a quote of it
    alone needs: its costs do not depend on where other workloads' curves change)."""
    axis = scenario.axis
    raw: list[tuple[str, str, list[ReplicaConfig], list[int], list[int]]] = []
    spans: dict[str, list[int]] = {}  # per hour: 1 inside the workload's [start, end)
    for w in scenario.spec.workloads:
        if not isinstance(w, ServeWorkload | ReserveWorkload):
            continue
        if only is not None and w.name != only:
            continue
        first, last = axis.hour_of_local(w.start), axis.hour_of_local(w.end)
        spans[w.name] = [int(first <= h < last) for h in range(axis.hours)]
        if isinstance(w, ServeWorkload):
            demand = hourly_demand(scenario, w)
            minimum = [w.min_replicas * inside for inside in spans[w.name]]
            raw.append(
                (
                    w.name,
                    "serve",
                    undominated(replica_configs(scenario, w), _disks(scenario, w)),
                    demand,
                    minimum,
                )
            )
        else:
            demand = reserve_hours(scenario, w)
            minimum = [0] * len(demand)  # people need their cards, not a replica count
            raw.append((w.name, "reserve", reserve_configs(scenario, w), demand, minimum))
    holds = {
        w.name: w.min_hold_hours or 0
        for w in scenario.spec.workloads
        if isinstance(w, ServeWorkload) and w.name in spans
    }
    # a held workload's span is cut too, so its hold ends exactly at its end
    cuts = [spans[name] for name, hold in holds.items() if hold]
    segments = segments_of(axis, [series for *_, d, m in raw for series in (d, m)] + cuts)
    segments = _hold_ends(segments, holds, spans)
    jobs = [
        ReplicaJob(
            name,
            kind,
            tuple(configs),
            tuple(demand[a] for a, _ in segments),
            tuple(minimum[a] for a, _ in segments),
            holds.get(name, 0),
            tuple(bool(spans[name][a]) for a, _ in segments),
        )
        for name, kind, configs, demand, minimum in raw
    ]
    return segments, jobs
