"""Constraints, one method per concern (docs/rules.md, rules 1-8)."""

from __future__ import annotations

import itertools
from fractions import Fraction

from ortools.sat.python import cp_model

from planner.configs import ReplicaConfig
from planner.cpsat.cumulative import Load
from planner.cpsat.steps import bill_steps
from planner.cpsat.variables import Short, Variables, pool_cap, replica_bound
from planner.problem import NoGood, Problem

# (start, end, variable demand, its largest value) of a fixed part of a cumulative
Usage = tuple[int, int, cp_model.LinearExprT, int]


class Constraints:
    """Adds every constraint of the plan to `model`, in `add_constraints()`."""

    def __init__(
        self, model: cp_model.CpModel, problem: Problem, v: Variables, require_all: bool = True
    ) -> None:
        self.model, self.problem, self.v = model, problem, v
        self._usage: dict[tuple[tuple[str, str], bool], list[Usage]] = {}
        self.require_all = require_all  # False: presence is left to assumptions (explanations)

    def add_constraints(self) -> None:
        self._cover_demand()
        self._replica_starts()
        self._min_hold()
        self._billed_minimum()
        bill_steps(self.model, self.problem, self.v)
        self._select_one_config()
        self._config_starts()
        self._deadlines()
        self._dependencies()
        self._rental_stock()
        self._pool_capacity()
        self._pool_stock()
        self._commitments()
        self._offer_cap()
        self._nogoods()

    def _cover_demand(self) -> None:
        """In every segment, replicas carry the demand and number at least the minimum (rule 6)."""
        for j, job in enumerate(self.problem.replica_jobs):
            for s in range(len(self.problem.segments)):
                terms = [
                    (self.v.replicas[(j, k, s)], c)
                    for k, c in enumerate(job.configs)
                    if (j, k, s) in self.v.replicas
                ]
                if job.demand[s]:
                    self.model.add(sum(r * c.capacity for r, c in terms) >= job.demand[s])
                if job.minimum[s]:
                    self.model.add(sum(r for r, _ in terms) >= job.minimum[s])

    def _replica_starts(self) -> None:
        """An hourly replica rental starts wherever a config's replicas rise (rule 6)."""
        for (j, k, s), up in self.v.starts.items():
            before = self.v.replicas.get((j, k, s - 1), 0)
            self.model.add(up >= self.v.replicas[(j, k, s)] - before)

    def _min_hold(self) -> None:
        """A replica, once started, is held `min_hold_hours` or until its workload's end."""
        for (j, k, s), up in self.v.held_starts.items():  # held configs: a start per rise
            before = self.v.replicas.get((j, k, s - 1), 0)
            self.model.add(up >= self.v.replicas[(j, k, s)] - before)
        starts = {**self.v.starts, **self.v.held_starts}
        segments = self.problem.segments
        for (j, k, s), replicas in self.v.replicas.items():
            # min-up time for counts: replicas now ≥ those started in the last hold hours
            # (exact: see ReplicaJob.held_from)
            recent = [
                starts[(j, k, u)]
                for u in self.problem.replica_jobs[j].held_from(segments, s)
                if (j, k, u) in starts
            ]
            if recent:
                self.model.add(replicas >= sum(recent))

    def _nogoods(self) -> None:
        """No plan repeats work its pool's machines cannot hold (planner.placement): some
        listed job on another config or start, less replica work at a listed segment, or
        more units bought on some listed day. A cut naming a config this problem does not
        have (a top-K restriction) already holds."""
        jobs = {job.name: job for job in self.problem.jobs}
        for cut in self.problem.nogoods:
            escapes: list[cp_model.LiteralT] = []
            for name, config, start in cut.jobs:
                job = jobs[name]
                if config not in job.configs:
                    break
                k = job.configs.index(config)
                same = self.model.new_bool_var(f"same[{name}]")
                self.model.add(self.v.start[job.index] == start).only_enforce_if(same)
                self.model.add(self.v.start[job.index] != start).only_enforce_if(~same)
                escapes += [~self.v.choose[job.index][k], ~same]
            else:
                fewer = self._less_replica_work(cut)
                if fewer is None:
                    continue  # no plan of this problem carries the listed replicas
                escapes += fewer
                bought = self.v.packages.get(cut.pool, {})
                for day, count in cut.packages:
                    more = self.model.new_bool_var(f"more[{cut.pool},{day}]")
                    self.model.add(bought[day] >= count + 1).only_enforce_if(more)
                    self.model.add(bought[day] <= count).only_enforce_if(~more)
                    escapes.append(more)
                self.model.add_bool_or(escapes)

    def _less_replica_work(self, cut: NoGood) -> list[cp_model.LiteralT] | None:
        """Literals of which one holds wherever a plan carries less replica work than the
        cut's at one of its segments; None where no plan can carry as much.

        Replicas on held cards restart anywhere between events, so a replica of c cards
        may be split into smaller ones and placement only gets easier (a unit that holds
        the c cards holds the pieces). Where the sizes placed on the pool divide one
        another, replica work W' can be split and trimmed into the cut's W exactly when,
        for every piece size z, the cards W' places in pieces of z cards or more are at
        least W's: so a plan escapes the cut only by carrying fewer such cards at some
        segment and size, whatever mix of configs and workloads carries them. With sizes that do
        not divide one another, per config: fewer replicas of a listed config."""
        unit = self.problem.offers[cut.pool[0]].unit_cards

        def placed(config: ReplicaConfig) -> tuple[int, int]:
            """(cards of each piece placed, pieces) of one replica (planner.check.machines:
            a replica larger than a unit takes whole units)."""
            if config.cards > unit:
                return unit, -(-config.cards // unit)
            return config.cards, 1

        on_pool = [
            (j, k, placed(c))
            for j, job in enumerate(self.problem.replica_jobs)
            for k, c in enumerate(job.configs)
            if c.held and (c.offer, c.mode) == cut.pool
        ]
        listed = {placed(replica)[0] for _, replica, _, _ in cut.replicas}
        sizes = sorted({size for *_, (size, _) in on_pool} | listed, reverse=True)
        if any(a % b for a, b in itertools.pairwise(sizes)):
            return self._fewer_replicas(cut)
        need: dict[int, dict[int, int]] = {}  # segment → piece size → cards the cut places
        for _, replica, s, count in cut.replicas:
            size, pieces = placed(replica)
            by_size = need.setdefault(s, {})
            by_size[size] = by_size.get(size, 0) + count * pieces * size
        escapes: list[cp_model.LiteralT] = []
        for s, by_size in sorted(need.items()):
            for least in sizes:
                required = sum(cards for size, cards in by_size.items() if size >= least)
                carried = [
                    self.v.replicas[(j, k, s)] * pieces * size
                    for j, k, (size, pieces) in on_pool
                    if size >= least and (j, k, s) in self.v.replicas
                ]
                if not required:
                    continue
                if not carried:
                    return None
                fewer = self.model.new_bool_var(f"fewer[{cut.pool},{s},{least}]")
                self.model.add(sum(carried) <= required - 1).only_enforce_if(fewer)
                escapes.append(fewer)
        return escapes

    def _fewer_replicas(self, cut: NoGood) -> list[cp_model.LiteralT] | None:
        """Per listed replica config and segment: fewer replicas than the cut's."""
        replica_jobs = {job.name: j for j, job in enumerate(self.problem.replica_jobs)}
        escapes: list[cp_model.LiteralT] = []
        for name, replica, s, count in cut.replicas:
            j = replica_jobs[name]
            configs = self.problem.replica_jobs[j].configs
            if replica not in configs:
                return None
            var = self.v.replicas.get((j, configs.index(replica), s))
            if var is None:
                return None
            fewer = self.model.new_bool_var(f"fewer[{name},{s}]")
            self.model.add(var <= count - 1).only_enforce_if(fewer)
            self.model.add(var >= count).only_enforce_if(~fewer)
            escapes.append(fewer)
        return escapes

    def _billed_minimum(self) -> None:
        """Rentals that serve less than their minimum pay up to it (rule 6 as rule 4). For a
        window of W hours, the rentals ended younger than W at an hour are at least the
        starts of the last W hours less the replicas held (a count `short`, ≥ 0, paid per
        hour); ending the oldest first meets that bound at every hour at once, so the sum
        is exact (docs/rules.md, "Minimum billing of replicas"). Pieces of a segment where
        the starts in the window stay the same share one count; a virtual segment past the
        horizon holds no replicas."""
        segments = self.problem.segments
        end = segments[-1][1] if segments else 0
        for j, job in enumerate(self.problem.replica_jobs):
            for k, config in enumerate(job.configs):
                if not config.rented:
                    continue
                rate = self.problem.replica_rate(job.name, config)
                for window, weight in rate.windows:
                    for s, (a, b) in enumerate([*segments, (end, end + window)]):
                        self._short_pieces(j, k, s, a, b, window, weight)

    def _short_pieces(
        self, j: int, k: int, s: int, a: int, b: int, window: int, weight: Fraction
    ) -> None:
        segments = self.problem.segments
        job = self.problem.replica_jobs[j]
        config = job.configs[k]
        starts = [
            u
            for u in range(min(s, len(segments) - 1), -1, -1)
            if (j, k, u) in self.v.starts and segments[u][0] > a - window
        ]
        held = self.v.replicas.get((j, k, s), 0)
        cuts = sorted({a, b, *(segments[u][0] + window for u in starts)} & set(range(a, b + 1)))
        for p, q in itertools.pairwise(cuts):
            recent = tuple(u for u in starts if segments[u][0] + window > p)
            if not recent:
                continue
            most = sum(replica_bound(job, config, u) for u in recent)
            count = self.model.new_int_var(0, most, f"short[{j},{k},{s},{window},{p}]")
            self.model.add(count >= sum(self.v.starts[(j, k, u)] for u in recent) - held)
            self.v.short.append(Short(count, j, k, s, recent, weight * (q - p)))

    def replica_usage(self, key: tuple[str, str], held: bool) -> list[Usage]:
        """Per segment, what replicas hold on one offer and mode: on held cards, cards (rule
        5: workloads use a held package's cards, so 1-card replicas share a machine); on
        rentals of their own, units. (start, end, variable, its largest value)."""
        if (key, held) in self._usage:
            return self._usage[(key, held)]
        usage: list[Usage] = []
        for s, (a, b) in enumerate(self.problem.segments):
            mine = [
                (j, k, job, c, self.problem.held_cards(c.offer, c.cards) if held else c.units)
                for j, job in enumerate(self.problem.replica_jobs)
                for k, c in enumerate(job.configs)
                if (c.offer, c.mode) == key and c.held == held
            ]
            terms = [
                (self.v.replicas[(j, k, s)], size)
                for j, k, _, _, size in mine
                if (j, k, s) in self.v.replicas
            ]
            if terms:
                most = sum(size * replica_bound(job, c, s) for _, _, job, c, size in mine)
                units = self.model.new_int_var(0, most, f"use[{key[0]},{key[1]},{held},{s}]")
                self.v.usage[(key, held, a)] = units
                self.model.add(units == sum(r * size for r, size in terms))
                usage.append((a, b, units, most))
        self._usage[(key, held)] = usage
        return usage

    def replica_setup_usage(self, key: tuple[str, str]) -> list[Usage]:
        """Units that hourly replica rentals hold while they set up: ceil(setup) hours before
        each segment where a config's count rises (rules 6-7: setup hours are held)."""
        usage: list[Usage] = []
        for (j, k, s), up in self.v.starts.items():
            job = self.problem.replica_jobs[j]
            c = job.configs[k]
            setup = self.problem.replica_setup[(job.name, c.offer)]
            if (c.offer, c.mode) != key or not setup:
                continue
            a = self.problem.segments[s][0]
            most = replica_bound(job, c, s) * c.units
            usage.append((a - setup, a, up * c.units, most))
        return usage

    def _replica_load(self, load: Load, key: tuple[str, str]) -> None:
        """Hourly replicas of one offer and mode, and their setup hours, into `load`."""
        for a, b, units, most in self.replica_usage(key, held=False):
            load.add_fixed(a, b, units, most)
        for a, b, setting_up, most in self.replica_setup_usage(key):
            load.add_fixed(a, b, setting_up, most)

    def _select_one_config(self) -> None:
        """Each present job runs on exactly one config (rule 1); every job is present."""
        for job in self.problem.jobs:
            self.model.add(sum(self.v.choose[job.index]) == self.v.present[job.index])
            if self.require_all:
                self.model.add(self.v.present[job.index] == 1)

    def _config_starts(self) -> None:
        """A chosen config starts at one of its own start hours. The start variable's domain
        is the union over a job's configs; they differ only where a windowed job's runs take
        another shape across a daylight-saving change (rule 3)."""
        for job in self.problem.jobs:
            own = [set(c.starts) if c.starts is not None else None for c in job.configs]
            union = set().union(*(s for s in own if s is not None))
            for k, starts in enumerate(own):
                if starts is not None and starts != union:
                    domain = cp_model.Domain.from_values(sorted(starts))
                    self.model.add_linear_expression_in_domain(
                        self.v.start[job.index], domain
                    ).only_enforce_if(self.v.choose[job.index][k])

    def _deadlines(self) -> None:
        """A job finishes by its deadline (its start domain already respects earliest start)."""
        for job in self.problem.jobs:
            self.model.add(self.v.end[job.index] <= job.deadline)

    def _dependencies(self) -> None:
        """A job starts only after everything in its `after` list has finished."""
        for job in self.problem.jobs:
            for before in job.after:
                self.model.add(self.v.start[job.index] >= self.v.end[before])

    def _rental_stock(self) -> None:
        """Units held on hourly/spot rentals (and committed hourly units) ≤ that mode's stock."""
        loads: dict[tuple[str, str], Load] = {}
        for replica_job in self.problem.replica_jobs:
            for replica in replica_job.configs:
                if replica.rented:
                    loads.setdefault((replica.offer, replica.mode), Load(""))
        for key, load in loads.items():
            self._replica_load(load, key)
        for job in self.problem.jobs:
            for k, config in enumerate(job.configs):
                if not config.held:
                    load = loads.setdefault(config.pool, Load(""))
                    for interval in self.v.runs[(job.index, k)]:
                        load.add_moving(interval, config.units)
        for (offer_id, mode), load in loads.items():
            stock = self.problem.offers[offer_id].billing(mode).stock
            if stock is None:
                continue
            pool = self.problem.pools.get((offer_id, mode))
            for c in pool.committed if pool else ():
                load.add_fixed(c.start, c.end, c.units, c.units)
            load.name = f"stock,{offer_id},{mode}"
            load.constrain(self.model, stock, self.v.sums)

    def held_units(self, key: tuple[str, str], hour: int) -> cp_model.LinearExpr:
        """Units of a pool held at `hour`: packages bought covering it (commitments among
        them), or committed units. A package of n local days bought on day d covers local
        days d … d + n − 1."""
        pool = self.problem.pools[key]
        if not pool.days:  # committed hourly or spot units
            committed = sum(c.units for c in pool.committed if c.start <= hour < c.end)
            return cp_model.LinearExpr.constant(committed)
        # committed packages are among the packages bought (`_commitments`): not added again
        day = self.problem.axis.day_of(hour)
        bought = self.v.packages[key]
        covering = [bought[d] for d in range(max(0, day - pool.days + 1), day + 1)]
        return cp_model.LinearExpr.sum(covering)

    def _segments(self, key: tuple[str, str]) -> list[tuple[int, int]]:
        """Hour ranges over which a pool's holdings cannot change: cut at every local 00:00
        and wherever a commitment starts or ends."""
        axis = self.problem.axis
        cuts = {0, self.problem.hours} | {axis.day_start(d) for d in range(axis.days)}
        for c in self.problem.pools[key].committed:
            cuts |= {min(c.start, self.problem.hours), min(c.end, self.problem.hours)}
        return list(itertools.pairwise(sorted(cuts)))

    def _pool_capacity(self) -> None:
        """Jobs and replicas on held cards use at most the cards held at every hour (rule 5:
        a held package's cards, so smaller jobs share a machine; one larger than a unit
        takes whole units): usage plus a blocker of (cap − held) units' cards per segment
        fits a cumulative of the cap's cards."""
        for key in self.problem.pools:
            unit_cards = self.problem.offers[key[0]].unit_cards
            load = Load(f"pool,{key[0]},{key[1]}")
            for job in self.problem.jobs:
                for k, config in enumerate(job.configs):
                    if config.held and config.pool == key:
                        taken = self.problem.held_cards(config.offer, config.cards)
                        for interval in self.v.runs[(job.index, k)]:
                            load.add_moving(interval, taken)
            for a, b, cards, most in self.replica_usage(key, held=True):
                load.add_fixed(a, b, cards, most)
                # redundant but linear: the LP bound sees that replicas need held packages
                self.model.add(cards <= self.held_units(key, a) * unit_cards)
            if not load:
                continue
            cap = pool_cap(self.problem, key)
            if cap == 0:
                self._nothing_held(key)
                continue
            for a, b in self._segments(key):
                free = self.model.new_int_var(0, cap, f"free[{key[0]},{key[1]},{a}]")
                self.v.free[(key, a)] = free
                self.model.add(free == cap - self.held_units(key, a))
                load.add_fixed(a, b, free * unit_cards, cap * unit_cards)
            load.constrain(self.model, cap * unit_cards, self.v.sums)
            self._held_through_idle_days(key, cap)

    def _held_through_idle_days(self, key: tuple[str, str], cap: int) -> None:
        """A job keeps its units from its first run to its last (rule 5; on held cards its
        setup is paid once), so they are held between runs too, though its cards are free
        for others then. Its runs alone ask for no units between them: a committed hourly
        unit may end at night and another start in the morning, and a 02:00-03:00 window
        does not exist on a spring-forward day, whose package no run then asks for. So the
        span of a windowed job on such a pool needs at least its units held at every hour
        from its start to its end: per job, a cumulative of the span beside the units not
        held (a necessary condition: jobs may share a unit). On packages whose runs leave
        no local day out, each day's runs already ask for that day's packages."""
        hourly = not self.problem.pools[key].days  # committed hourly or spot units
        for job in self.problem.jobs:
            for k, config in enumerate(job.configs):
                if not (config.held and config.pool == key and len(config.runs) > 1):
                    continue
                idle = [b[0] - (a[0] + a[1]) for a, b in itertools.pairwise(config.runs)]
                if not hourly and all(h < 23 for h in idle):
                    continue
                span = self.model.new_optional_fixed_size_interval_var(
                    self.v.start[job.index],
                    config.span,
                    self.v.choose[job.index][k],
                    f"span[{job.name},{k}]",
                )
                load = Load(f"span,{job.name},{k}")
                load.add_moving(span, config.units)
                for a, b in self._segments(key):
                    load.add_fixed(a, b, self.v.free[(key, a)], cap)
                load.constrain(self.model, cap, self.v.sums)

    def _nothing_held(self, key: tuple[str, str]) -> None:
        """A pool that can hold nothing (stock 0) carries no job and no replica. Said
        linearly: CP-SAT 9.14-9.15 proved a feasible model infeasible when a cumulative of
        capacity 0 had variable demands (tests/test_serving_rules.py pins the case)."""
        for job in self.problem.jobs:
            for k, config in enumerate(job.configs):
                if config.held and config.pool == key:
                    self.model.add(self.v.choose[job.index][k] == 0)
        for _, _, cards, _ in self.replica_usage(key, held=True):
            self.model.add(cards == 0)

    def _pool_stock(self) -> None:
        """Packages held at once (with committed units) ≤ the mode's stock (rule 7)."""
        for key, pool in self.problem.pools.items():
            if pool.days == 0:
                continue
            cap = pool_cap(self.problem, key)
            for a, _ in self._segments(key):
                self.model.add(self.held_units(key, a) <= cap)

    def _commitments(self) -> None:
        """Committed packages are bought: at least their units, summed, on their start days
        inside the horizon (rule 8; one starting past its end is paid and never used)."""
        for key, pool in self.problem.pools.items():
            if not pool.days:
                continue
            for day, units in self.problem.committed_purchases(key).items():
                self.model.add(self.v.packages[key][day] >= units)

    def _offer_cap(self) -> None:
        """All modes of an offer together ≤ its offer-wide cap, at every hour (rule 7)."""
        for offer_id, offer in self.problem.offers.items():
            if offer.max_units is None:
                continue
            load = Load(f"cap,{offer_id}")
            for job in self.problem.jobs:
                for k, config in enumerate(job.configs):
                    if config.offer == offer_id and not config.held:
                        for interval in self.v.runs[(job.index, k)]:
                            load.add_moving(interval, config.units)
            self._replica_load(load, (offer_id, "hourly"))
            for (pool_offer, mode), bought in self.v.packages.items():
                if pool_offer != offer_id:
                    continue
                cap = pool_cap(self.problem, (pool_offer, mode))
                for day, count in bought.items():
                    a, b = self.problem.package((pool_offer, mode), day)  # real hours
                    load.add_fixed(a, b, count, cap)
            for (pool_offer, _), pool in self.problem.pools.items():
                if pool_offer == offer_id and not pool.days:
                    for c in pool.committed:
                        load.add_fixed(c.start, c.end, c.units, c.units)
            load.constrain(self.model, offer.max_units, self.v.sums)
