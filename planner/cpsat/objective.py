"""The objective: total money, exactly (integers at the problem's money scale); and the
documented tie-break order (docs/rules.md, rule 12) as lexicographic levels."""

from __future__ import annotations

from ortools.sat.python import cp_model

from planner.cpsat.variables import Variables
from planner.domain.costs import PAID, CostTerm
from planner.problem import Problem
from planner.rules import PACKAGE_MODES


def cost_terms(problem: Problem, v: Variables) -> dict[CostTerm, cp_model.LinearExpr]:
    """Money per paid term (integers at the problem's money scale); their sum is the objective.

    Committed packages are among the packages bought: the package term subtracts them and
    the commitment term counts every commitment once.
    """
    terms: dict[CostTerm, list[cp_model.LinearExprT]] = {t: [] for t in PAID}
    for job in problem.jobs:
        for x, config in zip(v.choose[job.index], job.configs, strict=True):
            if config.rental_cost:
                terms[CostTerm(config.mode)].append(x * problem.integer(config.rental_cost))
            if config.storage_cost:
                terms[CostTerm.STORAGE].append(x * problem.integer(config.storage_cost))
    for key, bought in v.packages.items():
        price = problem.integer(problem.pools[key].unit_price)
        terms[CostTerm.PACKAGE] += [n * price for n in bought.values()]
    for (j, k, s), replicas in v.replicas.items():
        replica_job = problem.replica_jobs[j]
        rate = problem.replica_rate(replica_job.name, replica_job.configs[k])
        a, b = problem.segments[s]
        # per held hour, and the setup hours each start of a rented replica holds
        hour, disk = problem.integer(rate.hour), problem.integer(rate.disk)
        held = replicas * (b - a)
        started = v.starts[(j, k, s)] * rate.setup if rate.setup else 0
        if hour:
            terms[CostTerm.HOURLY] += [held * hour, started * hour]
        if disk:  # disks bill while the replica is held, setup hours included
            terms[CostTerm.STORAGE] += [held * disk, started * disk]
    for short in v.short:  # what minimums add to rentals that serve less
        replica_job = problem.replica_jobs[short.job]
        rate = problem.replica_rate(replica_job.name, replica_job.configs[short.config])
        terms[CostTerm.HOURLY].append(short.count * problem.integer(rate.hour * short.hours))
    for ends in v.ends:  # what steps and minimums add to stepped rentals as they end
        replica_job = problem.replica_jobs[ends.job]
        rate = problem.replica_rate(replica_job.name, replica_job.configs[ends.config])
        terms[CostTerm.HOURLY].append(ends.count * problem.integer(rate.hour * ends.hours))
    for f in problem.fixed:
        terms[CostTerm.COMMITMENT].append(problem.integer(f.cost))
    terms[CostTerm.PACKAGE].append(-problem.integer(problem.bought_commitments))
    return {t: cp_model.LinearExpr.sum(exprs) for t, exprs in terms.items()}


def tie_levels(problem: Problem, v: Variables) -> list[tuple[str, cp_model.LinearExpr]]:
    """Among plans of equal cost, the documented order (docs/rules.md, rule 12), one level at a
    time, each minimised with the levels before it fixed: fewer cards (each job's cards,
    each replica's cards per segment), earlier finishes, lower offer ids and billing modes
    (alphabetical rank), earlier package purchases, earlier starts for workloads listed
    first, then the lower config index (the order the problem lists configs in), so that
    the minimiser is one plan."""
    mode_rank = {m: i for i, m in enumerate(sorted({"hourly", "spot", *PACKAGE_MODES}))}
    modes = len(mode_rank)

    def rank(offer: str, mode: str) -> int:
        return problem.offer_rank[offer] * modes + mode_rank[mode] + 1

    cards: list[cp_model.LinearExprT] = []
    finish: list[cp_model.LinearExprT] = []
    offers: list[cp_model.LinearExprT] = []
    index: list[cp_model.LinearExprT] = []
    for job in problem.jobs:
        for k, (x, config) in enumerate(zip(v.choose[job.index], job.configs, strict=True)):
            cards.append(x * config.cards)
            offers.append(x * rank(config.offer, config.mode))
            index.append(x * k)
        finish.append(v.end[job.index])
    for (j, k, _), replicas in v.replicas.items():
        replica = problem.replica_jobs[j].configs[k]
        cards.append(replicas * replica.cards)
        offers.append(replicas * rank(replica.offer, replica.mode))
        index.append(replicas * (k + 1))
    days = [n * (d + 1) for bought in v.packages.values() for d, n in bought.items()]
    # workload order: of two jobs that could swap places, the one listed first starts first
    jobs = len(problem.jobs)
    order = [v.start[job.index] * (jobs - job.index) for job in problem.jobs]
    levels = [("cards", cards), ("finish", finish), ("offer", offers), ("package day", days)]
    levels += [("workload order", order), ("config", index)]
    return [(name, cp_model.LinearExpr.sum(terms)) for name, terms in levels if terms]
