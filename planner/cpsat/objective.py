"""The objective: total money, exactly (integers at the problem's money scale); and the
documented tie-break order (PRODUCT.md rule 12) as a second objective."""

from __future__ import annotations

from ortools.sat.python import cp_model

from planner.cpsat.variables import Variables, pool_cap, replica_bound
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
        replica = replica_job.configs[k]
        a, b = problem.segments[s]
        disk = problem.integer(problem.replica_disk_hour(replica_job.name, replica))
        if disk:  # disks bill while the replica is held, setup hours included
            terms[CostTerm.STORAGE].append(replicas * (b - a) * disk)
        if replica.rented:  # held hours plus ceil(setup) per start, per unit
            hour = problem.integer(problem.replica_hour_price(replica))
            terms[CostTerm.HOURLY].append(replicas * (b - a) * hour)
            setup = problem.replica_setup[(replica_job.name, replica.offer)]
            if setup:
                terms[CostTerm.HOURLY].append(v.starts[(j, k, s)] * setup * hour)
                if disk:
                    terms[CostTerm.STORAGE].append(v.starts[(j, k, s)] * setup * disk)
    for f in problem.fixed:
        terms[CostTerm.COMMITMENT].append(problem.integer(f.cost))
        if f.mode in PACKAGE_MODES:
            terms[CostTerm.PACKAGE].append(-problem.integer(f.cost))
    return {t: cp_model.LinearExpr.sum(exprs) for t, exprs in terms.items()}


def tie_expression(problem: Problem, v: Variables) -> cp_model.LinearExpr:
    """Among plans of equal cost: fewer cards, then earlier finishes, then lower offer ids
    (alphabetical rank), then earlier package purchases; each level outweighs all below."""
    days = problem.axis.days
    package_terms = [n * (d + 1) for bought in v.packages.values() for d, n in bought.items()]
    package_max = sum(pool_cap(problem, key) * days * (days + 1) // 2 for key in v.packages) + 1
    # replicas at the same level: fewer cards held
    for (j, k, s), replicas in v.replicas.items():
        replica_job = problem.replica_jobs[j]
        cards = replica_job.configs[k].cards
        package_terms.append(replicas * cards)
        package_max += cards * replica_bound(replica_job, replica_job.configs[k], s)
    jobs = len(problem.jobs)
    offer_weight = package_max
    offer_max = jobs * (len(problem.offer_rank) + 1) * offer_weight
    finish_weight = offer_max + 1
    finish_max = jobs * (problem.hours + 1) * finish_weight
    card_weight = finish_max + 1
    terms: list[cp_model.LinearExprT] = list(package_terms)
    for job in problem.jobs:
        for x, config in zip(v.choose[job.index], job.configs, strict=True):
            rank = problem.offer_rank[config.offer] + 1
            terms.append(x * (config.cards * card_weight + rank * offer_weight))
        terms.append(v.end[job.index] * finish_weight)
    return cp_model.LinearExpr.sum(terms)
