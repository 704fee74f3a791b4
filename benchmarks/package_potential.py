"""What one optional package pool could save a quarter's serving at most, by a relaxation
that counts its cards but not the setups of rented replicas: a diagnostic, not a bound.

    python benchmarks/package_potential.py SCENARIO OFFER:MODE [OFFER:MODE ...]

For each pool named: the serve and reserve workloads' least cost per segment (whole
replicas, each segment alone, rented replicas paying their openings as the solver-free
bound prices them) with none of the pool's cards, and with at most one unit's cards free
to share among them in every hour (a min-plus convolution over the workloads of each one's
least cover with k of those cards); then the days one package bought on each start day
holds, and what it nets against buying none (its price less what serving saves). Train
jobs are left at their cheapest rented config. It assumes one package held at a time and
leaves out setups and billing round-ups of rented replicas, so it is neither a bound nor a
plan: it says whether a relaxation that counts a package's cards could rule the package
out (a net above zero), and by how much it misses where it cannot.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.cover import least_cover  # noqa: E402
from planner.domain.load import load_scenario  # noqa: E402
from planner.problem import Problem, build_problem  # noqa: E402

Key = tuple[str, str]


def least_with_cards(problem: Problem, r: int, s: int, key: Key, most: int) -> list[Fraction]:
    """Replica job `r`'s least cost over segment `s` with at most k of pool `key`'s cards
    free (disk paid), for k = 0 … `most`; rented replicas pay their opening where the
    segment opens a run of demand."""
    job = problem.replica_jobs[r]
    a, b = problem.segments[s]
    openings = job.openings(problem.segments)
    rented: list[tuple[int, Fraction]] = []
    held: list[tuple[int, Fraction, int, int]] = []  # capacity, disk, cards, most replicas
    for c in job.configs:
        if not job.bounds[c][s]:
            continue
        rate = problem.replica_rate(job.name, c)
        if c.rented:
            lead = rate.opening(openings[s]) if s in openings else 0
            rented.append((c.capacity, rate.per_hour * (b - a + lead)))
        elif c.pool == key:
            cards = problem.held_cards(c.offer, c.cards)
            held.append((c.capacity, rate.disk * (b - a), cards, job.bounds[c][s]))
    scale = math.lcm(1, *(w.denominator for _, w in rented))
    items = [(capacity, int(w * scale)) for capacity, w in rented]
    memo: dict[tuple[int, int], Fraction | None] = {}

    def rent(demand: int, minimum: int) -> Fraction | None:
        demand, minimum = max(demand, 0), max(minimum, 0)
        if (demand, minimum) not in memo:
            if not demand and not minimum:
                memo[demand, minimum] = Fraction(0)
            else:
                found = least_cover(items, demand, minimum) if items else 0
                memo[demand, minimum] = Fraction(found, scale) if found else None
        return memo[demand, minimum]

    # every mix of held replicas within `most` cards: (cards, capacity, replicas, disk)
    mixes = [(0, 0, 0, Fraction(0))]
    for capacity, disk, cards, bound in held:
        mixes = [
            (used + k * cards, carried + k * capacity, n + k, paid + k * disk)
            for used, carried, n, paid in mixes
            for k in range(bound + 1)
            if used + k * cards <= most
        ]
    out = []
    for k in range(most + 1):
        costs = []
        for used, carried, n, paid in mixes:
            rest = rent(job.demand[s] - carried, job.minimum[s] - n)
            if used <= k and rest is not None:
                costs.append(paid + rest)
        out.append(min(costs))
    return out


def potential(problem: Problem, key: Key) -> tuple[Fraction, list[tuple[Fraction, int]]]:
    """Serving's least cost without the pool, and per start day what one package nets."""
    cards = problem.offers[key[0]].unit_cards
    axis = problem.axis
    without = [Fraction(0)] * axis.days
    within = [Fraction(0)] * axis.days
    for s, (a, _) in enumerate(problem.segments):
        active = [r for r, job in enumerate(problem.replica_jobs) if job.active(s)]
        if not active:
            continue
        shared = least_with_cards(problem, active[0], s, key, cards)
        for r in active[1:]:
            each = least_with_cards(problem, r, s, key, cards)
            shared = [min(shared[i] + each[k - i] for i in range(k + 1)) for k in range(cards + 1)]
        day = axis.day_of(a)
        without[day] += shared[0]
        within[day] += shared[cards]
    price = problem.pools[key].unit_price
    nets = []
    for d in range(axis.days):
        _, end = problem.package(key, d)
        held = range(d, min(axis.days, axis.day_of(end - 1) + 1))
        nets.append((price - sum(without[e] - within[e] for e in held), d))
    return sum(without, Fraction(0)), sorted(nets)


def main(path: str, pools: list[str]) -> None:
    problem = build_problem(load_scenario(path), serving=True)
    for name in pools:
        offer, mode = name.split(":")
        base, nets = potential(problem, (offer, mode))
        best = ", ".join(f"{problem.axis.date(d)}: {float(net):+,.2f}" for net, d in nets[:3])
        print(f"{name}: serving without it {float(base):,.2f}; one package nets {best}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
