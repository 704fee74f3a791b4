"""The checker's serve and reserve rules: demand and minimum replicas covered at every hour,
hourly rentals matching running replicas, their money (PRODUCT.md rule 6)."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

from planner.rules import held_card_hour_price
from planner.violations import CheckResult

if TYPE_CHECKING:
    import datetime as dt

    from planner.domain.plan import Plan
    from planner.problem import Problem


class ServingChecks:
    """Mixed into the checker, which provides these attributes and helpers."""

    problem: Problem
    plan: Plan
    hours: int

    if TYPE_CHECKING:

        def hour(self, when: dt.datetime, subject: str) -> int: ...
        def at(self, hour: int) -> str: ...
        def cost_line(self, subject: str, stated: Decimal, exact: Fraction) -> None: ...

    result: CheckResult

    def replica_coverage(self) -> dict[tuple[str, str], list[int]]:
        """Serve and reserve: demand and minimum covered at every hour; each workload's hourly
        rentals match its hourly replicas; its cost lines. Returns package units used."""
        jobs = {j.name: j for j in self.problem.replica_jobs}
        seen: set[str] = set()
        package_use: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * self.hours)
        for a in self.plan.replica:
            job = jobs.get(a.workload)
            if job is None or a.workload in seen:
                self.result.add(
                    "workload",
                    a.workload,
                    1,
                    "",
                    "no such serve/reserve workload, or assigned twice",
                )
                continue
            seen.add(a.workload)
            carried, running = [0] * self.hours, [0] * self.hours
            hourly: dict[str, list[int]] = defaultdict(lambda: [0] * self.hours)
            share = Fraction(0)
            for u in a.uses:
                config = next(
                    (
                        c
                        for c in job.configs
                        if (c.card, c.cards, c.offer, c.mode) == (u.card, u.cards, u.offer, u.mode)
                    ),
                    None,
                )
                if config is None:
                    self.result.add(
                        "config",
                        a.workload,
                        1,
                        "",
                        f"{u.cards}× {u.card} on {u.offer} {u.mode} cannot carry it",
                    )
                    continue
                first, last = self.hour(u.start, a.workload), self.hour(u.end, a.workload)
                for h in range(max(first, 0), min(last, self.hours)):
                    carried[h] += u.replicas * config.capacity
                    running[h] += u.replicas
                    if config.mode == "hourly":
                        hourly[config.offer][h] += u.replicas * config.units
                    else:
                        package_use[(config.offer, config.mode)][h] += u.replicas * config.units
                if config.mode != "hourly":
                    offer = self.problem.offers[config.offer]
                    share += (
                        u.replicas
                        * config.cards
                        * (last - first)
                        * held_card_hour_price(offer, config.mode)
                    )
            for s, (x, y) in enumerate(self.problem.segments):
                for h in range(x, y):
                    if carried[h] < job.demand[s]:
                        self.result.add(
                            "demand",
                            a.workload,
                            job.demand[s] - carried[h],
                            "requests" if job.kind == "serve" else "cards",
                            f"short by {job.demand[s] - carried[h]} at {self.at(h)}",
                        )
                        break
                    if running[h] < job.minimum[s]:
                        self.result.add(
                            "demand",
                            a.workload,
                            job.minimum[s] - running[h],
                            "replicas",
                            f"{running[h]} replica(s) below the minimum at {self.at(h)}",
                        )
                        break
            self.replica_rentals(a.workload, hourly, a.cost)
            if share or a.package_share is not None:
                stated = a.package_share if a.package_share is not None else Decimal(-1)
                self.cost_line(f"{a.workload} package share", stated, share)
        for name in jobs:
            if name not in seen:
                self.result.add("workload", name, 1, "", "not done: no assignment")
        return dict(package_use)

    def replica_rentals(self, name: str, hourly: dict[str, list[int]], stated: Decimal) -> None:
        """A workload's hourly rentals hold exactly its hourly replicas' units, every hour."""
        rented: dict[str, list[int]] = defaultdict(lambda: [0] * self.hours)
        exact = Fraction(0)
        for r in self.plan.rentals:
            if r.workload != name:
                continue
            a, b = self.hour(r.start, r.id), self.hour(r.end, r.id)
            for h in range(max(a, 0), min(b, self.hours)):
                rented[r.offer][h] += r.units
            exact += self.problem.rental_money(r.mode, r.offer, b - a, r.units, r.workload)[1]
        for offer_id in set(rented) | set(hourly):
            line, need = rented[offer_id], hourly[offer_id]
            gap = next((h for h in range(self.hours) if line[h] != need[h]), None)
            if gap is not None:
                self.result.add(
                    "rental",
                    name,
                    abs(line[gap] - need[gap]),
                    "units",
                    f"{line[gap]} unit(s) of {offer_id} rented but {need[gap]} "
                    f"replica unit(s) run at {self.at(gap)}",
                )
        self.cost_line(name, stated, exact)
