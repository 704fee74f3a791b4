"""The independent checker: from a Scenario and a Plan alone, every broken rule as an amount,
and every cost line recomputed. Never imports the solver.

It rebuilds each assignment's config from the scenario (estimates and PRODUCT.md's rules),
then replays the plan hour by hour: windows, dependencies, rentals, packages, stock, money.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from fractions import Fraction
from typing import Any

from planner.breakdown import breakdown
from planner.check_serving import ServingChecks
from planner.configs import Config
from planner.domain.plan import Assignment, Plan, Rental
from planner.domain.scenario import Scenario
from planner.domain.workload import TrainWorkload
from planner.estimate.core import GIB
from planner.estimate.memory import train_memory, workload_setup
from planner.problem import build_problem, hour_of, local_time
from planner.rules import PACKAGE_MODES, package_hours
from planner.solution import money, package_share
from planner.violations import CheckResult


class _Checker(ServingChecks):
    def __init__(self, scenario: Scenario, plan: Plan) -> None:
        self.scenario, self.plan = scenario, plan
        self.problem = build_problem(scenario, serving=True)
        self.result = CheckResult()
        self.start = dt.datetime.combine(scenario.spec.horizon.start, dt.time())
        self.hours = self.problem.hours
        self.currency = scenario.spec.currency

    def hour(self, when: dt.datetime, subject: str) -> int:
        seconds = (when.astimezone(dt.UTC) - self.scenario.axis.instant(0)).total_seconds()
        if seconds % 3600:
            self.result.add(
                "time", subject, seconds % 3600 / 3600, "h", f"{when} is not a whole hour"
            )
        return int(seconds // 3600)

    # --- assignments -----------------------------------------------------------------
    def assignments(self) -> dict[str, tuple[Assignment, Config, list[tuple[int, int]]]]:
        placed: dict[str, tuple[Assignment, Config, list[tuple[int, int]]]] = {}
        workloads = {w.name: w for w in self.scenario.spec.workloads}
        for a in self.plan.train:
            w = workloads.get(a.workload)
            if not isinstance(w, TrainWorkload):
                self.result.add("workload", a.workload, 1, "", "no such train workload")
                continue
            if a.workload in placed:
                self.result.add("workload", a.workload, 1, "", "assigned more than once")
                continue
            config = self.config_of(a, w)
            runs = [(self.hour(r.start, a.workload), self.hour(r.end, a.workload)) for r in a.runs]
            if config is not None and runs:
                placed[a.workload] = (a, config, runs)
                self.timing(a, w, config, runs)
        for name, w in workloads.items():
            assigned = any(a.workload == name for a in self.plan.assignments)
            if isinstance(w, TrainWorkload) and name not in placed and not assigned:
                self.result.add("workload", name, 1, "", "not done: no assignment")
        return placed

    def config_of(self, a: Assignment, w: TrainWorkload) -> Config | None:
        job = next(j for j in self.problem.jobs if j.name == a.workload)
        for c in job.configs:
            if (c.card, c.cards, c.offer, c.mode, c.held) == (
                a.card,
                a.cards,
                a.offer,
                a.mode,
                a.held,
            ):
                return c
        self.why_no_config(a, w)
        return None

    def why_no_config(self, a: Assignment, w: TrainWorkload) -> None:
        offer = self.scenario.offers.get(a.offer)
        if offer is None or offer.card != a.card:
            self.result.add("config", a.workload, 1, "", f"offer {a.offer} does not rent {a.card}")
            return
        card = self.scenario.cards[a.card]
        setup = workload_setup(w, self.scenario.spec.usable_memory_fraction)
        memory = train_memory(self.scenario.models[w.name], card, a.cards, setup)
        if not memory.fits:
            over = -memory.headroom / GIB
            self.result.add(
                "memory",
                a.workload,
                over,
                "GiB",
                f"memory over by {over:.1f} GiB on {a.cards}× {a.card}",
            )
            return
        self.result.add(
            "config",
            a.workload,
            1,
            "",
            f"{a.cards}× {a.card} on {a.offer} {a.mode} cannot run it "
            "(mode, card count, node size or window)",
        )

    def timing(
        self, a: Assignment, w: TrainWorkload, c: Config, runs: list[tuple[int, int]]
    ) -> None:
        first = runs[0][0]
        expected = [(first + off, first + off + length) for off, length in c.runs]
        if runs != expected:
            short = sum(b - a for a, b in expected) - sum(b - a for a, b in runs)
            self.result.add(
                "duration",
                a.workload,
                short,
                "h",
                f"runs {self.fmt(runs)} should be {self.fmt(expected)}",
            )
        own = hour_of(self.scenario, w.earliest_start) if w.earliest_start else 0
        if first < own:
            self.result.add("window", a.workload, own - first, "h", f"starts {own - first} h early")
        if w.daily_hours is not None and (first - w.daily_hours.start_hour) % 24:
            self.result.add("window", a.workload, 1, "", "a daily run does not start at the window")
        deadline = hour_of(self.scenario, w.deadline) if w.deadline else self.hours
        if runs[-1][1] > deadline:
            late = runs[-1][1] - deadline
            self.result.add("deadline", a.workload, late, "h", f"deadline missed by {late} h")

    def dependencies(
        self, placed: dict[str, tuple[Assignment, Config, list[tuple[int, int]]]]
    ) -> None:
        for name, (_, _, runs) in placed.items():
            w = self.scenario.workload(name)
            assert isinstance(w, TrainWorkload)
            for before in w.after:
                if before in placed:
                    gap = placed[before][2][-1][1] - runs[0][0]
                    if gap > 0:
                        self.result.add(
                            "dependency", name, gap, "h", f"starts {gap} h before {before} finishes"
                        )

    # --- rentals and money --------------------------------------------------------------
    def rentals(self, placed: dict[str, tuple[Assignment, Config, list[tuple[int, int]]]]) -> None:
        by_id: dict[str, Rental] = {}
        for r in self.plan.rentals:
            if r.id in by_id:
                self.result.add("rental", r.id, 1, "", "rental id used twice")
            by_id[r.id] = r
        covered: set[str] = set()
        for name, (a, c, runs) in placed.items():
            if c.held:
                continue
            for k, (start, end) in enumerate(runs):
                match = next(
                    (
                        by_id[i]
                        for i in a.rentals
                        if i in by_id
                        and self.hour(by_id[i].start, i) == start
                        and self.hour(by_id[i].end, i) == end
                        and (by_id[i].offer, by_id[i].mode, by_id[i].units)
                        == (c.offer, c.mode, c.units)
                    ),
                    None,
                )
                if match is None:
                    self.result.add(
                        "rental",
                        name,
                        end - start,
                        "h",
                        f"run {k + 1} ({self.fmt([(start, end)])}) has no rental "
                        f"of {c.units} unit(s) of {c.offer} {c.mode}",
                    )
                else:
                    covered.add(match.id)
        for r in self.plan.rentals:
            self.rental_money(r)
            replica = r.workload in {j.name for j in self.problem.replica_jobs}
            if not (r.committed or replica) and r.mode not in PACKAGE_MODES and r.id not in covered:
                self.result.add("rental", r.id, 1, "", "hourly rental that no workload run uses")
        self.commitments(by_id)

    def rental_money(self, r: Rental) -> None:
        offer = self.scenario.offers.get(r.offer)
        if offer is None or r.mode not in offer.modes:
            self.result.add("rental", r.id, 1, "", f"offer {r.offer} does not sell {r.mode}")
            return
        a, b = self.hour(r.start, r.id), self.hour(r.end, r.id)
        if r.mode in PACKAGE_MODES and (a % 24 or b - a != package_hours(r.mode)):
            self.result.add(
                "package",
                r.id,
                abs(b - a - package_hours(r.mode)),
                "h",
                f"a {r.mode} package starts at 00:00 and lasts {package_hours(r.mode)} h",
            )
        billed, exact = self.problem.rental_money(r.mode, r.offer, b - a, r.units, r.workload)
        if r.billed_hours != billed:
            self.result.add(
                "cost",
                r.id,
                float(r.billed_hours - billed),
                "h",
                f"billed hours {r.billed_hours} should be {billed}",
            )
        self.cost_line(r.id, r.cost, exact)
        self.result.total += exact

    def cost_line(self, subject: str, stated: Decimal, exact: Fraction) -> None:
        expected = money(exact, self.currency)
        if stated != expected:
            self.result.add(
                "cost",
                subject,
                float(stated - expected),
                self.currency,
                f"cost {stated} should be {expected} (off by {stated - expected})",
            )

    def commitments(self, by_id: dict[str, Rental]) -> None:
        for f in self.problem.fixed:
            found = any(
                r.committed
                and (r.offer, r.mode, r.units) == (f.offer, f.mode, f.units)
                and self.hour(r.start, r.id) == f.start
                for r in by_id.values()
            )
            if not found:
                self.result.add(
                    "commitment",
                    f.name,
                    f.units,
                    "units",
                    f"{f.units} unit(s) of {f.offer} {f.mode} from {self.at(f.start)} "
                    "are committed but not in the plan",
                )

    # --- capacity -------------------------------------------------------------------------
    def capacity(
        self,
        placed: dict[str, tuple[Assignment, Config, list[tuple[int, int]]]],
        replica_use: dict[tuple[str, str], list[int]],
    ) -> None:
        span = self.hours + 24 * 31
        held: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * span)
        used: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * span)
        for key, line in replica_use.items():  # replicas on package cards
            for h, units in enumerate(line):
                used[key][h] += units
        for r in self.plan.rentals:
            a, b = self.hour(r.start, r.id), self.hour(r.end, r.id)
            for h in range(max(a, 0), min(b, span)):
                held[(r.offer, r.mode)][h] += r.units
        for _, c, runs in placed.values():
            if c.held:
                for a, b in runs:
                    for h in range(a, b):
                        used[c.pool][h] += c.units
        for key, line in used.items():
            for h, units in enumerate(line):
                if units > held[key][h]:
                    self.result.add(
                        "package",
                        f"{key[0]} {key[1]}",
                        units - held[key][h],
                        "units",
                        f"{units} unit(s) used but {held[key][h]} held at {self.at(h)}",
                    )
                    break
        totals: dict[str, list[int]] = defaultdict(lambda: [0] * span)
        for (offer_id, mode), line in held.items():
            offer = self.scenario.offers[offer_id]
            stock = offer.billing(mode).stock
            for h, units in enumerate(line):
                totals[offer_id][h] += units
            worst = max(range(span), key=line.__getitem__)
            if stock is not None and line[worst] > stock:
                self.result.add(
                    "stock",
                    f"{offer_id} {mode}",
                    line[worst] - stock,
                    "units",
                    f"stock over by {line[worst] - stock} unit(s) at {self.at(worst)}",
                )
        for offer_id, line in totals.items():
            cap = self.scenario.offers[offer_id].max_units
            worst = max(range(span), key=line.__getitem__)
            if cap is not None and line[worst] > cap:
                self.result.add(
                    "stock",
                    offer_id,
                    line[worst] - cap,
                    "units",
                    f"offer-wide cap over by {line[worst] - cap} unit(s) at {self.at(worst)}",
                )

    def storage(
        self, placed: dict[str, tuple[Assignment, Config, list[tuple[int, int]]]]
    ) -> Fraction:
        total = Fraction(0)
        for name, (a, c, _) in placed.items():
            self.cost_line(name, a.cost, c.cost)
            if c.held:
                stated = a.package_share if a.package_share is not None else Decimal(-1)
                self.cost_line(f"{name} package share", stated, package_share(self.problem, c))
            total += c.storage_cost
        return total

    def fmt(self, runs: list[tuple[int, int]]) -> str:
        return ", ".join(f"{self.at(a)} to {self.at(b)}" for a, b in runs)

    def at(self, hour: int) -> str:
        return local_time(self.scenario, hour)

    def run(self) -> CheckResult:
        if self.plan.scenario != self.scenario.name:
            self.result.add(
                "scenario",
                self.plan.scenario,
                1,
                "",
                f"the plan is for scenario {self.plan.scenario!r}, not {self.scenario.name!r}",
            )
            return self.result
        placed = self.assignments()
        replica_use = self.replica_coverage()
        self.dependencies(placed)
        self.rentals(placed)
        self.capacity(placed, replica_use)
        self.result.total += self.storage(placed)
        self.cost_line("total", self.plan.total_cost, self.result.total)
        self.result.breakdown = breakdown(self.problem, self.plan, placed, self.result.total)
        stated = self.plan.cost_breakdown
        if stated:
            for key, value in self.result.breakdown.items():
                if key in stated and not _same(stated[key], value):
                    self.result.add(
                        "cost",
                        f"cost_breakdown.{key}",
                        1,
                        "",
                        f"states {_plain(stated[key])}, recomputed {_plain(value)}",
                    )
        return self.result


def _plain(value: Any) -> str:
    """A breakdown value as people write it (no Decimal reprs)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_plain(v)}" for k, v in value.items()) + "}"
    return str(value)


def _same(stated: Any, value: Any) -> bool:
    """A stated breakdown line equals the recomputed one (JSON turns decimals into numbers)."""
    if isinstance(value, dict):
        return (
            isinstance(stated, dict)
            and stated.keys() == value.keys()
            and all(_same(stated[k], v) for k, v in value.items())
        )
    if isinstance(value, Decimal):
        return Decimal(str(stated)) == value
    return bool(abs(float(stated) - float(value)) < 1e-6)


def check_plan(scenario: Scenario, plan: Plan) -> CheckResult:
    """Every violation of `plan` against `scenario`, and its recomputed costs."""
    return _Checker(scenario, plan).run()
