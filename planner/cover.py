"""The least cost of whole replicas that carry a segment's demand and minimum: shared by the
solver's cover cuts and the solver-free lower bound."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

# Above this many DP steps the least cover falls back to its LP value (still a lower bound).
DP_STEPS = 400_000


def least_cover(items: Sequence[tuple[int, int]], demand: int, minimum: int) -> int:
    """min Σ w·r over non-negative integers r with Σ c·r ≥ demand and Σ r ≥ minimum, for
    items (c, w): the cost of `cheapest_mix`, or where its DP is too large the LP value
    rounded up (Σ w·r is an integer). 0 where nothing carries the demand (then no plan
    exists at all, and 0 bounds nothing)."""
    if (demand <= 0 and minimum <= 0) or not items:
        return 0
    kept = _undominated(items, demand)
    if (demand + 1) * (minimum + 1) * len(kept) > DP_STEPS:
        return math.ceil(_lp_cover(kept, demand, minimum))
    return _least_cost(kept, demand, minimum)


def _undominated(items: Sequence[tuple[int, int]], demand: int) -> list[tuple[int, int]]:
    """The items no other one beats: capacity capped at `demand` (more carries nothing
    more), and an item with at least the capacity at no more cost replaces it in any mix."""
    kept: list[tuple[int, int]] = []
    for c, w in sorted(
        {(min(c, max(demand, 0)), w) for c, w in items}, key=lambda x: (-x[0], x[1])
    ):
        if not kept or w < kept[-1][1]:  # larger ones come first: keep only cheaper ones
            kept.append((c, w))
    return kept


def _least_cost(items: Sequence[tuple[int, int]], demand: int, minimum: int) -> int:
    """The cost of `cheapest_mix` by the same dynamic program, keeping costs only."""
    best = _layers(items, demand, minimum)[minimum][demand]
    return 0 if best == math.inf else int(best)


def _layers(items: Sequence[tuple[int, int]], demand: int, minimum: int) -> list[list[float]]:
    """Layer n holds the least cost of exactly n replicas (at least `minimum` in the last
    layer) per demand covered (capped at `demand`)."""
    inf = math.inf
    layers = [[inf] * (demand + 1) for _ in range(minimum + 1)]
    layers[0][0] = 0
    for n in range(minimum + 1):
        here, up = layers[n], layers[min(minimum, n + 1)]
        for d in range(demand + 1):  # ascending: at n = minimum a step stays in this layer
            cost = here[d]
            if cost == inf:
                continue
            for c, w in items:
                d2 = min(demand, d + c)
                if (d2 != d or up is not here) and cost + w < up[d2]:
                    up[d2] = cost + w
    return layers


def _lp_cover(items: Sequence[tuple[int, int]], demand: int, minimum: int) -> Fraction:
    """The LP value of `least_cover`: some optimal vertex uses at most two items."""
    best: Fraction | None = None

    def consider(value: Fraction) -> None:
        nonlocal best
        if best is None or value < best:
            best = value

    for c, w in items:  # one item: enough of it for both rows
        if c > 0 or demand <= 0:
            consider(w * max(Fraction(max(demand, 0), max(c, 1)), Fraction(minimum)))
    for (c1, w1), (c2, w2) in ((a, b) for a in items for b in items if a[0] > b[0]):
        # both rows tight: r1 + r2 = minimum, c1·r1 + c2·r2 = demand
        r1 = Fraction(demand - c2 * minimum, c1 - c2)
        r2 = minimum - r1
        if r1 >= 0 and r2 >= 0:
            consider(w1 * r1 + w2 * r2)
    return Fraction(0) if best is None else best  # None: nothing carries it, no plan


def cheapest_mix(
    items: Sequence[tuple[int, int]], demand: int, minimum: int
) -> tuple[int, ...] | None:
    """A count per item of least Σ w·r with Σ c·r ≥ demand and Σ r ≥ minimum, by dynamic
    programming over (demand covered, replicas), both capped at their targets (every step
    raises one until both are capped); None where the DP would be too large or nothing
    carries the demand."""
    if demand <= 0 and minimum <= 0:
        return tuple(0 for _ in items)
    if not items or (demand + 1) * (minimum + 1) * len(items) > DP_STEPS:
        return None
    inf = math.inf
    best = [[inf] * (minimum + 1) for _ in range(demand + 1)]
    step: list[list[tuple[int, int, int] | None]] = [
        [None] * (minimum + 1) for _ in range(demand + 1)
    ]
    best[0][0] = 0
    for d in range(demand + 1):
        for n in range(minimum + 1):
            here = best[d][n]
            if here == inf:
                continue
            for i, (c, w) in enumerate(items):
                d2, n2 = min(demand, d + c), min(minimum, n + 1)
                if (d2, n2) != (d, n) and here + w < best[d2][n2]:
                    best[d2][n2] = here + w
                    step[d2][n2] = (i, d, n)
    if best[demand][minimum] == inf:
        return None
    counts = [0] * len(items)
    d, n = demand, minimum
    while (d, n) != (0, 0):
        back = step[d][n]
        assert back is not None
        i, d, n = back
        counts[i] += 1
    return tuple(counts)


def covers_by_count(
    items: Sequence[tuple[int, int]], demand: int, most: int
) -> list[list[float]] | None:
    """Per count n of replicas from 0 to `most` (at least `most` for the last) and per
    demand r from 0 to `demand`: the least Σ w·r over exactly n replicas that carry at least
    r (math.inf where none do); None where the dynamic program would be too large."""
    demand, most = max(demand, 0), max(most, 1)
    kept = _undominated(items, demand)  # a swap for a dominating item keeps n and carries more
    if (demand + 1) * (most + 1) * max(len(kept), 1) > DP_STEPS:
        return None
    layers = _layers(kept, demand, most)
    for layer in layers:  # exactly d covered → at least r covered
        for d in range(demand - 1, -1, -1):
            layer[d] = min(layer[d], layer[d + 1])
    return layers
