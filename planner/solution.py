"""A solution in problem indices (config and start per job, packages bought) and its Plan.

Shared by the CP-SAT decoder and the baselines, so every plan is assembled one way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from planner.configs import Config
from planner.domain.catalog import Offer
from planner.domain.money import apportion, from_minor
from planner.domain.plan import Assignment, Plan, Rental, ReplicaAssignment, ReplicaUse, Run
from planner.domain.timeaxis import TimeAxis
from planner.prices import card_hour_price
from planner.pricing import paid_terms, unused_money
from planner.problem import FixedRental, Problem
from planner.rules import PACKAGE_MODES

PlanStatus = str


@dataclass(frozen=True)
class Solution:
    configs: tuple[int, ...]  # chosen config index, per job
    starts: tuple[int, ...]  # start hour, per job
    packages: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict)  # day → count
    replicas: dict[tuple[int, int, int], int] = field(default_factory=dict)  # (job, config, seg)

    def config(self, problem: Problem, job: int) -> Config:
        return problem.jobs[job].configs[self.configs[job]]

    def cost(self, problem: Problem) -> Fraction:
        """Exact money of the solution: the sum of its paid terms (planner.pricing)."""
        return sum(paid_terms(problem, self).values(), Fraction(0))

    def replica_money(self, problem: Problem, job: int | None = None) -> tuple[Fraction, Fraction]:
        """(rental, storage) of the replicas, one replica job's or all: per held hour, on
        hourly rentals ceil(setup) hours per start, and what a minimum adds to rentals that
        serve less (planner.prices.ReplicaRate)."""
        by_job = self.replica_money_by_job(problem, job)
        if job is not None:
            return by_job.get(job, (Fraction(0), Fraction(0)))
        rental = sum((paid for paid, _ in by_job.values()), Fraction(0))
        return rental, sum((disk for _, disk in by_job.values()), Fraction(0))

    def replica_money_by_job(
        self, problem: Problem, only: int | None = None
    ) -> dict[int, tuple[Fraction, Fraction]]:
        """`replica_money` of each replica job that has replicas (or of `only`), in one pass
        over them."""
        out: dict[int, tuple[Fraction, Fraction]] = {}
        for j, k in sorted({(j, k) for j, k, _ in self.replicas if only is None or j == only}):
            replica_job = problem.replica_jobs[j]
            rate = problem.replica_rate(replica_job.name, replica_job.configs[k])
            paid, disk = rate.series_money(self.series(problem, j, k), problem.segments)
            rental, storage = out.get(j, (Fraction(0), Fraction(0)))
            out[j] = (rental + paid, storage + disk)
        return out

    def series(self, problem: Problem, j: int, k: int) -> list[int]:
        """Replicas of replica job `j`'s config `k`, per segment."""
        return [self.replicas.get((j, k, s), 0) for s in range(len(problem.segments))]


def to_plan(problem: Problem, solution: Solution, status: PlanStatus) -> Plan:
    """Rentals and assignments of a solution, their money stated by `stated`."""
    scenario = problem.scenario
    axis = problem.axis
    rentals: list[Rental] = []
    assignments: list[Assignment | ReplicaAssignment] = []
    money = Money(unused=unused_money(problem, solution))
    for job in problem.jobs:
        config = solution.config(problem, job.index)
        start = solution.starts[job.index]
        ids: list[str] = []
        runs = [(start + offset, start + offset + length) for offset, length in config.runs]
        if not config.held:
            for r, (a, b) in enumerate(runs):
                rental_id = f"{job.name}#{r + 1}" if len(runs) > 1 else job.name
                ids.append(rental_id)
                rental = _rental(
                    problem, rental_id, config.offer, config.mode, config.units, a, b, job.name
                )
                rentals.append(money.rental(*rental))
        money.storage[job.name] = config.storage_cost
        if config.held:
            money.shares[job.name] = package_share(problem, config)
        assignments.append(
            Assignment(
                workload=job.name,
                card=config.card,
                cards=config.cards,
                offer=config.offer,
                mode=config.mode,
                held=config.held,
                start=axis.instant(runs[0][0]),
                end=axis.instant(runs[-1][1]),
                runs=[Run(start=axis.instant(a), end=axis.instant(b)) for a, b in runs],
                hours=sum(b - a for a, b in runs),
                compute_hours=round(float(config.compute_hours), 4),
                setup_hours=round(float(config.setup_hours), 4),
                cost=Decimal(0),
                rentals=ids,
            )
        )
    replica_money = solution.replica_money_by_job(problem)
    for j, replica_job in enumerate(problem.replica_jobs):
        assignment, own = _replica_assignment(problem, solution, j, money)
        money.storage[replica_job.name] = replica_money.get(j, (Fraction(0), Fraction(0)))[1]
        assignments.append(assignment)
        rentals += own
    rentals += [money.rental(*r) for r in _package_rentals(problem, solution)]
    rentals += [money.rental(*r) for r in _commitment_rentals(problem)]
    plan = Plan(
        scenario=scenario.name,
        status=status,
        currency=scenario.spec.currency,
        total_cost=Decimal(0),
        rentals=rentals,
        assignments=assignments,
    )
    return stated(plan, money)


@dataclass
class Money:
    """The exact money lines of a plan being assembled: each rental's cost and each
    workload's storage, and each workload's package share (its held card-hours at the
    card-hour price)."""

    rentals: dict[str, Fraction] = field(default_factory=dict)
    storage: dict[str, Fraction] = field(default_factory=dict)
    shares: dict[str, Fraction] = field(default_factory=dict)
    unused: Fraction = Fraction(0)  # held card-hours no workload uses, at the card-hour price

    def rental(self, rental: Rental, cost: Fraction) -> Rental:
        self.rentals[rental.id] = cost
        return rental


def stated(plan: Plan, money: Money) -> Plan:
    """`plan` with its money stated by the money rule (docs/rules.md): the lines (rentals in
    the plan's order, then each workload's storage in the order of its assignments) are
    apportioned (`apportion`) so that they add up to the exact total rounded once; a
    workload's cost is its rentals' and its storage's lines; the held rentals' lines are
    apportioned among the package shares and what no workload uses, in proportion to their
    exact amounts."""
    c = plan.currency
    names = [a.workload for a in plan.assignments]
    lines = [money.rentals[r.id] for r in plan.rentals]
    figures = apportion(lines + [money.storage.get(n, Fraction(0)) for n in names], c)
    cost = {r.id: figures[i] for i, r in enumerate(plan.rentals)}
    disk = dict(zip(names, figures[len(lines) :], strict=True))
    held = [r.id for r in plan.rentals if r.committed or r.mode in PACKAGE_MODES]
    users = [n for n in names if n in money.shares]
    shares = [money.shares[n] for n in users]
    # in proportion: the card-hour price spreads a package over nominal 24 h days, so the
    # amounts add up to its money only where no day is 23 or 25 h long (and no hourly
    # commitment bills past its held hours)
    parts = apportion([*shares, money.unused], c, sum(cost[i] for i in held))
    split = dict(zip(users, parts[:-1], strict=True))
    rentals = [r.model_copy(update={"cost": from_minor(cost[r.id], c)}) for r in plan.rentals]
    assignments = [
        a.model_copy(
            update={
                "cost": from_minor(sum(cost[i] for i in a.rentals) + disk[a.workload], c),
                "storage": from_minor(disk[a.workload], c),
                "package_share": from_minor(split[a.workload], c) if a.workload in split else None,
            }
        )
        for a in plan.assignments
    ]
    total = from_minor(sum(figures), c)
    return plan.model_copy(
        update={"total_cost": total, "rentals": rentals, "assignments": assignments}
    )


def _replica_assignment(
    problem: Problem, solution: Solution, j: int, money: Money
) -> tuple[ReplicaAssignment, list[Rental]]:
    """A replica job's uses (constant runs of replicas per config) and its hourly rentals:
    each rise in a config's replica count starts rentals, each fall ends those that bill the
    least (`prices.ReplicaRate.rentals`)."""
    job = problem.replica_jobs[j]
    uses: list[ReplicaUse] = []
    rentals: list[Rental] = []
    share = Fraction(0)
    total = [0] * len(problem.segments)
    last_end: int | None = None  # hour the newest use ends
    for k, config in enumerate(job.configs):
        series = solution.series(problem, j, k)
        if not any(series):
            continue
        offer = problem.offers[config.offer]
        held = config.held
        for s, (a, b) in enumerate(problem.segments):
            total[s] += series[s]
            # hour indices, not datetimes: aware times of one zone compare by wall clock
            if series[s] and (
                not uses
                or uses[-1].replicas != series[s]
                or last_end != a
                or (uses[-1].offer, uses[-1].mode, uses[-1].held, uses[-1].card, uses[-1].cards)
                != (config.offer, config.mode, held, config.card, config.cards)
            ):
                uses.append(
                    ReplicaUse(
                        card=config.card,
                        cards=config.cards,
                        offer=config.offer,
                        mode=config.mode,
                        held=held,
                        precision=config.precision,
                        capacity=config.capacity,
                        start=problem.axis.instant(a),
                        end=problem.axis.instant(b),
                        replicas=series[s],
                    )
                )
            elif series[s]:
                uses[-1] = uses[-1].model_copy(update={"end": problem.axis.instant(b)})
            if series[s]:
                last_end = b
            if held:
                share += series[s] * config.cards * (b - a) * card_hour_price(offer, config.mode)
        if held:
            continue
        # held from ceil(setup) hours before it serves (rules 6-7: setup is held)
        setup = problem.replica_setup[(job.name, config.offer)]
        rate = problem.replica_rate(job.name, config)
        for a, b in rate.rentals(series, problem.segments):
            rental = _rental(
                problem,
                f"{job.name}#{len(rentals) + 1}",
                config.offer,
                "hourly",
                config.units,
                a - setup,
                b,
                job.name,
            )
            rentals.append(money.rental(*rental))
    active = [t for s, t in enumerate(total) if job.active(s)]
    hours = [b - a for s, (a, b) in enumerate(problem.segments) if job.active(s)]
    mean = sum(t * h for t, h in zip(active, hours, strict=True)) / max(sum(hours), 1)
    labels = sorted({f"{u.cards}× {u.card} on {u.offer} {u.mode}" for u in uses})
    assignment = ReplicaAssignment(
        workload=job.name,
        kind=job.kind,
        uses=uses,
        peak_replicas=max(total, default=0),
        mean_replicas=round(mean, 3),
        configs=labels,
        cost=Decimal(0),
        rentals=[r.id for r in rentals],
    )
    if share:
        money.shares[job.name] = share
    return assignment, rentals


def _rental(
    problem: Problem,
    rental_id: str,
    offer_id: str,
    mode: str,
    units: int,
    start: int,
    end: int,
    workload: str | None = None,
) -> tuple[Rental, Fraction]:
    """One rental held from `start` to `end` (an hourly or spot one started for `workload`;
    a package: none), billed by `Problem.rental_money`."""
    billed, cost = problem.rental_money(mode, offer_id, end - start, units)
    offer = problem.offers[offer_id]
    rental = Rental(
        id=rental_id,
        offer=offer_id,
        card=offer.card,
        mode=mode,
        units=units,
        cards=units * offer.unit_cards,
        start=problem.axis.instant(start),
        end=problem.axis.instant(end),
        billed_hours=billed,
        cost=Decimal(0),  # stated with the plan's other lines
        workload=workload,
    )
    return rental, cost


def package_share(problem: Problem, config: Config) -> Fraction:
    """The held cards a job uses, priced at the package's (or commitment's) card-hour rate."""
    card_hours = sum(length for _, length in config.runs) * config.cards
    return card_hours * card_hour_price(problem.offers[config.offer], config.mode)


def _package_rentals(problem: Problem, solution: Solution) -> list[tuple[Rental, Fraction]]:
    rentals = []
    for (offer_id, mode), bought in sorted(solution.packages.items()):
        committed = problem.committed_purchases((offer_id, mode))  # paid as commitments
        for day, count in sorted(bought.items()):
            extra = count - committed.get(day, 0)
            if extra <= 0:
                continue
            a, b = problem.package((offer_id, mode), day)  # 00:00 to 00:00 local: real hours
            rental_id = f"{offer_id}/{mode}/{problem.axis.date(day):%Y-%m-%d}"
            rentals.append(_rental(problem, rental_id, offer_id, mode, extra, a, b))
    return rentals


def _commitment_rentals(problem: Problem) -> list[tuple[Rental, Fraction]]:
    return [
        (committed_rental(f, problem.offers[f.offer], problem.axis, f"{f.name}#{k + 1}"), f.cost)
        for k, f in enumerate(problem.fixed)
    ]


def committed_rental(
    f: FixedRental, offer: Offer, axis: TimeAxis, rental_id: str, cost: Decimal = Decimal(0)
) -> Rental:
    """A rental a commitment fixes, as a plan lists it (its cost: the money rule's line)."""
    return Rental(
        id=rental_id,
        offer=f.offer,
        card=offer.card,
        mode=f.mode,
        units=f.units,
        cards=f.units * offer.unit_cards,
        start=axis.instant(f.start),
        end=axis.instant(f.end),
        billed_hours=f.billed_hours,
        cost=cost,
        committed=True,
    )
