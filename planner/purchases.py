"""The bound with the purchases of a few package pools decided day by day (a dynamic
program), instead of charged per card-hour.

planner.bound charges a card-hour of a package pool at most its price spread over every
card-hour a package holds, as if each package bought were used all day, every day. A pool
that pays only when well used (an 8-card machine-month for a desk of 4 cards on weekdays)
is then priced far below what any plan that buys it pays. Here, for a few pools P (`pick`),
every plan's purchases are seen instead through the days on which each P holds a package:

- on a day when P holds a package its cards are free to every workload, in any number;
  on a day when it holds none, they cannot be used at all;
- every package bought is paid in full.

Both relax the plan (a plan's packages hold only so many cards, and overlapping packages
cover no more days than packages laid end to end, which the program may buy instead), so
the least cost over all choices of days is a bound. Per day and set of pools holding a
package, each serve or reserve workload costs at least its least cover there
(planner.bound's floors, the other pools at their charges); a train job costs at least its
cheapest config off these pools, less, for each package whose span meets its window, what
that pool's cards would save it (counted for every such package: saving more only lowers
the bound). A job that runs only on these pools costs at least its cheapest config there,
and some package of its pools must meet its window (for up to `NEEDS` such jobs). The
program runs over days with, per pool, the days its last package still holds, and the
jobs met so far: a state space of the product of the package lengths, so `pick` keeps it
small.

On days a pool holds a package its cards may also carry a charge per card-hour (`inside`),
paid back to each package for the card-hours it holds within the horizon: the same
relaxation of "cards used ≤ cards held" as planner.bound's, inside the days held. The bound
is a least over choices of days, each affine in these charges, so concave in them;
`search` climbs them. The charge may also vary by segment (`profile`: where serving wants
more of a pool's cards than one package holds, the price of its scarce cards), as long as
no package's span is charged more than its price (charges.repair): then a package bought
for what it is paid back never pays, and every plan is still one of the program's choices.

A job whose window meets several packages has its saving counted once per package, so
train jobs may be priced the other way instead (`anywhere`): each at its cheapest with
these pools' cards at their charge on held days, on any day of its window, held or not.
Its plan runs it on held cards or off them, both among those choices, and pays that
charge for each card-hour it holds, which the packages are paid back. On the 30-workload
quarter of benchmarks/generate.py the A100 40G machine decided by day gains −3,182 over
the flat charges the first way and +1,722 the other; planner.bound searches together
the pools of the way whose pools gain more alone.

At the charges found, serve and reserve workloads may also pay the setups of the replicas
they start inside each day (`setups`): each day priced by planner.rises' program over its
own segments, free to start from any count unless a run of demand opens there
(planner.bound's `_Floors.rising_days`).
A plan's replicas in a day are one of that day's paths, whatever pools hold packages
then, so the days' sums stay below it. Climbing the charges with the setups counted
found little more (30 workloads: 64,574.20 at the end against 64,646.72 all along, in
ten times as long).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from planner import charges
from planner.problem import Problem
from planner.window import TAKEN  # a charge no cover takes: the cards are not held

if TYPE_CHECKING:
    from planner.bound import _Floors

Key = tuple[str, str]

# the most states the program may have (the product over its pools of their package
# lengths in days and counts, times the jobs' flags)
STATES = 60_000
# the charges on days a pool holds a package are tried in these parts of its full rate
STEPS = 8
# the most pools whose gain alone is measured (those that could gain most)
TRIED = 5
# the value of a state no choice reaches (in 64-bit integers money stays below 2**60)
UNREACHED = 2**61
# the most jobs that run only on the program's pools whose packages it tracks (each
# doubles its states; the others are priced at their cheapest, their packages untracked)
NEEDS = 3


def priced(
    problem: Problem,
    pools: Sequence[Key],
    rates: dict[Key, Fraction],
    floors: _Floors,
    fixed: Fraction,
    inside: Sequence[Fraction] | None = None,
    required: Sequence[int] | None = None,
    memo: dict[tuple[object, ...], Any] | None = None,
    rows: Sequence[tuple[Fraction, ...] | None] | None = None,
    anywhere: bool = False,
    setups: bool = False,
) -> Fraction:
    """The bound with `pools` bought by the program and every other pool at `rates`;
    `fixed`: the commitments and the other pools' package terms (planner.bound).
    `inside`: per pool, a charge per card-hour on days it holds a package (default 0),
    from which each package is paid back for the card-hours it holds in the horizon.
    `required`: per pool, unit-packages every plan buys (planner.bound's counted ones).
    `memo`: replica jobs' costs per day already summed, by job and charges, and train
    jobs' cheapest costs, from earlier calls with the same `pools` and `rates`.
    `rows`: per pool, a charge per card-hour for each segment instead (whole 1/PARTS, no
    package's span charged more than its price: `charges.repair`); serve and reserve
    workloads pay it, train jobs its least, and each package is paid back its segments.
    `anywhere`: train jobs that may also run off these pools pay their cheapest with these
    pools' cards at the held charge on any day of their windows (module docstring).
    `setups`: serve and reserve workloads also pay, day by day, the setups of the replicas
    they start inside the day (planner.bound's `_Floors.rising_days`), where the charges
    are flat."""
    memo = {} if memo is None else memo
    pools = list(pools)
    days = problem.axis.days
    masks = range(1 << len(pools))
    charge = list(inside) if inside is not None else [Fraction(0)] * len(pools)
    rows = list(rows) if rows is not None else [None] * len(pools)
    names = {}
    for i, line in enumerate(rows):
        if line is not None:
            charge[i] = min(line)  # what a train job pays at least, wherever it runs
            names[pools[i]] = _named(memo, line)

    def at(mask: int) -> dict[Key, Fraction]:
        held = {key: charge[i] if mask >> i & 1 else TAKEN for i, key in enumerate(pools)}
        return {**rates, **held}

    total = fixed
    # serve and reserve: per day and set of pools holding a package, summed in whole parts
    # of each job's own denominator (few distinct ones), then as fractions
    sums: list[dict[int, list[int]]] = [{} for _ in masks]
    day_of = problem.segment_days
    for r in range(len(problem.replica_jobs)):
        uses = floors.replica_pools[r]
        if not set(pools) & set(uses):
            total += floors.replicas(r, rates)
            continue
        for mask in masks:
            charged = at(mask)
            timed = {
                key: line
                for i, (key, line) in enumerate(zip(pools, rows, strict=True))
                if line is not None and mask >> i & 1 and key in uses
            }
            flat = tuple(charged.get(pool, Fraction(0)) for pool in uses if pool not in timed)
            seen = (r, flat, setups, *((key, names[key]) for key in timed))
            if seen not in memo:
                rising = floors.rising_days(r, charged) if setups and not timed else None
                if rising is not None:
                    memo[seen] = rising
                else:
                    if timed:
                        found = charges.replica_segments(
                            problem, r, charges.Charges(timed), charged
                        )
                    else:
                        found = floors.parts(r, charged)
                    memo[seen] = _per_day(days, day_of, *found)
            scale, parts = memo[seen]
            row = sums[mask].setdefault(scale, [0] * days)
            for d, x in enumerate(parts):
                row[d] += x
    by_day = []
    for per_scale in sums:  # in whole parts of the mask's common denominator, then fractions
        common = math.lcm(*per_scale)
        whole = [0] * days
        for scale, row in per_scale.items():
            for d, x in enumerate(row):
                whole[d] += x * (common // scale)
        by_day.append([Fraction(x, common) for x in whole])
    # train jobs: off these pools, less a saving per package whose span meets the window
    # (or, `anywhere`, at their cheapest with these pools' cards at the held charge)
    spans = [[problem.package(key, d) for d in range(days)] for key in pools]
    saving = [[Fraction(0)] * days for _ in pools]
    # the jobs that run only on these pools, and per pool and day, those a package meets
    needs: list[int] = []
    meets = [[0] * days for _ in pools]
    for job in problem.jobs:
        on = [c for c in job.configs if c.held and c.pool in pools]
        if not on:
            total += floors.job(job.index, rates)
            continue
        if ("off", job.index) not in memo:  # `rates` are the same across calls
            memo["off", job.index] = [
                floors.config(job, c, rates)
                for c in job.configs
                if not (c.held and c.pool in pools)
            ]
        off = memo["off", job.index]
        if off and anywhere:  # the days held untracked: the cards at their charge anywhere
            total += floors.job(job.index, {**rates, **dict(zip(pools, charge, strict=True))})
            continue
        free = {}
        for i, key in enumerate(pools):
            if any(c.pool == key for c in on):
                if ("free", job.index, i, charge[i]) not in memo:
                    cost = min(floors.config(job, c, at(1 << i)) for c in on if c.pool == key)
                    memo["free", job.index, i, charge[i]] = cost
                free[i] = memo["free", job.index, i, charge[i]]
        if not off:  # runs only on these pools: its cheapest there, and a package for it
            total += min(free.values())
            if len(needs) < NEEDS:
                for i, key in enumerate(pools):
                    if any(c.pool == key for c in on):
                        for d, (a, b) in enumerate(spans[i]):
                            if a < job.deadline and b > job.earliest:
                                meets[i][d] |= 1 << len(needs)
                needs.append(job.index)
            continue
        away = min(off)
        total += away
        for i, cost in free.items():
            if cost < away:
                for d, (a, b) in enumerate(spans[i]):
                    if a < job.deadline and b > job.earliest:
                        saving[i][d] += away - cost
    # each package paid back its charge on the card-hours it holds within the horizon
    for i, key in enumerate(pools):
        cards = problem.offers[key[0]].unit_cards
        line = rows[i]
        if line is None:
            for d, (a, b) in enumerate(spans[i]):
                saving[i][d] += charge[i] * cards * (min(b, problem.axis.hours) - a)
            continue
        # by segment, in whole 1/PARTS: prefix sums of a card's charges over each span's
        # segments (charges.Spans, as charges.repair caps them)
        segments = charges.Spans(problem, [key])
        before = [
            0,
            *itertools.accumulate(
                int(x * charges.PARTS) * h for x, h in zip(line, segments.hours, strict=True)
            ),
        ]
        for d, (lo, hi) in enumerate(segments.spans[key]):
            saving[i][d] += Fraction(cards * (before[hi] - before[lo]), charges.PARTS)
    wanted = list(required) if required is not None else [0] * len(pools)
    return total + _least(problem, pools, by_day, saving, (meets, len(needs)), wanted)


def _named(memo: dict[tuple[object, ...], Any], row: tuple[Fraction, ...]) -> int:
    """A small number for a row of charges, the same for equal rows (memo keys stay short)."""
    names: dict[tuple[Fraction, ...], int] = memo.setdefault(("rows",), {})
    return names.setdefault(row, len(names))


def _per_day(
    days: int, day_of: Sequence[int], scale: int, parts: Sequence[int]
) -> tuple[int, list[int]]:
    """Costs per segment (whole parts of `scale`) summed per local day (`day_of` each
    segment's: segments break at every 00:00)."""
    sums = [0] * days
    for d, x in zip(day_of, parts, strict=True):
        sums[d] += x
    return scale, sums


def _least(
    problem: Problem,
    pools: Sequence[Key],
    by_day: Sequence[Sequence[Fraction]],
    saving: Sequence[Sequence[Fraction]],
    needs: tuple[Sequence[Sequence[int]], int],
    required: Sequence[int],
) -> Fraction:
    """The least total over the days: each day's cost under the pools holding a package,
    plus each package's price less its savings, where every job that runs only on these
    pools meets a package bought (`needs`: per pool and day, the jobs a package bought
    that day meets as bits, and how many jobs) and each pool buys at least `required`
    packages. A state is, per pool, the days its last package still holds after the day
    (0: none) and the packages bought so far (up to what is required), and the jobs met
    so far. A package may be bought while another holds: it holds on from that day."""
    meets, count = needs
    flags = 1 << count
    lengths = [problem.pools[key].days for key in pools]
    # in whole parts of a common denominator: the program adds integers
    prices = [problem.pools[key].unit_price for key in pools]
    every = [*prices, *(x for row in by_day for x in row), *(x for row in saving for x in row)]
    scale = math.lcm(*(x.denominator for x in every))
    day = [[int(x * scale) for x in row] for row in by_day]
    buy = [
        [int((price - x) * scale) for x in row] for price, row in zip(prices, saving, strict=True)
    ]
    # the states as one array: per pool an axis of the days its last package still holds
    # (0 … its length), then per pool an axis of packages bought (0 … required), then the
    # jobs met (bits); exact in 64-bit integers where the money fits, else Python's
    k = len(pools)
    most = sum(abs(x) for row in day for x in row) + sum(abs(x) for row in buy for x in row)
    kind: type = np.int64 if most < 2**60 else object
    shape = (*(n + 1 for n in lengths), *(n + 1 for n in required), flags)
    value: np.ndarray = np.full(shape, UNREACHED, dtype=kind)
    value[(0,) * (2 * k + 1)] = 0
    # what a day costs by which pools hold a package, over the axes of days left
    grid = np.indices([n + 1 for n in lengths]).reshape(k, -1)
    holding = sum((grid[i] > 0).astype(np.int64) << i for i in range(k)).reshape(
        [n + 1 for n in lengths]
    )
    costs = np.array(day, dtype=kind)[holding]  # [days left …, day]
    costs = costs.reshape(*costs.shape[:-1], *(1 for _ in range(k + 1)), costs.shape[-1])
    for d in range(problem.axis.days):
        for i in range(k):  # buy a package of pool i today, or not
            bought = value.min(axis=i, keepdims=True) + buy[i][d]
            bought = _counted(bought, k + i)
            bought = _met(bought, meets[i][d])
            taken = np.full_like(value, UNREACHED)
            at = [slice(None)] * value.ndim
            at[i] = slice(lengths[i], lengths[i] + 1)
            taken[tuple(at)] = bought
            value = np.minimum(value, taken)
        value = np.minimum(value + costs[..., d], UNREACHED)
        for i in range(k):  # a day passes
            value = _passed(value, i)
    done: Any = (Ellipsis, *required, flags - 1)
    met_all = value[done]
    least = met_all.min()  # every job met, every pool's packages bought
    if least >= UNREACHED:  # none meets them all (no plan either): the jobs' costs stand
        least = value.min()
    return Fraction(int(least), scale)


def _counted(value: np.ndarray, axis: int) -> np.ndarray:
    """`value` with one more package bought on the count axis `axis` (capped at its top)."""
    if value.shape[axis] == 1:
        return value
    lower = [slice(None)] * value.ndim
    upper = [slice(None)] * value.ndim
    lower[axis], upper[axis] = slice(0, -1), slice(1, None)
    out = np.full_like(value, UNREACHED)
    out[tuple(upper)] = value[tuple(lower)]
    top = [slice(None)] * value.ndim
    top[axis] = slice(-1, None)
    out[tuple(top)] = np.minimum(out[tuple(top)], value[tuple(top)])
    return out


def _met(value: np.ndarray, jobs: int) -> np.ndarray:
    """`value` with the jobs `jobs` (bits) met as well, on the last axis."""
    if not jobs:
        return value
    out = np.full_like(value, UNREACHED)
    for f in range(value.shape[-1]):
        out[..., f | jobs] = np.minimum(out[..., f | jobs], value[..., f])
    return out


def _passed(value: np.ndarray, axis: int) -> np.ndarray:
    """`value` a day later on the days-left axis `axis`: each count falls by one, to 0."""
    out = np.full_like(value, UNREACHED)
    src = [slice(None)] * value.ndim
    dst = [slice(None)] * value.ndim
    src[axis], dst[axis] = slice(1, None), slice(0, -1)
    out[tuple(dst)] = value[tuple(src)]
    zero = [slice(None)] * value.ndim
    zero[axis] = slice(0, 1)
    out[tuple(zero)] = np.minimum(out[tuple(zero)], value[tuple(zero)])
    return out


def pick(
    problem: Problem,
    candidates: Sequence[Key],
    gains: dict[Key, Fraction],
    required: dict[Key, int],
) -> list[Key]:
    """The candidates with a positive gain alone, largest first, while the program's states
    stay within `STATES`."""
    chosen: list[Key] = []
    only = sum(  # the jobs that may need flags: those that run only on candidates
        1
        for j in problem.jobs
        if j.configs and all(c.held and c.pool in candidates for c in j.configs)
    )
    size = 1 << min(NEEDS, only)
    for key in sorted(candidates, key=lambda k: (-gains.get(k, Fraction(0)), k)):
        if gains.get(key, Fraction(0)) <= 0:
            break
        grown = size * problem.pools[key].days * (required.get(key, 0) + 1)
        if grown <= STATES:
            chosen.append(key)
            size = grown
    return chosen


def profile(
    problem: Problem, key: Key, rates: dict[Key, Fraction], floors: _Floors
) -> tuple[Fraction, ...]:
    """Per segment, a charge per card-hour of pool `key`'s cards where serving and reserves
    would want more of them than one package holds: ranked by what a card-hour of it saves
    them (their least cover at `rates` without the pool, less with its cards free), the
    saving of the first one the package's cards cannot all carry (0 where all fit). The
    price of a single package's scarce cards, as a linear program over that segment alone
    would charge it. Only a direction: `search` scales it within the packages' prices."""
    cards = problem.offers[key[0]].unit_cards
    price = problem.pools[key].unit_price
    most = price / cards  # a card-hour never carries more than a package's price
    off, free = {**rates, key: TAKEN}, {**rates, key: Fraction(0)}
    wants: list[list[tuple[Fraction, int]]] = [[] for _ in problem.segments]
    for r, job in enumerate(problem.replica_jobs):
        if key not in floors.replica_pools[r]:
            continue
        without, within = floors.segments(r, off), floors.segments(r, free)
        on = [c for c in job.configs if not c.rented and (c.offer, c.mode) == key]
        for s, (a, b) in enumerate(problem.segments):
            if not job.active(s) or without[s] <= within[s]:
                continue
            need = min((c.cards * job.need(c, s) for c in on if job.bounds[c][s]), default=0)
            if need:
                saved = min(most, (without[s] - within[s]) / (need * (b - a)))
                wants[s].append((saved, need))
    row = []
    for found in wants:
        left, charge = cards, Fraction(0)
        for saved, need in sorted(found, reverse=True):
            if need > left:
                charge = saved
                break
            left -= need
        row.append(charge)
    return tuple(row)


def search(
    problem: Problem,
    pools: Sequence[Key],
    rates: dict[Key, Fraction],
    floors: _Floors,
    fixed: Fraction,
    full: Sequence[Fraction],
    required: Sequence[int] | None = None,
    free: bool = False,
    shapes: Sequence[tuple[Fraction, ...]] | None = None,
    anywhere: bool = False,
) -> tuple[Fraction, tuple[Fraction, ...]]:
    """The best bound over the charges on days a pool holds a package, each pool's between
    0 and its full rate (`full`), from its charge in `rates` (planner.bound's flat one, a
    good start: the bound is at least the flat bound there, but for train jobs' savings)
    and, with `free`, from 0 as well. The bound is concave in them (a least over choices,
    each affine in the charges), so each pool's charge climbs in eighths of its full rate
    while the bound rises, one pool at a time, until no step raises it; then likewise in
    64ths and 512ths. (Where it has kinks, climbing one charge at a time may stop short of
    the peak: hence two starts.) `shapes`: per pool, a `profile` to try on top of the best
    flat charges. `anywhere`: train jobs priced the other way (`priced`). Returns the bound
    and those flat charges."""
    memo: dict[tuple[object, ...], Any] = {}

    def value(inside: list[Fraction]) -> Fraction:
        return priced(problem, pools, rates, floors, fixed, inside, required, memo, None, anywhere)

    starts = [[rates.get(key, Fraction(0)) for key in pools]]
    if free:
        starts.append([Fraction(0)] * len(pools))
    best = max(_climb(value, start, full) for start in starts)
    # then, for pools whose cards are scarce only at some hours, a charge by segment: the
    # best flat one plus a share of the pool's shape (`profile`), each package's span cut
    # back to its price (charges.repair). Where they are scarce at most hours the flat
    # charge already follows the shape; each step re-prices serving by segment
    hours = [b - a for a, b in problem.segments]
    uneven = [
        i
        for i, row in enumerate(shapes or ())
        if any(row) and sum(h for x, h in zip(row, hours, strict=True) if x) * 2 <= sum(hours)
    ]
    if not uneven:
        return best
    assert shapes is not None
    spans = charges.Spans(problem, [pools[i] for i in uneven])

    def shaped(share: list[Fraction]) -> Fraction:
        raw = {
            pools[i]: tuple(best[1][i] + part * x for x in shapes[i])
            for i, part in zip(uneven, share, strict=True)
        }
        fitted = charges.repair(problem, spans, charges.Charges(raw)).by_pool
        rows = [fitted.get(key) for key in pools]
        return priced(problem, pools, rates, floors, fixed, best[1], required, memo, rows, anywhere)

    # up to twice the shape; share 0 is the flat charge (rounded down to whole 1/PARTS: at
    # most the flat bound); finer steps only where the first ones gained
    tops = [Fraction(2)] * len(uneven)
    found = _climb(shaped, [Fraction(0)] * len(uneven), tops, (STEPS,), best[0])
    if found[0] > best[0]:
        found = _climb(shaped, list(found[1]), tops, (STEPS**2,), found[0])
    return (found[0], best[1]) if found[0] > best[0] else best


def _climb(
    value: Callable[[list[Fraction]], Fraction],
    start: list[Fraction],
    full: Sequence[Fraction],
    steps: Sequence[int] = (STEPS, STEPS**2, STEPS**3),
    known: Fraction | None = None,
) -> tuple[Fraction, tuple[Fraction, ...]]:
    """`search` from the charges `start`, the bound at given charges being `value`, in
    `steps` parts of `full`; `known`: a value at most the bound at `start`, if known."""
    inside = start
    best = value(inside) if known is None else known
    for parts in steps:
        better = True
        while better:
            better = False
            for i in range(len(full)):
                for way in (1, -1):
                    while True:
                        charge = inside[i] + way * full[i] / parts
                        if not 0 <= charge <= full[i]:
                            break
                        trial = [*inside[:i], charge, *inside[i + 1 :]]
                        total = value(trial)
                        if total <= best:
                            break
                        best, inside, better = total, trial, True
    return best, tuple(inside)
