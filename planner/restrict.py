"""Top-K configs: a smaller problem that keeps, per workload, the configs most likely to be
chosen, and every config a given plan uses.

Its plans are plans of the full problem (a subset of the options), mapped back by `Restricted`;
its optimum is not the full problem's, so its solver bound is not a bound of the full problem
and a restricted solve is never called optimal. `solve` uses it where the full model is too
large to search in the time limit, with the solver-free relaxation (`planner.bound`) as bound.

Ranking, cheapest first: a train config by what it costs alone (held cards at their package's
price per card-hour over its runs); a replica config by its price per hour per request (or
card) it carries, held cards at the package's price per card-hour — plus the configs cheapest
per replica-hour, for the hours the minimum replicas rather than the demand decide.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from fractions import Fraction

from planner.configs import Config, ReplicaConfig
from planner.prices import marginal_card_hour_price
from planner.problem import Problem
from planner.solution import Solution

# (configs kept per train job, replica configs kept per serve/reserve workload by price per
# request, and by price per replica for the minimum replicas), most first: `top_k` keeps
# the first whose model fits
LEVELS = ((8, 6, 2), (4, 3, 1), (3, 2, 1), (2, 1, 1), (1, 1, 1))


@dataclass(frozen=True)
class Restricted:
    """The smaller problem and, per job, the full index of each config it kept."""

    problem: Problem
    jobs: tuple[tuple[int, ...], ...]
    replica_jobs: tuple[tuple[int, ...], ...]

    def to_full(self, solution: Solution) -> Solution:
        return Solution(
            tuple(self.jobs[i][k] for i, k in enumerate(solution.configs)),
            solution.starts,
            solution.packages,
            {(j, self.replica_jobs[j][k], s): n for (j, k, s), n in solution.replicas.items()},
        )

    def from_full(self, solution: Solution) -> Solution:
        """A full plan whose configs were all kept, in the smaller problem's indices."""
        jobs = [{full: k for k, full in enumerate(kept)} for kept in self.jobs]
        replicas = [{full: k for k, full in enumerate(kept)} for kept in self.replica_jobs]
        return Solution(
            tuple(jobs[i][k] for i, k in enumerate(solution.configs)),
            solution.starts,
            solution.packages,
            {(j, replicas[j][k], s): n for (j, k, s), n in solution.replicas.items()},
        )


def top_k(
    problem: Problem,
    keep: Solution | None = None,
    fits: Callable[[Problem], bool] | None = None,
    bought: Collection[tuple[str, str]] = (),
) -> Restricted:
    """The problem with each workload's cheapest configs and those `keep` uses: as many as
    `LEVELS` allows while `fits` accepts the smaller problem (else the fewest). `bought`:
    package pools every plan buys; each workload also keeps its cheapest config on each,
    since a package held anyway has cards to spare that cost nothing more (ranked at the
    package's price per card-hour, they would never be kept)."""
    for level in LEVELS:
        restricted = _kept(problem, keep, *level, bought=bought)
        if fits is None or fits(restricted.problem):
            break
    return restricted


def _kept(
    problem: Problem,
    keep: Solution | None,
    train_k: int,
    replica_k: int,
    replica_min_k: int,
    bought: Collection[tuple[str, str]] = (),
) -> Restricted:
    jobs, kept_jobs = [], []
    for job in problem.jobs:
        order = sorted(
            range(len(job.configs)), key=lambda k: (_train_rank(problem, job.configs[k]), k)
        )
        chosen = set(order[:train_k]) | ({keep.configs[job.index]} if keep else set())
        for pool in bought:  # the cheapest on each pool bought anyway
            on = [k for k in order if job.configs[k].held and job.configs[k].pool == pool]
            chosen |= set(on[:1])
        indices = tuple(sorted(chosen))
        kept_jobs.append(indices)
        jobs.append(replace(job, configs=tuple(job.configs[k] for k in indices)))
    replica_jobs, kept_replicas = [], []
    for j, rjob in enumerate(problem.replica_jobs):
        configs = rjob.configs
        by_request = sorted(
            range(len(configs)),
            key=lambda k: (_replica_hour(problem, rjob.name, configs[k]) / configs[k].capacity, k),
        )
        by_replica = sorted(
            range(len(configs)), key=lambda k: (_replica_hour(problem, rjob.name, configs[k]), k)
        )
        chosen = set(by_request[:replica_k]) | set(by_replica[:replica_min_k])
        for pool in bought:  # the cheapest per request on each pool bought anyway
            on = [k for k in by_request if configs[k].held and configs[k].pool == pool]
            chosen |= set(on[:1])
        if keep:
            chosen |= {k for (jj, k, _), n in keep.replicas.items() if jj == j and n}
        indices = tuple(sorted(chosen))
        kept_replicas.append(indices)
        kept = tuple(configs[k] for k in indices)
        replica_jobs.append(replace(rjob, configs=kept, bounds={c: rjob.bounds[c] for c in kept}))
    smaller = replace(problem, jobs=tuple(jobs), replica_jobs=tuple(replica_jobs))
    return Restricted(smaller, tuple(kept_jobs), tuple(kept_replicas))


def _card_hour(problem: Problem, offer: str, mode: str) -> Fraction:
    return marginal_card_hour_price(problem.offers[offer], mode)


def _train_rank(problem: Problem, config: Config) -> Fraction:
    if not config.held:
        return config.cost
    hours = sum(length for _, length in config.runs)
    return (
        config.storage_cost + _card_hour(problem, config.offer, config.mode) * config.cards * hours
    )


def _replica_hour(problem: Problem, job: str, config: ReplicaConfig) -> Fraction:
    rate = problem.replica_rate(job, config)
    if config.rented:
        return rate.per_hour
    return _card_hour(problem, config.offer, config.mode) * config.cards + rate.disk
