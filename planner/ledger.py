"""What the greedy baselines (planner.baseline) have taken so far: units rented per hour,
package units bought and held, and which held unit (machine) each train job runs on.

Counting a pool's held units per hour is not enough (rule 5 on machines, the checker's
`planner.check.machines`): a train job stays on the same unit(s) from its first run to its
last, following a unit only into its renewal (a unit of the pool held from the hour it
ends). So the ledger also keeps every held unit as a `Machine` with the hours train jobs
run on it, and a job goes on held cards only where whole free units carry it all along
(`Ledger.packages_needed` buys new units for it where they do not). A job takes whole
units here, as in the counts, whatever its cards. Replicas may restart on another unit
wherever anything on the pool starts or ends, so for them the counts per hour suffice:
the units no train job runs on at an hour are free for them then.
"""

from __future__ import annotations

import bisect
import copy
from dataclasses import dataclass, field

from planner.configs import Config
from planner.problem import Problem
from planner.rules import packages_until

_TABLES = ("rented", "held", "used", "bought", "early", "machines")

Part = tuple[int, int, int]  # (machine index, from hour, to hour): a job's stay on one unit


@dataclass
class Machine:
    """One held unit from its start to its end (packages bought back to back: the same
    machine all along), with the hour ranges train jobs run on it."""

    start: int
    end: int
    busy: list[tuple[int, int]] = field(default_factory=list)  # sorted, disjoint
    then: int | None = None  # the unit (index in its pool) that continues it, once chosen
    renews: bool = False  # whether it continues another unit

    def free(self, a: int, b: int) -> bool:
        """No train job runs on it in [a, b)."""
        i = bisect.bisect_left(self.busy, (b, b))  # the ranges starting before b
        return i == 0 or self.busy[i - 1][1] <= a

    def occupy(self, a: int, b: int) -> None:
        bisect.insort(self.busy, (a, b))


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
        """A copy to try a placement on: `adopt` it if it works."""
        other = copy.copy(self)
        for name in _TABLES:
            setattr(other, name, copy.deepcopy(getattr(self, name)))
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

    def rental_fits(self, config: Config, start: int) -> bool:
        offer = self.problem.offers[config.offer]
        stock = offer.billing(config.mode).stock
        line = self.line(self.rented, config.pool)
        held = self.line(self.held, config.pool)
        for offset, length in config.runs:
            for h in range(start + offset, start + offset + length):
                if stock is not None and line[h] + held[h] + config.units > stock:
                    return False
                if offer.max_units is not None and (
                    self.offer_units(config.offer, h) + config.units > offer.max_units
                ):
                    return False
        return True

    def packages_needed(self, config: Config, start: int) -> tuple[int, int, int] | None:
        """(units, first day, count) of packages to buy so the pool covers the job, or None
        when stock forbids it. Buys, from the job's first day to its last hour, the larger
        of the largest shortfall of units per hour and the units the job lacks whole
        (`paths`): new units are free all along, so the job then fits both."""
        pool = self.problem.pools[config.pool]
        held, used = self.line(self.held, config.pool), self.line(self.used, config.pool)
        hours = [
            h
            for offset, length in config.runs
            for h in range(start + offset, start + offset + length)
        ]
        short = max(used[h] + config.units - held[h] for h in hours)
        if short < config.units:
            short = max(short, config.units - len(self.paths(config, start)[0]))
        if short <= 0:
            return (0, 0, 0)
        if not pool.days:
            return None  # committed hourly cards cannot be topped up
        axis = self.problem.axis
        first = axis.day_of(start)
        count = packages_until(axis, first, pool.days, hours[-1] + 1)
        begin, end = axis.day_start(first), axis.after_days(first, count * pool.days)
        if pool.stock is not None and any(held[h] + short > pool.stock for h in range(begin, end)):
            return None
        return (short, first, count)

    def paths(self, config: Config, start: int) -> tuple[list[list[Part]], dict[int, int]]:
        """Up to `config.units` held units of its pool, each free in all the job's runs and
        held, itself or through renewals, from its first run to its last: as parts, and the
        renewals (unit → the unit that continues it) they claim. By rule: the units holding
        its first hour that end soonest first (longer ones stay for longer jobs), the first
        free renewal where a unit ends mid-run."""
        machines = self.machines.get(config.pool, [])
        runs = [(start + offset, start + offset + length) for offset, length in config.runs]
        first, last = runs[0][0], runs[-1][1]
        taken: set[int] = set()
        claims: dict[int, int] = {}
        found: list[list[Part]] = []
        for _, u in sorted((m.end, u) for u, m in enumerate(machines) if m.start <= first < m.end):
            if len(found) == config.units:
                break
            path = self._follow(machines, u, first, last, runs, taken, claims)
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
        taken: set[int],
        claims: dict[int, int],
    ) -> list[Part] | None:
        """The parts holding the job on unit `u` from hour `t` and on its renewals to
        `last`, or None; renewals it chooses are added to `claims`."""
        m = machines[u]
        end = min(m.end, last)
        clipped = [(max(a, t), min(b, end)) for a, b in runs]
        if u in taken or not all(m.free(a, b) for a, b in clipped if a < b):
            return None
        here: list[Part] = [(u, t, end)]
        if m.end >= last:
            return here
        if m.then is not None:
            rest = self._follow(machines, m.then, m.end, last, runs, taken, claims)
            return None if rest is None else here + rest
        claimed = set(claims.values())
        nexts = sorted(
            (n.end, s)
            for s, n in enumerate(machines)
            if n.start == m.end and not n.renews and s not in claimed
        )
        for _, s in nexts:
            claims[u] = s
            rest = self._follow(machines, s, m.end, last, runs, taken, claims)
            if rest is not None:
                return here + rest
            del claims[u]
        return None

    def place(self, config: Config, start: int, packages: tuple[int, int, int] | None) -> None:
        """Take the job's units from `start`: on held cards, the units `paths` finds and
        then the units `packages` buys (fresh, free all along)."""
        if not config.held:
            for offset, length in config.runs:
                a = start + offset
                self.add(self.rented, config.pool, a, a + length, config.units)
            return
        for offset, length in config.runs:
            a = start + offset
            self.add(self.used, config.pool, a, a + length, config.units)
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
        for path in found[: config.units]:
            for u, x, y in path:
                for offset, length in config.runs:
                    a, b = max(x, start + offset), min(y, start + offset + length)
                    if a < b:
                        machines[u].occupy(a, b)

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
