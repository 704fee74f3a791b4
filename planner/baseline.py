"""The two plans gpuplan's optimum is measured against (docs/rules.md, rule 11).

*naive*: jobs in order of earliest start, each on its cheapest hourly config at the earliest
hour its stock allows. *heuristic*: what a careful person does by rule: spot for
checkpointable work, cheapest hourly for the rest, packages only where a job alone fills
them more cheaply than renting, and package cards already held reused for free (waiting
for a held card where its window allows, rather than buying another), each job on held
cards staying on the same unit(s) all along, as the checker's rule 5 on machines asks
(planner.ledger); jobs that run on one pool only placed as the exact solve of those jobs
alone places them (planner.forced), where the held units carry them; a service's base
load on packages where cheaper, the rest on the hourly config (or per segment the mix of
hourly configs) that costs least for its series; services first or train jobs first,
whichever order costs less.
Both are greedy, never look back, and return None where stock runs out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction
from itertools import compress
from operator import lt

import networkx as nx

from planner.configs import Config
from planner.cover import cheapest_mix
from planner.forced import Forced
from planner.ledger import Ledger
from planner.problem import Job, Problem
from planner.rules import package_hours, packages_until
from planner.serving import ReplicaJob
from planner.solution import Solution


def _order(problem: Problem) -> Iterator[Job]:
    graph = nx.DiGraph()
    graph.add_nodes_from(j.index for j in problem.jobs)
    graph.add_edges_from((b, j.index) for j in problem.jobs for b in j.after)
    key = {j.index: (j.earliest, j.index) for j in problem.jobs}
    for index in nx.lexicographical_topological_sort(graph, key=key.__getitem__):
        yield problem.jobs[index]


def _tie(problem: Problem, config: Config) -> tuple[int, int, int]:
    return (config.cards, config.span, problem.offer_rank[config.offer])


def _earliest(job: Job, config: Config, ready: int) -> Iterator[int]:
    return (s for s in job.start_range(config) if s >= ready)


def naive_solution(problem: Problem) -> Solution | None:
    return greedy(problem, careful=False)[0]


def heuristic_solution(problem: Problem) -> Solution | None:
    return greedy(problem, careful=True)[0]


def greedy(
    problem: Problem, careful: bool, forced: Sequence[Forced] = ()
) -> tuple[Solution | None, str]:
    """The naive (careful=False) or heuristic plan, or None and why it has none. The
    heuristic is the cheapest of the orders a careful person might take: serving first (its
    base load on packages that train jobs then reuse), or train jobs first (packages bought
    for jobs that need them, their idle cards then serving for free); and train jobs first
    again with the jobs that run on one pool only placed first as the `forced` packages'
    proven optimum places them (planner.forced: greedy in order of earliest start, such
    jobs can buy a package each where one holds them all in turn). The first on a tie."""
    plan, why = _greedy(problem, careful, trains_first=False)
    if not careful:
        return plan, why
    pins = pinnable(problem, forced)
    # with pins, train jobs first only: serving first never won on the quarters measured
    # (the mix generator's 30 and 100 workloads, q3), and each order costs a greedy pass
    orders = [(True, ())] + ([(True, pins)] if pins else [])
    for trains_first, pinned in orders:
        other, other_why = _greedy(problem, careful, trains_first, pinned)
        if other is not None and (plan is None or other.cost(problem) < plan.cost(problem)):
            plan, why = other, other_why
    return plan, why


def pinned(problem: Problem, forced: Sequence[Forced]) -> Solution | None:
    """The heuristic's pass with train jobs first and the `forced` placements pinned
    before anything else (`greedy`'s third order alone); None where it finds no plan."""
    return _greedy(problem, True, True, pinnable(problem, forced))[0]


def bought_first(
    problem: Problem, forced: Sequence[Forced], key: tuple[str, str], day: int
) -> Solution | None:
    """`pinned`'s pass with one unit-package of pool `key` bought on local `day` before
    anything else, its cards then reused like any held ones; None where it finds no plan."""
    package = Forced(key, packages=1, jobs=(), exact=False, bought=((day, 1),))
    return _greedy(problem, True, True, [package, *pinnable(problem, forced)])[0]


def pinnable(problem: Problem, forced: Sequence[Forced]) -> list[Forced]:
    """The forced placements the greedy pins: those with jobs and packages placed, of jobs
    that wait for no other."""
    return [
        f
        for f in forced
        if f.placed and f.bought and not any(problem.jobs[i].after for i, *_ in f.placed)
    ]


def _greedy(
    problem: Problem, careful: bool, trains_first: bool, pinned: Sequence[Forced] = ()
) -> tuple[Solution | None, str]:
    ledger = Ledger(problem)
    replicas: dict[tuple[int, int, int], int] = {}
    configs = [0] * len(problem.jobs)
    starts = [0] * len(problem.jobs)
    ends = [0] * len(problem.jobs)
    placed = set()
    for forced in pinned:  # their packages and runs before anything else
        for day, units in forced.bought:
            ledger.buy(forced.key, day, 1, units)
        # in order of start, each where whole free units carry it all along (the exact
        # solve counts cards, not machines); one that has none is placed with the rest
        for index, k, start in sorted(forced.placed, key=lambda p: (p[2], p[0])):
            config = problem.jobs[index].configs[k]
            if ledger.packages_needed(config, start) != (0, 0, 0):
                continue
            ledger.place(config, start, None)
            configs[index], starts[index], ends[index] = k, start, start + config.span
            placed.add(index)
    if not trains_first:
        served, why = _replicas(problem, ledger, careful)
        if served is None:
            return None, why
        replicas = served
    for job in _order(problem):
        if job.index in placed:
            continue
        ready = max([ends[b] for b in job.after], default=0)
        choice = _choose(problem, ledger, job, ready, careful)
        if choice is None:
            if not any(c.mode == "hourly" and not c.held for c in job.configs):
                return None, f"{job.name} has no hourly config (no hourly offer can run it)"
            return None, f"stock runs out for {job.name} before its deadline"
        k, start, packages = choice
        config = job.configs[k]
        ledger.place(config, start, packages)
        configs[job.index], starts[job.index] = k, start
        ends[job.index] = start + config.span
    if trains_first:
        served, why = _replicas(problem, ledger, careful)
        if served is None:
            return None, why
        replicas = served
    bought = {key: dict(sorted(b.items())) for key, b in ledger.bought.items() if b}
    return Solution(tuple(configs), tuple(starts), bought, replicas), ""


def _replicas(
    problem: Problem, ledger: Ledger, careful: bool
) -> tuple[dict[tuple[int, int, int], int] | None, str]:
    """Serve and reserve first. Naive: every segment on the hourly config that costs least
    over the workload's own series (alone; infeasible where its stock runs out). Heuristic:
    package units already held and idle (commitments, pinned packages, train jobs' packages
    when train jobs went first) carry what they can, free but for disks; then the base load
    of the rest — the level held in most hours — on the package config with the lowest
    price per unit of capacity, when that is cheaper than renting it hourly, and the rest on
    the hourly config that costs least for that series, or the next where its stock runs
    out."""
    replicas: dict[tuple[int, int, int], int] = {}
    for j, job in enumerate(problem.replica_jobs):
        hourly = [k for k, c in enumerate(job.configs) if c.rented]
        if not hourly:
            return None, f"{job.name} has no hourly config"
        covered = [0] * len(problem.segments)  # capacity carried by package replicas
        held_replicas = [0] * len(problem.segments)
        if careful and not job.hold:  # units held already: commitments, pinned or bought
            _reuse_idle(problem, ledger, j, replicas, covered, held_replicas)
        base = _base_load(problem, job, covered) if careful else 0
        plan = _package_base(problem, ledger, j, base) if base else None
        if plan is not None:
            k, bought = plan
            capacity = job.configs[k].capacity
            for s, count in enumerate(bought):
                if count:
                    replicas[(j, k, s)] = replicas.get((j, k, s), 0) + count
                    covered[s] += count * capacity
                    held_replicas[s] += count
        # the hourly config that costs least over this job's own series (rule 11); careful:
        # and the next one where stock runs out
        candidates = list(hourly)
        series = {k: _hourly_counts(problem, job, k, covered, held_replicas) for k in candidates}
        cost = {k: _hourly_cost(problem, job, k, line) for k, line in series.items()}
        candidates.sort(key=lambda k: (cost[k], k))
        if careful:
            single = cost[candidates[0]]
            if _take_mix(problem, ledger, j, candidates, single, covered, held_replicas, replicas):
                continue  # a mix of hourly configs, per segment, cheaper than any one config
        else:
            candidates = candidates[:1]
        why = ""
        for h in candidates:
            trial = ledger.snapshot()
            counts = series[h]
            why = _take_hourly(problem, trial, job, h, counts)
            if not why:
                ledger.adopt(trial)
                replicas.update({(j, h, s): n for s, n in enumerate(counts) if n})
                break
        if why:
            return None, why
    return replicas, ""


def _take_mix(
    problem: Problem,
    ledger: Ledger,
    j: int,
    ks: list[int],
    single: Fraction,
    covered: list[int],
    held: list[int],
    replicas: dict[tuple[int, int, int], int],
) -> bool:
    """Rent, per segment, the cheapest mix of hourly configs `ks` for what packages leave
    (a small replica at night, large ones by day), where that costs less in all (setups
    included) than `single`, the cheapest single config's series, and stock allows; True
    if taken."""
    job = problem.replica_jobs[j]
    items = [
        (
            job.configs[k].capacity,
            problem.integer(problem.replica_rate(job.name, job.configs[k]).per_hour),
        )
        for k in ks
    ]
    series = {k: [0] * len(problem.segments) for k in ks}
    memo: dict[tuple[int, int], tuple[int, ...] | None] = {}
    for s in range(len(problem.segments)):
        need = (max(0, job.demand[s] - covered[s]), max(0, job.minimum[s] - held[s]))
        if need not in memo:
            memo[need] = cheapest_mix(items, *need)
        counts = memo[need]
        if counts is None:
            return False
        for k, n in zip(ks, counts, strict=True):
            series[k][s] = n
    kept = {k: job.kept(problem.segments, line) for k, line in series.items() if any(line)}
    mixed = sum((_hourly_cost(problem, job, k, line) for k, line in kept.items()), Fraction(0))
    if len(kept) < 2 or mixed >= single:
        return False
    trial = ledger.snapshot()
    for k, line in kept.items():
        if _take_hourly(problem, trial, job, k, line):
            return False
    ledger.adopt(trial)
    for k, line in kept.items():
        replicas.update({(j, k, s): n for s, n in enumerate(line) if n})
    return True


def _reuse_idle(
    problem: Problem,
    ledger: Ledger,
    j: int,
    replicas: dict[tuple[int, int, int], int],
    covered: list[int],
    held_replicas: list[int],
) -> None:
    """Replicas on package units already held and idle (commitments, pinned packages, those
    bought for train jobs) carry what they can of the rest, free but for their disks: the
    most capacity per unit first. A
    replica takes whole units here, whatever its cards (the plan may share them finer)."""
    job = problem.replica_jobs[j]
    options = sorted(
        (Fraction(c.units, c.capacity), k)
        for k, c in enumerate(job.configs)
        if c.held and any(ledger.held.get((c.offer, c.mode), ()))
    )
    for _, k in options:
        config = job.configs[k]
        key = (config.offer, config.mode)
        held, used = ledger.line(ledger.held, key), ledger.line(ledger.used, key)
        for s, (a, b) in enumerate(problem.segments):
            if not job.active(s):
                continue
            short = -(-max(0, job.demand[s] - covered[s]) // config.capacity)
            need = max(short, job.minimum[s] - held_replicas[s], 0)
            idle = min(held[h] - used[h] for h in range(a, b)) // config.units
            most = job.bounds[config][s] - replicas.get((j, k, s), 0)
            n = min(need, idle, most)
            if n > 0:
                replicas[(j, k, s)] = replicas.get((j, k, s), 0) + n
                covered[s] += n * config.capacity
                held_replicas[s] += n
                ledger.add(ledger.used, key, a, b, n * config.units)


def _hourly_counts(
    problem: Problem, job: ReplicaJob, k: int, covered: list[int], held: list[int]
) -> list[int]:
    """Replicas of hourly config `k` per segment for what package replicas leave (holds
    kept)."""
    config = job.configs[k]
    counts = [
        max(-(-max(0, job.demand[s] - covered[s]) // config.capacity), job.minimum[s] - held[s], 0)
        for s in range(len(problem.segments))
    ]
    return job.kept(problem.segments, counts)


def _hourly_cost(problem: Problem, job: ReplicaJob, k: int, counts: list[int]) -> Fraction:
    """What those replicas cost on their own rentals: held hours plus setup per rise."""
    return problem.replica_rate(job.name, job.configs[k]).series(counts, problem.segments)


def _take_hourly(
    problem: Problem, ledger: Ledger, job: ReplicaJob, k: int, counts: list[int]
) -> str:
    """Rent those replicas, each rise's setup hours first (rules 6-7); why not, or ""."""
    config = job.configs[k]
    setup = problem.replica_setup[(job.name, config.offer)]
    before = 0
    for s, count in enumerate(counts):
        if count:
            a, b = problem.segments[s]
            rise = max(0, count - before)
            if not ledger.take_hourly(config.offer, a - setup, a, rise * config.units):
                return f"stock of {config.offer} hourly runs out for {job.name}"
            if not ledger.take_hourly(config.offer, a, b, count * config.units):
                return f"stock of {config.offer} hourly runs out for {job.name}"
        before = count
    return ""


def _base_load(problem: Problem, job: ReplicaJob, covered: list[int]) -> int:
    """The level of demand left by `covered` held in most hours while the job is active."""
    hours: dict[int, int] = {}
    for s, (a, b) in enumerate(problem.segments):
        if job.active(s):
            left = max(0, job.demand[s] - covered[s])
            hours[left] = hours.get(left, 0) + (b - a)
    return max(hours, key=lambda level: (hours[level], -level)) if hours else 0


def _package_base(
    problem: Problem, ledger: Ledger, j: int, base: int
) -> tuple[int, list[int]] | None:
    """Buy packages carrying `base` over the job's active days (and its holds) if cheaper
    than hourly: of the package configs whose stock and cap allow them, the one that costs
    least over those days (ties: least per nominal hour, then config order). The config
    and its replicas per segment."""
    job = problem.replica_jobs[j]
    hourly = min(
        (problem.replica_rate(job.name, c).per_hour / c.capacity for c in job.configs if c.rented),
        default=None,
    )
    hours = sum(b - a for s, (a, b) in enumerate(problem.segments) if job.active(s))
    options = []
    for k, config in enumerate(job.configs):
        pool = problem.pools.get((config.offer, config.mode))
        if pool is None or not pool.days:
            continue
        count = -(-base // config.capacity)
        series = job.kept(
            problem.segments, [count if job.active(s) else 0 for s in range(len(problem.segments))]
        )
        kept = [s for s, n in enumerate(series) if n]
        first = problem.axis.day_of(problem.segments[kept[0]][0])
        packages = packages_until(problem.axis, first, pool.days, problem.segments[kept[-1]][1])
        price = pool.unit_price * config.units * count * packages
        per_hour = pool.unit_price * config.units / (package_hours(config.mode) * config.capacity)
        options.append((price, per_hour, k, count, series, kept, first, packages))
    for price, _, k, count, series, kept, first, packages in sorted(options, key=lambda o: o[:3]):
        if hourly is not None and price >= hourly * base * hours:
            return None  # the rest cost more still
        config = job.configs[k]
        pool = problem.pools[(config.offer, config.mode)]
        held = ledger.line(ledger.held, (config.offer, config.mode))
        axis = problem.axis
        span = range(axis.day_start(first), axis.after_days(first, packages * pool.days))
        units = count * config.units
        if pool.stock is not None and any(held[h] + units > pool.stock for h in span):
            continue
        if not ledger.cap_allows(config.offer, span.start, span.stop, units):
            continue
        ledger.buy((config.offer, config.mode), first, packages, units)
        for s in kept:
            a, b = problem.segments[s]
            ledger.add(ledger.used, (config.offer, config.mode), a, b, series[s] * config.units)
        return k, series
    return None


def _choose(
    problem: Problem, ledger: Ledger, job: Job, ready: int, careful: bool
) -> tuple[int, int, tuple[int, int, int] | None] | None:
    """(config index, start, packages to buy) for one job, or None."""
    modes = {"hourly"}
    if careful and job.workload.checkpoint_every is not None:
        modes = {"spot"} if any(c.mode == "spot" for c in job.configs) else modes
    rentals = sorted(
        (k for k, c in enumerate(job.configs) if not c.held and c.mode in modes),
        key=lambda k: (job.configs[k].cost, _tie(problem, job.configs[k])),
    )
    best: tuple[Fraction, tuple[int, int, int], int, int, tuple[int, int, int] | None] | None = None
    for k in rentals:
        start = next(
            (
                s
                for s in _earliest(job, job.configs[k], ready)
                if ledger.rental_fits(job.configs[k], s)
            ),
            None,
        )
        if start is not None:
            best = (job.configs[k].cost, _tie(problem, job.configs[k]), k, start, None)
            break
    if careful:
        for k, config in enumerate(job.configs):
            if not config.held:
                continue
            for start in _held_starts(problem, ledger, job, config, ready):
                packages = ledger.packages_needed(config, start)
                if packages is None:
                    continue
                price = problem.pools[config.pool].unit_price * packages[0] * packages[2]
                candidate = (price + config.storage_cost, _tie(problem, config), k, start, packages)
                if best is None or candidate[:2] < best[:2]:
                    best = candidate
    return None if best is None else (best[2], best[3], best[4])


def _held_starts(
    problem: Problem, ledger: Ledger, job: Job, config: Config, ready: int
) -> Iterator[int]:
    """Where a careful person tries a job on held cards: its earliest start (the first at
    which the pool can cover it), the first and last hours that fit it inside each package
    already bought on that pool, and every hour at which a run on the pool ends, so that a
    job whose earliest start is taken, or lies outside a held package, still fills it
    rather than buying another."""
    allowed = job.start_range(config)
    usable = allowed if isinstance(allowed, range) else frozenset(allowed)
    tried = set()
    for start in _earliest(job, config, ready):
        if ledger.packages_needed(config, start) is not None:
            tried.add(start)
            yield start
            break
    used = ledger.line(ledger.used, config.pool)
    first = max(ready, 1)  # the hours where fewer units run than the hour before
    candidates = list(compress(range(first, len(used)), map(lt, used[first:], used[first - 1 :])))
    candidates += sorted(ledger.run_ends(config.pool))  # also where a unit it shares frees
    for day in sorted(ledger.bought.get(config.pool, {})):
        a, b = problem.package(config.pool, day)
        candidates += [max(a, ready), b - config.span]
    for start in candidates:
        if start >= ready and start in usable and start not in tried:
            tried.add(start)
            yield start
