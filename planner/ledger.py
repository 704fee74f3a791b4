"""What the greedy baselines (planner.baseline) have taken so far: units rented per hour,
package units bought and held, and which held unit (machine) each train job runs on.

Counting a pool's held units per hour is not enough (rule 5 on machines, the checker's
`planner.check.machines`): a train job stays on the same unit(s) from its first run to its
last, following a unit only into its renewal (a unit of the pool held from the hour it
ends). So the ledger also keeps every held unit as a `Machine` with the cards train jobs
use on it and when, and a job goes on held cards only where units carry it all along
(`Ledger.paths`; `Ledger.packages_needed` buys new units for it where none do): a job of
one unit's cards or fewer beside other jobs on one unit, a larger one on whole units.
Replicas may restart on another unit wherever anything on the pool starts or ends, so for
them counts per hour suffice: they take whole units, and `used` counts, per hour, those
and the units a train job runs on.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from operator import sub

from planner.configs import Config
from planner.problem import Problem
from planner.rules import packages_until

_TABLES = ("rented", "held", "used", "bought", "early", "machines")

Part = tuple[int, int, int]  # (machine index, from hour, to hour): a job's stay on one unit


@dataclass
class Machine:
    """One held unit from its start to its end (packages bought back to back: the same
    machine all along), with the cards train jobs use on it and when."""

    start: int
    end: int
    busy: list[tuple[int, int, int]] = field(default_factory=list)  # (from, to, cards)
    then: int | None = None  # the unit (index in its pool) that continues it, once chosen
    renews: bool = False  # whether it continues another unit

    def load(self, a: int, b: int) -> int:
        """The most cards train jobs use on it at an hour of [a, b)."""
        over = [(x, y, c) for x, y, c in self.busy if x < b and a < y]
        rises = {max(x, a) for x, _, _ in over}  # the load peaks where a run starts
        return max((sum(c for x, y, c in over if x <= t < y) for t in rises), default=0)

    def idle(self, a: int, b: int) -> list[tuple[int, int]]:
        """The ranges of [a, b) in which no train job runs on it."""
        out, t = [], a
        for x, y, _ in sorted(self.busy):
            if x >= b:
                break
            if x > t:
                out.append((t, x))
            t = max(t, y)
        return [*out, (t, b)] if t < b else out


@dataclass
class Ledger:
    """Units in use per (offer, mode) and per offer, and package units held, per hour."""

    problem: Problem
    rented: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    held: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    used: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    bought: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict)
    # units set up before the horizon starts (a replica serving from hour 0), by hour < 0
    early: dict[tuple[tuple[str, str], int], int] = field(default_factory=dict)
    # every held unit of a pool, in the order it was bought (commitments first)
    machines: dict[tuple[str, str], list[Machine]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for key, pool in self.problem.pools.items():
            for day, units in self.problem.committed_purchases(key).items():
                self.bought.setdefault(key, {})[day] = units
            for c in pool.committed:
                self.add(self.held, key, c.start, c.end, c.units)
                self.machines.setdefault(key, []).extend(
                    Machine(c.start, c.end) for _ in range(c.units)
                )

    def snapshot(self) -> Ledger:
        """A copy to try a placement on: `adopt` it if it works. Each table copied by its
        shape (a generic deep copy took half the heuristic's time, element by element)."""
        other = copy.copy(self)
        other.rented = {k: v.copy() for k, v in self.rented.items()}
        other.held = {k: v.copy() for k, v in self.held.items()}
        other.used = {k: v.copy() for k, v in self.used.items()}
        other.bought = {k: v.copy() for k, v in self.bought.items()}
        other.early = self.early.copy()
        other.machines = {
            k: [replace(m, busy=m.busy.copy()) for m in v] for k, v in self.machines.items()
        }
        return other

    def adopt(self, other: Ledger) -> None:
        for name in _TABLES:
            setattr(self, name, getattr(other, name))

    def line(self, table: dict[tuple[str, str], list[int]], key: tuple[str, str]) -> list[int]:
        """Hours up to 31 local days past the horizon: packages may run beyond it."""
        axis = self.problem.axis
        return table.setdefault(key, [0] * axis.after_days(axis.days, 31))

    def add(
        self,
        table: dict[tuple[str, str], list[int]],
        key: tuple[str, str],
        a: int,
        b: int,
        units: int,
    ) -> None:
        line = self.line(table, key)
        for h in range(max(a, 0), min(b, len(line))):  # hours the line keeps
            line[h] += units

    def take_hourly(self, offer: str, a: int, b: int, units: int) -> bool:
        """Rent `units` of an offer's hourly mode over [a, b) if its stock allows."""
        key = (offer, "hourly")
        stock = self.problem.offers[offer].billing("hourly").stock
        line = self.line(self.rented, key)
        committed = self.line(self.held, key)  # committed hourly units count against stock

        def level(x: int) -> int:
            return line[x] + committed[x] if x >= 0 else self.early.get((key, x), 0)

        if not units:
            return True
        if stock is not None and any(level(x) + units > stock for x in range(a, b)):
            return False
        if not self.cap_allows(offer, a, b, units):
            return False
        for x in range(a, b):
            if x >= 0:
                line[x] += units
            else:
                self.early[(key, x)] = self.early.get((key, x), 0) + units
        return True

    def offer_units(self, offer: str, hour: int) -> int:
        return sum(
            line[hour] for (o, _), line in [*self.rented.items(), *self.held.items()] if o == offer
        )

    def cap_allows(self, offer: str, a: int, b: int, units: int) -> bool:
        """Whether `units` more units of `offer`, on any mode, stay within its `max_units`
        over its modes at every hour of [a, b) the lines keep."""
        cap = self.problem.offers[offer].max_units
        if cap is None:
            return True
        last = self.problem.axis.after_days(self.problem.axis.days, 31)
        return all(
            self.offer_units(offer, h) + units <= cap for h in range(max(a, 0), min(b, last))
        )

    def rental_fits(self, config: Config, start: int) -> bool:
        stock = self.problem.offers[config.offer].billing(config.mode).stock
        line = self.line(self.rented, config.pool)
        held = self.line(self.held, config.pool)
        for offset, length in config.runs:
            a, b = start + offset, start + offset + length
            if stock is not None and any(
                line[h] + held[h] + config.units > stock for h in range(a, b)
            ):
                return False
            if not self.cap_allows(config.offer, a, b, config.units):
                return False
        return True

    def packages_needed(self, config: Config, start: int) -> tuple[int, int, int] | None:
        """(units, first day, count) of packages to buy so the pool covers the job, or None
        when stock forbids it. A job on one unit buys one where `paths` finds none; a job
        on several buys the larger of the largest shortfall of units per hour and the
        units `paths` lacks. It buys them from the job's first day to its last hour: new
        units are free all along, so the job then fits."""
        pool = self.problem.pools[config.pool]
        held, used = self.line(self.held, config.pool), self.line(self.used, config.pool)
        runs = [(start + offset, start + offset + length) for offset, length in config.runs]
        if config.units == 1:  # its cards on one unit, which may run other jobs too
            short = 0 if self.paths(config, start)[0] else 1
        else:  # whole units: as many more than run anything at every hour, and paths
            short = config.units + max(max(map(sub, used[a:b], held[a:b])) for a, b in runs)
            if short < config.units:
                short = max(short, config.units - len(self.paths(config, start)[0]))
        if short <= 0:
            return (0, 0, 0)
        if not pool.days:
            return None  # committed hourly cards cannot be topped up
        axis = self.problem.axis
        first = axis.day_of(start)
        count = packages_until(axis, first, pool.days, runs[-1][1])
        begin, end = axis.day_start(first), axis.after_days(first, count * pool.days)
        if pool.stock is not None and max(held[begin:end]) + short > pool.stock:
            return None
        if not self.cap_allows(config.offer, begin, end, short):
            return None
        return (short, first, count)

    def paths(self, config: Config, start: int) -> tuple[list[list[Part]], dict[int, int]]:
        """Up to `config.units` held units of its pool that can run the job in all its runs
        and are held, themselves or through renewals, from its first run to its last: as
        parts, and the renewals (unit → the unit that continues it) they claim. A job of
        several units takes each whole; a job of one takes its cards of a unit beside
        other jobs, where the unit then runs no more than its cards, and, at hours it
        would be the unit's first job, a unit is spare then (replicas take whole units
        no job runs on: `used` counts them and the units jobs run on). By rule: the units
        holding its first hour that end soonest first (longer ones stay for longer jobs),
        the first renewal that fits where a unit ends mid-run."""
        machines = self.machines.get(config.pool, [])
        size = self.problem.offers[config.offer].unit_cards
        held, used = self.line(self.held, config.pool), self.line(self.used, config.pool)
        cards = config.cards if config.units == 1 else size

        def fits(m: Machine, a: int, b: int) -> bool:
            if m.load(a, b) + cards > size:
                return False
            if config.units > 1:  # whole units: the counts per hour see them
                return True
            return all(used[h] < held[h] for x, y in m.idle(a, b) for h in range(x, y))

        runs = [(start + offset, start + offset + length) for offset, length in config.runs]
        first, last = runs[0][0], runs[-1][1]
        taken: set[int] = set()
        claims: dict[int, int] = {}
        dead: set[int] = set()  # renewals from which no path goes on: taking more cannot help
        found: list[list[Part]] = []
        for _, u in sorted((m.end, u) for u, m in enumerate(machines) if m.start <= first < m.end):
            if len(found) == config.units:
                break
            path = self._follow(machines, u, first, last, runs, fits, taken, claims, dead)
            if path is not None:
                found.append(path)
                taken |= {v for v, _, _ in path}
        return found, claims

    def _follow(
        self,
        machines: list[Machine],
        u: int,
        t: int,
        last: int,
        runs: list[tuple[int, int]],
        fits: Callable[[Machine, int, int], bool],
        taken: set[int],
        claims: dict[int, int],
        dead: set[int],
    ) -> list[Part] | None:
        """The parts holding the job on unit `u` from hour `t` and on its renewals to
        `last`, or None; renewals it chooses are added to `claims`, and those it finds no
        path from to `dead` (a path from a renewal never depends on the units before it,
        so each is tried once: daily units bought day after day would otherwise branch
        at every midnight)."""
        m = machines[u]
        end = min(m.end, last)
        clipped = [(max(a, t), min(b, end)) for a, b in runs]
        if u in taken or not all(fits(m, a, b) for a, b in clipped if a < b):
            return None
        here: list[Part] = [(u, t, end)]
        if m.end >= last:
            return here
        if m.then is not None:
            nexts = [m.then] if m.then not in dead else []
        else:
            claimed = set(claims.values())
            nexts = [
                s
                for _, s in sorted(
                    (n.end, s)
                    for s, n in enumerate(machines)
                    if n.start == m.end and not n.renews and s not in claimed | dead
                )
            ]
        for s in nexts:
            if m.then is None:
                claims[u] = s
            rest = self._follow(machines, s, m.end, last, runs, fits, taken, claims, dead)
            if rest is not None:
                return here + rest
            dead.add(s)
            claims.pop(u, None)
        return None

    def place(self, config: Config, start: int, packages: tuple[int, int, int] | None) -> None:
        """Take the job's units from `start`: on held cards, the units `paths` finds and
        then the units `packages` buys (fresh, free all along)."""
        if not config.held:
            for offset, length in config.runs:
                a = start + offset
                self.add(self.rented, config.pool, a, a + length, config.units)
            return
        found, claims = self.paths(config, start)
        before = len(self.machines.get(config.pool, []))
        if packages and packages[0]:
            units, first, count = packages
            self.buy(config.pool, first, count, units)
        machines = self.machines.get(config.pool, [])
        last = start + config.span
        found += [[(u, start, last)] for u in range(before, len(machines))]
        assert len(found) >= config.units, "a job placed without units for it"
        for u, s in claims.items():
            machines[u].then, machines[s].renews = s, True
        size = self.problem.offers[config.offer].unit_cards
        cards = config.cards if config.units == 1 else size
        for path in found[: config.units]:
            for u, x, y in path:
                for offset, length in config.runs:
                    a, b = max(x, start + offset), min(y, start + offset + length)
                    if a < b:
                        # `used` counts a unit once, from the first job on it at an hour
                        for p, q in machines[u].idle(a, b):
                            self.add(self.used, config.pool, p, q, 1)
                        machines[u].busy.append((a, b, cards))

    def run_ends(self, key: tuple[str, str]) -> set[int]:
        """The hours at which a train job's run on a held pool ends."""
        return {y for m in self.machines.get(key, []) for _, y, _ in m.busy}

    def buy(self, key: tuple[str, str], first: int, count: int, units: int) -> None:
        """`count` packages of `units` back to back from local day `first`, held 00:00 to
        00:00 in real hours."""
        days = self.problem.pools[key].days
        for k in range(count):
            day = first + k * days
            bought = self.bought.setdefault(key, {})
            bought[day] = bought.get(day, 0) + units
            self.add(self.held, key, *self.problem.package(key, day), units)
        begin = self.problem.package(key, first)[0]
        end = self.problem.package(key, first + (count - 1) * days)[1]
        self.machines.setdefault(key, []).extend(Machine(begin, end) for _ in range(units))
