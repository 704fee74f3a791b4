"""Constraints, one method per concern (PRODUCT.md cost semantics rules 1-8)."""

from __future__ import annotations

import itertools

from ortools.sat.python import cp_model

from planner.cpsat.variables import Variables, pool_cap, replica_bound
from planner.problem import Problem


class Constraints:
    """Adds every constraint of the plan to `model`, in `add_constraints()`."""

    def __init__(
        self, model: cp_model.CpModel, problem: Problem, v: Variables, require_all: bool = True
    ) -> None:
        self.model, self.problem, self.v = model, problem, v
        self._usage: dict[
            tuple[tuple[str, str], bool], list[tuple[int, cp_model.IntervalVar, cp_model.IntVar]]
        ] = {}
        self.require_all = require_all  # False: presence is left to assumptions (explanations)

    def add_constraints(self) -> None:
        self._cover_demand()
        self._replica_starts()
        self._min_hold()
        self._select_one_config()
        self._config_starts()
        self._deadlines()
        self._dependencies()
        self._rental_stock()
        self._pool_capacity()
        self._pool_stock()
        self._commitments()
        self._offer_cap()

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

    def replica_usage(
        self, key: tuple[str, str], held: bool
    ) -> list[tuple[int, cp_model.IntervalVar, cp_model.IntVar]]:
        """Per segment, what replicas hold on one offer and mode: on held cards, cards (rule
        5: workloads use a held package's cards, so 1-card replicas share a machine); on
        rentals of their own, units. (segment start, fixed interval, variable demand) for
        the cumulative constraints."""
        if (key, held) in self._usage:
            return self._usage[(key, held)]
        usage = []
        for s, (a, b) in enumerate(self.problem.segments):
            mine = [
                (j, k, job, c, c.cards if held else c.units)
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
                usage.append((a, self.model.new_fixed_size_interval_var(a, b - a, ""), units))
        self._usage[(key, held)] = usage
        return usage

    def replica_setup_usage(
        self, key: tuple[str, str]
    ) -> list[tuple[cp_model.IntervalVar, cp_model.LinearExprT]]:
        """Units that hourly replica rentals hold while they set up: ceil(setup) hours before
        each segment where a config's count rises (rules 6-7: setup hours are held)."""
        usage: list[tuple[cp_model.IntervalVar, cp_model.LinearExprT]] = []
        for (j, k, s), up in self.v.starts.items():
            job = self.problem.replica_jobs[j]
            c = job.configs[k]
            setup = self.problem.replica_setup[(job.name, c.offer)]
            if (c.offer, c.mode) != key or not setup:
                continue
            a = self.problem.segments[s][0]
            interval = self.model.new_fixed_size_interval_var(a - setup, setup, "")
            usage.append((interval, up * c.units))
        return usage

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
        by_pool: dict[
            tuple[str, str], tuple[list[cp_model.IntervalVar], list[cp_model.LinearExprT]]
        ] = {}
        for replica_job in self.problem.replica_jobs:
            for replica in replica_job.configs:
                if replica.rented:
                    by_pool.setdefault((replica.offer, replica.mode), ([], []))
        for key, (intervals, demands) in by_pool.items():
            for _, interval, units in self.replica_usage(key, held=False):
                intervals.append(interval)
                demands.append(units)
            for interval, setting_up in self.replica_setup_usage(key):
                intervals.append(interval)
                demands.append(setting_up)
        for job in self.problem.jobs:
            for k, config in enumerate(job.configs):
                if not config.held:
                    intervals, demands = by_pool.setdefault(config.pool, ([], []))
                    for interval in self.v.runs[(job.index, k)]:
                        intervals.append(interval)
                        demands.append(config.units)
        for (offer_id, mode), (intervals, demands) in by_pool.items():
            stock = self.problem.offers[offer_id].billing(mode).stock
            if stock is None:
                continue
            pool = self.problem.pools.get((offer_id, mode))
            for c in pool.committed if pool else ():
                intervals.append(
                    self.model.new_fixed_size_interval_var(c.start, c.end - c.start, "")
                )
                demands.append(c.units)
            self.model.add_cumulative(intervals, demands, stock)

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
        a held package's cards, so smaller jobs share a machine): usage plus a blocker of
        (cap − held) units' cards per segment fits a cumulative of the cap's cards."""
        for key in self.problem.pools:
            unit_cards = self.problem.offers[key[0]].unit_cards
            intervals: list[cp_model.IntervalVar] = []
            demands: list[cp_model.LinearExprT] = []
            for job in self.problem.jobs:
                for k, config in enumerate(job.configs):
                    if config.held and config.pool == key:
                        intervals += self.v.runs[(job.index, k)]
                        demands += [config.cards] * len(config.runs)
            for a, interval, cards in self.replica_usage(key, held=True):
                intervals.append(interval)
                demands.append(cards)
                # redundant but linear: the LP bound sees that replicas need held packages
                self.model.add(cards <= self.held_units(key, a) * unit_cards)
            if not intervals:
                continue
            cap = pool_cap(self.problem, key)
            for a, b in self._segments(key):
                free = self.model.new_int_var(0, cap, f"free[{key[0]},{key[1]},{a}]")
                self.v.free[(key, a)] = free
                self.model.add(free == cap - self.held_units(key, a))
                intervals.append(self.model.new_fixed_size_interval_var(a, b - a, ""))
                demands.append(free * unit_cards)
            self.model.add_cumulative(intervals, demands, cap * unit_cards)

    def _pool_stock(self) -> None:
        """Packages held at once (with committed units) ≤ the mode's stock (rule 7)."""
        for key, pool in self.problem.pools.items():
            if pool.days == 0:
                continue
            cap = pool_cap(self.problem, key)
            for a, _ in self._segments(key):
                self.model.add(self.held_units(key, a) <= cap)

    def _commitments(self) -> None:
        """Committed packages are bought: at least their units on their start days (rule 8)."""
        for key, pool in self.problem.pools.items():
            if not pool.days:
                continue
            for c in pool.committed:
                self.model.add(self.v.packages[key][self.problem.axis.day_of(c.start)] >= c.units)

    def _offer_cap(self) -> None:
        """All modes of an offer together ≤ its offer-wide cap, at every hour (rule 7)."""
        for offer_id, offer in self.problem.offers.items():
            if offer.max_units is None:
                continue
            intervals: list[cp_model.IntervalVar] = []
            demands: list[cp_model.LinearExprT] = []
            for job in self.problem.jobs:
                for k, config in enumerate(job.configs):
                    if config.offer == offer_id and not config.held:
                        intervals += self.v.runs[(job.index, k)]
                        demands += [config.units] * len(config.runs)
            for _, interval, units in self.replica_usage((offer_id, "hourly"), held=False):
                intervals.append(interval)
                demands.append(units)
            for interval, setting_up in self.replica_setup_usage((offer_id, "hourly")):
                intervals.append(interval)
                demands.append(setting_up)
            for (pool_offer, mode), bought in self.v.packages.items():
                if pool_offer != offer_id:
                    continue
                for day, count in bought.items():
                    a, b = self.problem.package((pool_offer, mode), day)  # real hours
                    intervals.append(self.model.new_fixed_size_interval_var(a, b - a, ""))
                    demands.append(count)
            for (pool_offer, _), pool in self.problem.pools.items():
                if pool_offer == offer_id and not pool.days:
                    for c in pool.committed:
                        intervals.append(
                            self.model.new_fixed_size_interval_var(c.start, c.end - c.start, "")
                        )
                        demands.append(c.units)
            if intervals:
                self.model.add_cumulative(intervals, demands, offer.max_units)
