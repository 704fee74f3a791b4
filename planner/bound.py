"""A lower bound on the cost of every plan, computed without the solver
(a real bound). It sees every workload, so a plan's gap means something even where CP-SAT reports
no bound (large quarters) or one that sees only a package some job cannot avoid.

The argument (a Lagrangian relaxation of "cards used ≤ cards held"). A plan pays its
commitments (a constant), its hourly and spot rentals and storage, and for each package
pool P: price_P × (N_P − K_P), with N_P unit-packages bought and K_P of them committed
(paid among the commitments). One unit-package holds at most h_P card-hours (unit cards ×
its longest real length; a day has 25 h across a daylight-saving change), and workloads use
U_P ≤ h_P × N_P card-hours of P. For any λ_P in [0, price_P ÷ h_P]:

    price_P (N_P − K_P) ≥ price_P (N_P − K_P) − λ_P (h_P N_P − U_P)
                        = N_P (price_P − λ_P h_P) − price_P K_P + λ_P U_P
                        ≥ M_P (price_P − λ_P h_P) − price_P K_P + λ_P U_P

where M_P ≤ N_P is a number of unit-packages every plan buys: its committed ones, or what a
job that can run nowhere else needs. λ_P U_P is then charged to the workloads that use P: a
card-hour of P costs them λ_P. Each workload is priced alone at its cheapest under those
charges (ignoring stock, setup and billing round-ups, which only add cost): a train job on
its cheapest config; a serve or reserve workload per segment at the least cost of whole
replicas that carry the demand and the minimum (`least_cover`). Committed hourly cards are
free to use. Every choice of λ gives a valid bound; `lower_bound` takes the best of a few.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from planner.configs import Config, ReplicaConfig
from planner.cover import least_cover
from planner.problem import Problem

Key = tuple[str, str]
STEPS = 8  # λ of a pool every plan must buy is tried at 0, 1/8, … 8/8 of its full rate


@dataclass(frozen=True)
class Bound:
    """The bound, with the charge per card-hour of each package pool it was priced at, and
    the unit-packages it counts as bought in each pool (M_P above)."""

    total: Fraction
    rates: dict[Key, Fraction]
    least: dict[Key, int] = field(default_factory=dict)


def lower_bound(problem: Problem, forced: dict[Key, int] | None = None) -> Bound:
    """The best bound over a few charges: full rates everywhere, and for each pool that some
    plan must buy, every step from free to full (pool by pool, keeping the best). `forced`:
    unit-packages per pool that every plan is proven to buy (planner.forced), where that is
    more than the one-job arithmetic here sees."""
    packages = _packages(problem)
    full = {key: p.unit_price / p.card_hours for key, p in packages.items()}
    least = _least_bought(problem, packages)
    for key, count in (forced or {}).items():
        if key in packages:
            least[key] = max(least.get(key, 0), count)
    floors = _Floors(problem)
    # what every charge pays alike: the commitments, less the committed packages that the
    # purchase counts include
    paid = sum((f.cost for f in problem.fixed), Fraction(0)) - problem.bought_commitments

    def bound(rates: dict[Key, Fraction]) -> Fraction:
        total = paid + sum(
            (n * (packages[key].unit_price - rates[key] * packages[key].card_hours))
            for key, n in least.items()
        )
        total += sum((floors.job(j.index, rates) for j in problem.jobs), Fraction(0))
        for j in range(len(problem.replica_jobs)):
            total += floors.replicas(j, rates)
        return total

    best = Bound(bound(full), dict(full), least)
    for key in sorted(least):
        for step in range(STEPS):
            rates = {**best.rates, key: full[key] * step / STEPS}
            total = bound(rates)
            if total > best.total:
                best = Bound(total, rates, least)
    return best


class _Floors:
    """Each workload's cheapest cost under given charges, remembered by the charges of the
    pools it can use (a step changes one pool's charge; most workloads never see it)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.memo: dict[tuple[str, int, tuple[Fraction, ...]], Fraction] = {}
        self.pools = [sorted({c.pool for c in j.configs if c.held}) for j in problem.jobs]
        self.replica_pools = [
            sorted({(c.offer, c.mode) for c in r.configs if c.held}) for r in problem.replica_jobs
        ]

    def job(self, index: int, rates: dict[Key, Fraction]) -> Fraction:
        key = ("train", index, tuple(rates.get(p, Fraction(0)) for p in self.pools[index]))
        if key not in self.memo:
            configs = self.problem.jobs[index].configs
            self.memo[key] = min(_config_floor(c, rates) for c in configs)
        return self.memo[key]

    def replicas(self, index: int, rates: dict[Key, Fraction]) -> Fraction:
        pools = self.replica_pools[index]
        key = ("replica", index, tuple(rates.get(p, Fraction(0)) for p in pools))
        if key not in self.memo:
            self.memo[key] = _replica_floor(self.problem, index, rates)
        return self.memo[key]


@dataclass(frozen=True)
class _Package:
    """A buyable pool as the bound sees it."""

    unit_price: Fraction  # one unit-package (the pool's, from planner.prices)
    longest: int  # its longest real length in hours (a local day may last 25 h)
    unit_cards: int
    committed: int  # unit-packages commitments buy inside the horizon

    @property
    def card_hours(self) -> int:
        """The most card-hours one unit-package holds."""
        return self.longest * self.unit_cards


def _packages(problem: Problem) -> dict[Key, _Package]:
    out = {}
    for key, pool in problem.pools.items():
        if pool.days:
            days = range(problem.axis.days)
            longest = max(b - a for a, b in (problem.package(key, d) for d in days))
            committed = sum(problem.committed_purchases(key).values())
            cards = problem.offers[key[0]].unit_cards
            out[key] = _Package(pool.unit_price, longest, cards, committed)
    return out


def _least_bought(problem: Problem, packages: dict[Key, _Package]) -> dict[Key, int]:
    """Unit-packages every plan buys, per pool where that is more than 0: the committed ones,
    or for a job whose every config is on that pool, its units in packages laid end to end
    over its shortest span."""
    least = {key: p.committed for key, p in packages.items() if p.committed}
    for job in problem.jobs:
        pools = {c.pool for c in job.configs}
        if len(pools) != 1 or not all(c.held for c in job.configs):
            continue
        key = next(iter(pools))
        if key not in packages:
            continue  # committed hourly cards: nothing to buy
        longest = packages[key].longest
        need = min(c.units * -(-c.span // longest) for c in job.configs)
        least[key] = max(least.get(key, 0), need)
    return least


def _config_floor(config: Config, rates: dict[Key, Fraction]) -> Fraction:
    if not config.held:
        return config.cost
    card_hours = sum(length for _, length in config.runs) * config.cards
    return config.storage_cost + card_hours * rates.get(config.pool, Fraction(0))


def _replica_floor(problem: Problem, j: int, rates: dict[Key, Fraction]) -> Fraction:
    job = problem.replica_jobs[j]
    hour = {c: _replica_hour(problem, job.name, c, rates) for c in job.configs}
    scale = math.lcm(*(h.denominator for h in hour.values()))
    memo: dict[tuple[tuple[tuple[int, int], ...], int, int], int] = {}
    total = 0
    for s, (a, b) in enumerate(problem.segments):
        if not job.active(s):
            continue
        # the configs this segment may use (bounds lose no plan; see ReplicaJob.with_bounds)
        items = tuple(
            sorted({(c.capacity, int(hour[c] * scale)) for c in job.configs if job.bounds[c][s]})
        )
        key = (items, job.demand[s], job.minimum[s])
        if key not in memo:
            memo[key] = least_cover(items, job.demand[s], job.minimum[s])
        total += (b - a) * memo[key]
    return Fraction(total, scale)


def _replica_hour(
    problem: Problem, name: str, c: ReplicaConfig, rates: dict[Key, Fraction]
) -> Fraction:
    """What one replica-hour of `c` is charged: rented, its units' hourly price; on held
    cards, its cards at the pool's charge (committed hourly cards: free); plus its disk."""
    rate = problem.replica_rate(name, c)
    if c.rented:
        return rate.per_hour
    return c.cards * rates.get((c.offer, c.mode), Fraction(0)) + rate.disk
