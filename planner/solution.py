"""A solution in problem indices (config and start per job, packages bought) and its Plan.

Shared by the CP-SAT decoder and the baselines, so every plan is assembled one way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from planner.configs import Config
from planner.domain.money import money
from planner.domain.plan import Assignment, Plan, Rental, ReplicaAssignment, ReplicaUse, Run
from planner.prices import card_hour_price
from planner.pricing import paid_terms
from planner.problem import Problem

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
        rental = storage = Fraction(0)
        for j, k in sorted({(j, k) for j, k, _ in self.replicas}):
            if job is not None and j != job:
                continue
            replica_job = problem.replica_jobs[j]
            rate = problem.replica_rate(replica_job.name, replica_job.configs[k])
            paid, disk = rate.series_money(self.series(problem, j, k), problem.segments)
            rental, storage = rental + paid, storage + disk
        return rental, storage

    def series(self, problem: Problem, j: int, k: int) -> list[int]:
        """Replicas of replica job `j`'s config `k`, per segment."""
        return [self.replicas.get((j, k, s), 0) for s in range(len(problem.segments))]


def to_plan(problem: Problem, solution: Solution, status: PlanStatus) -> Plan:
    """Rentals and assignments of a solution; costs rounded once per line."""
    scenario = problem.scenario
    axis = problem.axis
    currency = scenario.spec.currency
    rentals: list[Rental] = []
    assignments: list[Assignment | ReplicaAssignment] = []
    for job in problem.jobs:
        config = solution.config(problem, job.index)
        start = solution.starts[job.index]
        ids: list[str] = []
        runs = [(start + offset, start + offset + length) for offset, length in config.runs]
        if not config.held:
            for r, (a, b) in enumerate(runs):
                rental_id = f"{job.name}#{r + 1}" if len(runs) > 1 else job.name
                ids.append(rental_id)
                rental, _ = _rental(
                    problem, rental_id, config.offer, config.mode, config.units, a, b, job.name
                )
                rentals.append(rental)
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
                cost=money(config.cost, currency),
                package_share=money(package_share(problem, config), currency)
                if config.held
                else None,
                rentals=ids,
            )
        )
    for j in range(len(problem.replica_jobs)):
        assignment, own = _replica_assignment(problem, solution, j)
        assignments.append(assignment)
        rentals += own
    rentals += _package_rentals(problem, solution)
    rentals += _commitment_rentals(problem)
    return Plan(
        scenario=scenario.name,
        status=status,
        currency=currency,
        total_cost=money(solution.cost(problem), currency),
        rentals=rentals,
        assignments=assignments,
    )


def _replica_assignment(
    problem: Problem, solution: Solution, j: int
) -> tuple[ReplicaAssignment, list[Rental]]:
    """A replica job's uses (constant runs of replicas per config) and its hourly rentals:
    each rise in a config's replica count starts rentals, each fall ends those that bill the
    least (`prices.ReplicaRate.rentals`)."""
    job = problem.replica_jobs[j]
    currency = problem.scenario.spec.currency
    uses: list[ReplicaUse] = []
    rentals: list[Rental] = []
    own = Fraction(0)
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
            own += rental[1]
            rentals.append(rental[0])
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
        cost=money(own + solution.replica_money(problem, j)[1], currency),
        package_share=money(share, currency) if share else None,
        rentals=[r.id for r in rentals],
    )
    return assignment, rentals


def _rental(
    problem: Problem,
    rental_id: str,
    offer_id: str,
    mode: str,
    units: int,
    start: int,
    end: int,
    workload: str,
) -> tuple[Rental, Fraction]:
    """One hourly or spot rental started for `workload`, billed by `Problem.rental_money`."""
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
        cost=money(cost, problem.scenario.spec.currency),
        workload=workload,
    )
    return rental, cost


def package_share(problem: Problem, config: Config) -> Fraction:
    """The held cards a job uses, priced at the package's (or commitment's) card-hour rate."""
    card_hours = sum(length for _, length in config.runs) * config.cards
    return card_hours * card_hour_price(problem.offers[config.offer], config.mode)


def _package_rentals(problem: Problem, solution: Solution) -> list[Rental]:
    rentals = []
    currency = problem.scenario.spec.currency
    for (offer_id, mode), bought in sorted(solution.packages.items()):
        offer = problem.offers[offer_id]
        committed = problem.committed_purchases((offer_id, mode))  # paid as commitments
        for day, count in sorted(bought.items()):
            extra = count - committed.get(day, 0)
            if extra <= 0:
                continue
            a, b = problem.package((offer_id, mode), day)  # 00:00 to 00:00 local: real hours
            billed, cost = problem.rental_money(mode, offer_id, b - a, extra)
            rentals.append(
                Rental(
                    id=f"{offer_id}/{mode}/{problem.axis.date(day):%Y-%m-%d}",
                    offer=offer_id,
                    card=offer.card,
                    mode=mode,
                    units=extra,
                    cards=extra * offer.unit_cards,
                    start=problem.axis.instant(a),
                    end=problem.axis.instant(b),
                    billed_hours=billed,
                    cost=money(cost, currency),
                )
            )
    return rentals


def _commitment_rentals(problem: Problem) -> list[Rental]:
    currency = problem.scenario.spec.currency
    rentals = []
    for k, f in enumerate(problem.fixed):
        offer = problem.offers[f.offer]
        rentals.append(
            Rental(
                id=f"{f.name}#{k + 1}",
                offer=f.offer,
                card=offer.card,
                mode=f.mode,
                units=f.units,
                cards=f.units * offer.unit_cards,
                start=problem.axis.instant(f.start),
                end=problem.axis.instant(f.end),
                billed_hours=f.billed_hours,
                cost=money(f.cost, currency),
                committed=True,
            )
        )
    return rentals
