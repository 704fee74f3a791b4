"""How often the independent checker catches a bug in the model: a mutation score.

Each mutant is one deliberate bug in model-side code (rules, configs, problem, serving,
demand, solution, baselines, the CP-SAT encoding; never the checker). For each mutant the
repository's `planner/` package is copied into a fresh folder, patched there, and a child
process (PYTHONPATH = that folder, then the repository root for `tests`) solves a fixed set
of instances and checks every plan. A mutant is

  caught      the checker reports a violation for at least one instance's plan (where
              `solve`'s own self-test refused a plan first, the checker is asked alone);
  self-test   `solve` refused the plan by its own objective/cost consistency test, and the
              checker alone accepts that plan;
  crashed     any other exception (or the child timed out);
  survived    every plan was accepted and at least one plan, total or status differs from
              the unmutated run (a plan missing where the unmutated run had one counts here:
              a checker of plans cannot see plans that were never made);
  equivalent  every instance's plan JSON (minus timing and model-size fields) equals the
              unmutated run's;
  not applied the patch's old text is not found exactly once.

score = caught ÷ (mutants − equivalent − not applied).

    python benchmarks/mutation.py [--repo PATH] [--only NAME[,NAME…]] [--list] [--json OUT]

Figures from a run are recorded in benchmarks/RESULTS.md ("Checker mutation score").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
DATA_FOLDERS = ("models", "catalogs", "scenarios")
CHILD_TIMEOUT_S = 300.0
HAND_LIMIT_S = 10.0  # deterministic time units; every hand instance is optimal well within
Q3_LIMIT_S = 2.0  # q3-train: optimal at 2 units on the development machine (2 workers)
DETAIL_CHARS = 240  # a verdict's detail in the Markdown table (in full in --json)


# --- mutants ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # relative to the repository root
    old: str  # must occur exactly once in the file
    new: str
    bug: str  # one line: what is wrong after the patch


BILLED = "    return math.ceil(hours / billing.increment_hours) * billing.increment_hours"
OCCUPIED = "    return max(1, math.ceil(compute + setup))"
SPOT = "        compute = (compute / Fraction(factor)).limit_denominator(10**6)"

MUTANTS: tuple[Mutant, ...] = (
    # --- planner/rules.py: the cost rules (docs/rules.md) as pure functions ----------------------
    Mutant(
        "billed-hours-plus-one",
        "planner/rules.py",
        BILLED,
        BILLED + " + 1",
        "every hourly/spot rental is billed one hour more than the rule says",
    ),
    Mutant(
        "min-hours-ignored",
        "planner/rules.py",
        "    hours = max(Decimal(held), billing.min_hours)",
        "    hours = Decimal(held)",
        "billed hours ignore the offer's minimum (min_hours)",
    ),
    Mutant(
        "increment-ignored",
        "planner/rules.py",
        BILLED,
        "    return Decimal(math.ceil(hours))",
        "billed hours ignore the billing increment (rounded to whole hours only)",
    ),
    Mutant(
        "setup-rounded-separately",
        "planner/rules.py",
        OCCUPIED,
        "    return max(1, math.ceil(compute) + math.ceil(setup))",
        "occupied hours round compute and setup separately (setup added after rounding)",
    ),
    Mutant(
        "occupied-without-minimum-one",
        "planner/rules.py",
        OCCUPIED,
        "    return math.ceil(compute + setup)",
        "drops max(1, …) from occupied hours (never reached: work is positive) — equivalent",
    ),
    Mutant(
        "window-end-off-by-one",
        "planner/rules.py",
        "        useful = closes - opens - this_setup",
        "        useful = closes - opens + 1 - this_setup",
        "a daily window does one hour more work than it has hours (window edge off by one)",
    ),
    Mutant(
        "monthly-29-days",
        "planner/rules.py",
        "    return axis.after_days(day, 0), axis.after_days(day, days)",
        "    return axis.after_days(day, 0), axis.after_days(day, days - (days == 30))",
        "a monthly package lasts 29 days everywhere (rules.package_span: pools and commitments;"
        " package lengths moved there from package_hours with the time axis)",
    ),
    # --- planner/configs.py: a job's configs, runs and money -------------------------------
    Mutant(
        "config-billed-plus-one",
        "planner/configs.py",
        "else runs_money(offer, mode, units, runs)",
        "else runs_money(offer, mode, units, [(o, n + 1) for o, n in runs])",
        "a train config's rental cost bills each run one hour more",
    ),
    Mutant(
        "setup-dropped",
        "planner/configs.py",
        "    setup = setup_hours(offer, model, w.setup_minutes)",
        "    setup = Fraction(0)",
        "train configs take no setup time",
    ),
    Mutant(
        "spot-factor-dropped",
        "planner/configs.py",
        SPOT,
        "        compute = compute.limit_denominator(10**6)",
        "spot runs take no rework: compute hours not divided by the spot factor",
    ),
    Mutant(
        "spot-rework-twice",
        "planner/configs.py",
        SPOT,
        "        compute = (compute / Fraction(factor) ** 2).limit_denominator(10**6)",
        "spot rework applied twice",
    ),
    Mutant(
        "storage-dropped",
        "planner/configs.py",
        "return billed, rental, storage_money(offer, w, DailyRuns(runs).span)",
        "return billed, rental, Fraction(0) * DailyRuns(runs).span",
        "storage (disk_gb × disk price) is never charged",
    ),
    Mutant(
        "storage-running-hours-only",
        "planner/configs.py",
        "storage_money(offer, w, DailyRuns(runs).span)",
        "storage_money(offer, w, DailyRuns(runs).hours)",
        "storage billed for running hours only, not the whole span (stopped disks bill)",
    ),
    Mutant(
        "memory-fit-ignored",
        "planner/configs.py",
        "fits[key] = train_memory(model, card, count, sized).fits",
        "fits[key] = True",
        "train configs skip the memory check (fits = True)",
    ),
    Mutant(
        "usable-memory-fraction-one",
        "planner/configs.py",
        "setup = workload_setup(w, scenario.spec.usable_memory_fraction, scenario.spec.memory_margin)",  # noqa: E501 (the line as the source has it)
        "setup = workload_setup(w, 1.0, scenario.spec.memory_margin)",
        "train memory fit uses all of a card's memory (usable fraction 1.0)",
    ),
    Mutant(
        "measured-scaling-efficiency-ignored",
        "planner/configs.py",
        "        count,\n        speed.efficiency,\n        w.precision,",
        "        count,\n        measured_eff,\n        w.precision,",
        "measured throughput scales linearly with cards (scaling efficiency ignored)",
    ),
    Mutant(
        "measured-total-read-per-card",
        "planner/configs.py",
        "        measured.cards,\n        measured_eff,",
        "        1,\n        measured_eff,",
        "a measured tokens/s over N cards is read as the figure of one card",
    ),
    Mutant(
        "train-units-rounded-down",
        "planner/configs.py",
        "    units = math.ceil(count / offer.unit_cards)\n    return [",
        "    units = count // offer.unit_cards\n    return [",
        "a train config's units are cards ÷ unit_cards rounded down (0 units for 1 card of 2)",
    ),
    Mutant(
        "replica-capacity-plus-one",
        "planner/configs.py",
        "card.id, count, offer.id, mode, units, precision, capacity, speed",
        "card.id, count, offer.id, mode, units, precision, capacity + 1, speed",
        "a serve replica carries one request more than its memory and speed allow",
    ),
    Mutant(
        "spot-without-checkpoint",
        "planner/configs.py",
        'modes = [m for m in offer.modes if m != "spot" or w.checkpoint_every is not None]',
        "modes = list(offer.modes)",
        "jobs without checkpoints are offered spot (the config builder asserts against it)",
    ),
    # --- planner/problem.py: windows, dependencies, pools, commitments ---------------------
    Mutant(
        "deadline-plus-one",
        "planner/problem.py",
        "deadline = axis.hour_of_local(workload.deadline) if workload.deadline else hours",
        "deadline = axis.hour_of_local(workload.deadline) + 1 if workload.deadline else hours",
        "a job may finish one hour after its deadline",
    ),
    Mutant(
        "earliest-minus-one",
        "planner/problem.py",
        "axis.hour_of_local(workload.earliest_start) if workload.earliest_start else 0",
        "axis.hour_of_local(workload.earliest_start) - 1 if workload.earliest_start else 0",
        "a job may start one hour before its earliest start",
    ),
    Mutant(
        "window-start-plus-one",
        "planner/configs.py",
        "shapes.setdefault(runs.runs, []).append(start)",
        "shapes.setdefault(runs.runs, []).append(start + 1)",
        "windowed runs start one hour after the window opens (window openings moved from"
        " problem.py to configs._windowed_runs with the time axis)",
    ),
    Mutant(
        "after-dropped",
        "planner/problem.py",
        "tuple(names.index(a) for a in workload.after),",
        "(),",
        "dependencies (`after`) are dropped from the problem",
    ),
    Mutant(
        "after-tightening-too-strict",
        "planner/problem.py",
        "[jobs[p].earliest + _shortest(jobs[p]) for p in job.after]",
        "[jobs[p].earliest + _shortest(jobs[p]) + 1 for p in job.after]",
        "a dependent job's earliest start is pushed one hour too far (refuses valid plans)",
    ),
    Mutant(
        "pool-monthly-29-days",
        "planner/problem.py",
        "PACKAGE_DAYS[mode] if buyable else 0,",
        'PACKAGE_DAYS[mode] - (mode == "monthly") if buyable else 0,',
        "the model's monthly package pool lasts 29 days (pools now count local days)",
    ),
    Mutant(
        "package-price-90pc",
        "planner/problem.py",
        "prices.unit_price(offer, mode) if buyable else Fraction(0),",
        "prices.unit_price(offer, mode) * Fraction(9, 10) if buyable else Fraction(0),",
        "packages cost the model 90% of their price",
    ),
    Mutant(
        "hourly-commitment-billed-short",
        "planner/problem.py",
        "billed, cost = prices.rental_money(offer, c.mode, end - start, c.units)",
        "billed, cost = prices.rental_money(offer, c.mode, end - start - 1, c.units)",
        "an hourly commitment is billed one hour short",
    ),
    Mutant(
        "committed-package-units-not-in-pool",
        "planner/problem.py",
        "PoolCommitment(begin, end, c.units)",
        "PoolCommitment(begin, end, 0)",
        "committed package units are not in the pool the jobs draw from (committed packages"
        " now count among those bought, so the model also need not buy them)",
    ),
    Mutant(
        "replica-setup-not-billed",
        "planner/problem.py",
        "return math.ceil(setup_hours(scenario.offers[offer_id], model, workload.setup_minutes))",
        "return 0",
        "hourly serve/reserve replicas bill no setup hour per start",
    ),
    Mutant(
        "money-scale-doubled",
        "planner/problem.py",
        "scale = math.lcm(*(a.denominator for a in amounts)) if amounts else 1",
        "scale = 2 * math.lcm(*(a.denominator for a in amounts)) if amounts else 2",
        "the solver's money integers at twice the scale (a refactor that should be equivalent)",
    ),
    # --- planner/serving.py, planner/demand.py: serve and reserve demand --------------------
    Mutant(
        "demand-hour-shifted",
        "planner/demand.py",
        "demand_at(workload, axis.local(h)) if first <= h < last else 0",
        "demand_at(workload, axis.local(h) + dt.timedelta(hours=1)) if first <= h < last else 0",
        "the demand curve is read one hour late",
    ),
    Mutant(
        "growth-ignored",
        "planner/demand.py",
        "    level *= (1 + workload.growth_per_month) ** months",
        "    level *= 1.0",
        "monthly demand growth is ignored",
    ),
    Mutant(
        "demand-rounding-slack-looser",
        "planner/demand.py",
        "ROUNDING_SLACK = 1e-9",
        "ROUNDING_SLACK = 1e-7",
        "a looser float slack before ceil (should be equivalent on whole-number curves)",
    ),
    Mutant(
        "min-replicas-dropped",
        "planner/serving.py",
        "minimum = [w.min_replicas * inside for inside in spans[w.name]]",
        "minimum = [0 * inside for inside in spans[w.name]]",
        "serve workloads lose their min_replicas (in the replica jobs)",
    ),
    # --- planner/cpsat/: the CP-SAT encoding ------------------------------------------------
    Mutant(
        "min-replicas-not-enforced",
        "planner/cpsat/constraints.py",
        "                if job.minimum[s]:",
        "                if False:",
        "the CP-SAT model does not enforce min_replicas",
    ),
    Mutant(
        "after-not-enforced",
        "planner/cpsat/constraints.py",
        "                self.model.add(self.v.start[job.index] >= self.v.end[before])",
        "                pass",
        "the CP-SAT model does not enforce `after` (only the tightened windows remain)",
    ),
    Mutant(
        "stock-off-by-one",
        "planner/cpsat/constraints.py",
        "load.constrain(self.model, stock, self.v.sums)",
        "load.constrain(self.model, stock + 1, self.v.sums)",
        "hourly/spot stock allows one unit more (≤ stock + 1)",
    ),
    Mutant(
        "pool-capacity-plus-one",
        "planner/cpsat/constraints.py",
        "load.constrain(self.model, cap * unit_cards, self.v.sums)",
        "load.constrain(self.model, (cap + 1) * unit_cards, self.v.sums)",
        "jobs on package cards may use one unit more than is held",
    ),
    Mutant(
        "pool-stock-redundant-relaxed",
        "planner/cpsat/constraints.py",
        "self.model.add(self.held_units(key, a) <= cap)",
        "self.model.add(self.held_units(key, a) <= cap + 1)",
        "package stock row relaxed by one (redundant with free's domain) — equivalent",
    ),
    Mutant(
        "offer-cap-ignored",
        "planner/cpsat/constraints.py",
        "            if offer.max_units is None:",
        "            if True:",
        "the offer-wide cap (max_units) is not enforced",
    ),
    Mutant(
        "commitments-not-in-objective",
        "planner/cpsat/objective.py",
        "        terms[CostTerm.COMMITMENT].append(problem.integer(f.cost))",
        "        terms[CostTerm.COMMITMENT].append(\n"
        "            problem.integer(f.cost) * (f.mode in PACKAGE_MODES)\n"
        "        )",
        "the objective leaves out hourly commitments' fixed cost (now the commitment term)",
    ),
    Mutant(
        "replica-setup-not-in-objective",
        "planner/cpsat/objective.py",
        "        started = v.starts[(j, k, s)] * rate.setup if rate.setup else 0",
        "        started = 0",
        "the objective leaves out hourly replicas' setup hours",
    ),
    Mutant(
        "tie-index-shifted",
        "planner/cpsat/objective.py",
        "index.append(x * k)",
        "index.append(x * (k + 1))",
        "the last tie level counts configs from 1: a constant per job — equivalent",
    ),
    # --- planner/solution.py: the plan from a solution -------------------------------------
    Mutant(
        "solution-cost-without-commitments",
        "planner/pricing.py",
        "        terms[CostTerm.COMMITMENT] += f.cost",
        "        terms[CostTerm.COMMITMENT] += f.cost if f.mode in PACKAGE_MODES else 0",
        "the plan's total leaves out hourly commitments (a solution's money moved from"
        " Solution.cost to pricing.paid_terms)",
    ),
    Mutant(
        "money-rounds-up",
        "planner/domain/money.py",
        "    return from_minor(to_minor(amount, currency), currency)",
        '    return from_minor(__import__("math").ceil(Fraction(amount) * 100), currency)',
        "every money line the model writes rounds up instead of half-even (`money`, moved"
        " from solution.py to domain/money.py; the checker rounds with its own `rounded`)",
    ),
    Mutant(
        "rental-cost-rounds-up",
        "planner/solution.py",
        "cost=money(cost, problem.scenario.spec.currency),",
        "cost=money(Fraction(-(-cost * 100 // 1), 100), problem.scenario.spec.currency),",
        "each hourly rental's cost line rounds up instead of half-even",
    ),
    Mutant(
        "package-starts-at-01",
        "planner/solution.py",
        "            a, b = problem.package((offer_id, mode), day)",
        "            a, b = (x + 1 for x in problem.package((offer_id, mode), day))",
        "bought packages are written as starting at 01:00",
    ),
    Mutant(
        "replica-rentals-capped-at-one",
        "planner/solution.py",
        "while len(open_rentals) < series[s]:",
        "while len(open_rentals) < min(series[s], 1):",
        "serve rentals not matched to replicas: at most one rental per config",
    ),
    # --- planner/ledger.py (the greedy baselines' ledger) -------------------------------------
    Mutant(
        "baseline-stock-off-by-one",
        "planner/ledger.py",
        "if stock is not None and line[h] + held[h] + config.units > stock:",
        "if stock is not None and line[h] + held[h] + config.units > stock + 1:",
        "the greedy baselines allow one unit over stock",
    ),
    # --- added after the independent checker: the code the refactor brought ------------------
    # planner/rules.py: setup, the time axis (package spans, daily runs)
    Mutant(
        "setup-bytes-as-bits",
        "planner/rules.py",
        "    return Fraction(gigabytes * 8 / offer.link_gbps / 3600)",
        "    return Fraction(gigabytes / offer.link_gbps / 3600)",
        "setup downloads gigabytes as gigabits (× 8 dropped): setup 8 times too short",
    ),
    Mutant(
        "workload-setup-minutes-ignored",
        "planner/rules.py",
        "    minutes = workload_setup_minutes if workload_setup_minutes is not None else offer",
        "    minutes = None if workload_setup_minutes is not None else offer",
        "a workload's own setup_minutes is ignored (the download time is used instead)",
    ),
    Mutant(
        "daily-setup-once-on-hourly",
        "planner/rules.py",
        "        this_setup = setup if (setup_every_day or not runs) else Fraction(0)",
        "        this_setup = setup if not runs else Fraction(0)",
        "a windowed job on hourly/spot pays setup on its first day only, not each day's rental",
    ),
    Mutant(
        "package-span-24h-days",
        "planner/rules.py",
        "    return axis.after_days(day, 0), axis.after_days(day, days)",
        "    return axis.after_days(day, 0), axis.after_days(day, 0) + 24 * days",
        "a package lasts 24 h per day even across a daylight-saving change (not to local 00:00)",
    ),
    Mutant(
        "package-card-hour-price-29-days",
        "planner/rules.py",
        "    return 24 * PACKAGE_DAYS[mode]",
        '    return 24 * (PACKAGE_DAYS[mode] - (mode == "monthly"))',
        "a monthly package's card-hour price is spread over 29 days (rules.package_hours: the"
        " old monthly-29-days patch, which since the time axis only prices shares and idle)",
    ),
    # planner/configs.py
    Mutant(
        "max-cards-ignored",
        "planner/configs.py",
        "            if (w.max_cards and count > w.max_cards) or (",
        "            if (False) or (",
        "a train job may use more cards than its max_cards",
    ),
    Mutant(
        "windows-every-24h",
        "planner/configs.py",
        "following = (axis.window(d, window) for d in range(day + 1, axis.days))",
        "following = ((opens + 24 * (d - day), closes + 24 * (d - day)) "
        "for d in range(day + 1, axis.days))",
        "a windowed job's later windows are 24 × n real hours after its first (the old rule),"
        " not at local wall-clock time across a daylight-saving change",
    ),
    # planner/cpsat/constraints.py
    Mutant(
        "replica-setup-not-held-in-stock",
        "planner/cpsat/constraints.py",
        "            if (c.offer, c.mode) != key or not setup:",
        "            if True:",
        "hourly replica rentals' setup hours are not held against stock or the offer cap"
        " (Constraints.replica_setup_usage empty; the bug the independent checker found)",
    ),
    Mutant(
        "committed-package-counted-twice",
        "planner/cpsat/constraints.py",
        "        return cp_model.LinearExpr.sum(covering)",
        "        return cp_model.LinearExpr.sum(covering) + sum(\n"
        "            c.units for c in pool.committed if c.start <= hour < c.end\n"
        "        )",
        "committed packages counted twice in a pool's held units (Constraints.held_units; the"
        " bug the independent checker found)",
    ),
    Mutant(
        "config-starts-not-enforced",
        "planner/cpsat/constraints.py",
        "                if starts is not None and starts != union:",
        "                if False:",
        "a windowed job's config may start at another config's window opening (run shape"
        " paired with the wrong start across a daylight-saving change)",
    ),
    # planner/demand.py
    Mutant(
        "demand-read-at-standard-time",
        "planner/demand.py",
        "demand_at(workload, axis.local(h)) if first <= h < last else 0",
        "demand_at(workload, axis.local(0) + dt.timedelta(hours=h)) if first <= h < last else 0",
        "the demand curve is read at the horizon start's UTC offset, not local wall-clock time",
    ),
    # planner/solution.py
    Mutant(
        "replica-rental-starts-at-serve",
        "planner/solution.py",
        "                open_rentals.append(a - problem.replica_setup[(job.name, config.offer)])",
        "                open_rentals.append(a)",
        "hourly replica rentals are written from the hour they serve, not ceil(setup) before",
    ),
    # planner/pricing.py: the model's pricing by cost term
    Mutant(
        "pricing-committed-packages-paid-twice",
        "planner/pricing.py",
        "    terms[CostTerm.PACKAGE] += bought - problem.bought_commitments",
        "    terms[CostTerm.PACKAGE] += bought",
        "committed packages are paid twice in the plan's total (as commitments and as bought)",
    ),
    Mutant(
        "pricing-round-up-whole-billed",
        "planner/pricing.py",
        "*round_up(offer, c.mode, c.billed_hours, ran, c.units)",
        "*round_up(offer, c.mode, c.billed_hours, 0, c.units)",
        "the reported round-up of a train rental is its billed hours, not billed − used",
    ),
    Mutant(
        "pricing-idle-beyond-horizon",
        "planner/pricing.py",
        "        inside = {h: n for h, n in line.items() if 0 <= h < problem.hours}",
        "        inside = dict(line)",
        "idle package hours include those beyond the horizon (reported twice)",
    ),
    Mutant(
        "pricing-month-of-end",
        "planner/pricing.py",
        '        by_month[f"{r.start:%Y-%m}"] += exact',
        '        by_month[f"{r.end:%Y-%m}"] += exact',
        "spend per month books a rental in the month it ends, not the month it starts",
    ),
    Mutant(
        "package-share-per-unit",
        "planner/prices.py",
        "    return unit_price(offer, mode) / (hours * offer.unit_cards)",
        "    return unit_price(offer, mode) / hours",
        "a held card-hour is priced per unit, not per card (package shares and idle of"
        " multi-card machines × unit_cards)",
    ),
    Mutant(
        "replica-disk-setup-hours-unbilled",
        "planner/prices.py",
        "        return self.hour * hours, self.disk * hours",
        "        return self.hour * hours, self.disk * held_hours",
        "the plan bills a replica's disk for the hours it serves, not its setup hours (rule 9:"
        " disks bill while held)",
    ),
    # planner/solution.py: what the plan states about each train assignment
    Mutant(
        "assignment-end-at-first-run",
        "planner/solution.py",
        "                end=axis.instant(runs[-1][1]),",
        "                end=axis.instant(runs[0][1]),",
        "a windowed job's assignment states the end of its first run as its end",
    ),
    Mutant(
        "assignment-compute-hours-without-rework",
        "planner/solution.py",
        "                compute_hours=round(float(config.compute_hours), 4),",
        "                compute_hours=round("
        "float(config.compute_hours * Fraction(config.spot_factor)), 4),",
        "a spot assignment states its compute hours without the rework factor (rule 2)",
    ),
    Mutant(
        "replicas-needed-rounded-down",
        "planner/serving.py",
        "-(-self.demand[segment] // config.capacity)",
        "self.demand[segment] // config.capacity",
        "the replicas a config needs round demand ÷ capacity down (the model's replica bounds "
        "then forbid the cheapest cover: its 'optimum' is dearer than the checked baselines)",
    ),
)


# The first run (benchmarks/RESULTS.md, "Before") had the first 50 mutants and these 31
# instances; `--as-before` runs just those, to compare like with like.
BEFORE_MUTANTS = 50
BEFORE_INSTANCES = (
    *("seed-13b-finetune", "seed-70b-serving", "seed-70b-catalog", "q3-train"),
    *("ninety-minutes", "min-hours", "increment", "setup", "window", "package"),
    *("share-package", "stock", "stock-infeasible", "deadline", "after", "spot"),
    *("weekly-beyond", "months", "commit-weekly", "commit-hourly", "storage", "offer-cap"),
    *("ties", "memory", "usable-memory", "machine", "sub-cent", "reserve-hourly"),
    *("reserve-weekly-setup", "serve-curve", "serve-night-job"),
)

# --- instances (built and solved in the child) --------------------------------------------

SEEDS = ("seed-13b-finetune", "seed-70b-serving", "seed-70b-catalog", "q3-train")
HOURLY = {"price": 10, "stock": 4}
BERLIN = {"timezone": "Europe/Berlin", "start": "2026-10-24", "days": 4}  # 25 h on the 25th


def _hand_instances() -> dict[str, Any]:
    """Small hand-worked instances (tests/test_planner_instances.py, test_serving_model.py);
    each value builds (offers, workloads, extra scenario fields)."""
    from tests.planning import job, offer

    def o(id: str = "o", **fields: Any) -> dict[str, Any]:
        return offer(id, hourly=HOURLY, **fields)

    spot = {"price": 5, "preemptions_per_hour": 0.5, "restart_minutes": 30, "stock": 2}
    setup_30 = {"setup_minutes": 30}
    return {
        # 1.5 h → 2 h billed = 20
        "ninety-minutes": ([o()], [job("j", 1.5)], {}),
        # 2 h held, minimum 3 h → 30
        "min-hours": ([offer("o", hourly={**HOURLY, "min_hours": 3})], [job("j", 2)], {}),
        # 5 h held, increment 2 h → 6 h = 60
        "increment": ([offer("o", hourly={**HOURLY, "increment_hours": 2})], [job("j", 5)], {}),
        # 1.5 h of work + 30 min setup → ceil(2.0) = 2 h = 20
        "setup": (
            [{**o(), **setup_30}],
            [{**job("j", 1.5), "setup_minutes": None}],
            {},
        ),
        # 20 h of work in 08:00-22:00 from 07-02, 30 min setup a day: 14 h + 7 h runs; storage
        # 10 GB × 0.1/h over the 31 h span
        "window": (
            [{**o(), **setup_30, "disk_price_per_gb_month": 72}],
            [
                {
                    **job("j", 20, daily_hours="08:00-22:00", earliest_start="2026-07-02"),
                    "setup_minutes": None,
                    "disk_gb": 10,
                }
            ],
            {},
        ),
        # a daily package (200) beats 21 h of hourly (210)
        "package": ([o(daily={"price": 200, "stock": 4})], [job("j", 21)], {}),
        # two 10 h jobs share one daily package (150) on one card
        "share-package": (
            [o(daily={"price": 150, "stock": 1})],
            [job("a", 10), job("b", 10)],
            {"days": 1},
        ),
        # stock 1: two 10 h jobs back to back by 20:00
        "stock": (
            [offer("o", hourly={"price": 10, "stock": 1})],
            [job(n, 10, deadline="2026-07-01T20:00") for n in "ab"],
            {},
        ),
        # stock 1: two 10 h jobs cannot both finish by 15:00 (infeasible)
        "stock-infeasible": (
            [offer("o", hourly={"price": 10, "stock": 1})],
            [job(n, 10, deadline="2026-07-01T15:00") for n in "ab"],
            {},
        ),
        # 10 h of work between 01:00 and 10:00: one card cannot, two can (dearer)
        "deadline": (
            [o()],
            [
                job(
                    "j",
                    10,
                    max_cards=2,
                    earliest_start="2026-07-01T01:00",
                    deadline="2026-07-01T10:00",
                )
            ],
            {},
        ),
        # b waits for a (a from 03:00)
        "after": (
            [o()],
            [job("a", 5, earliest_start="2026-07-01T03:00"), job("b", 2, after=["a"])],
            {},
        ),
        # spot rework 2/3: 6 h of work occupy 9 h at 5 = 45 < 60 hourly
        "spot": ([o(spot=spot)], [job("j", 6, checkpoint_every="60m")], {}),
        # a weekly package (100) over a 3-day horizon
        "weekly-beyond": ([o(weekly={"price": 100, "stock": 1})], [job("j", 50)], {"days": 3}),
        # daily packages across July/August
        "months": (
            [o(daily={"price": 100, "stock": 1})],
            [job("j", 30, earliest_start="2026-07-31")],
            {"days": 40},
        ),
        # a committed weekly package (70) carries a 20 h job
        "commit-weekly": (
            [o(weekly={"price": 70, "stock": 2})],
            [job("j", 20)],
            {
                "commitments": [
                    {"offer": "o", "mode": "weekly", "units": 1, "start": "2026-07-01", "count": 1}
                ]
            },
        ),
        # a committed hourly unit for 48 h (480) carries a 20 h job
        "commit-hourly": (
            [offer("o", hourly={"price": 10, "stock": 2})],
            [job("j", 20)],
            {
                "commitments": [
                    {
                        "offer": "o",
                        "mode": "hourly",
                        "units": 1,
                        "start": "2026-07-01",
                        "end": "2026-07-03",
                    }
                ]
            },
        ),
        # disk 10 GB at 72 per GB-month for a 5 h job: 5; total 55
        "storage": (
            [{**o(), "disk_price_per_gb_month": 72}],
            [job("j", 5, disk_gb=10)],
            {},
        ),
        # at most one unit of the offer at once
        "offer-cap": (
            [{**offer("o", hourly={"price": 10, "stock": 2}), "max_units": 1}],
            [job("a", 5), job("b", 5)],
            {},
        ),
        # equal prices: the lower offer id wins
        "ties": ([o("b-offer"), o("a-offer")], [job("j", 3)], {}),
        # a cheap RTX 4090 cannot hold this LoRA (seq 4096 × micro-batch 8); the A100 can
        "memory": (
            [o(), offer("small", card="rtx4090", hourly={"price": 3, "stock": 4})],
            [job("j", 5, seq_len=4096, micro_batch=8)],
            {},
        ),
        # a full fine-tune that fits 2 cards only with all of their memory (usable 0.9 → 4)
        "usable-memory": (
            [o()],
            [job("j", 10, method="full", seq_len=4096, micro_batch=8, max_cards=8)],
            {},
        ),
        # a two-card machine (unit_cards 2) next to one-card units
        "machine": (
            [o(), {**offer("m", hourly={"price": 15, "stock": 2}), "unit_cards": 2}],
            [job("j", 10, max_cards=2)],
            {},
        ),
        # 20.5 h of work in 08:00-22:00, 30 min setup each day's rental: 14 h, then 8 h (7 h of
        # work and a new setup), 220
        "window-daily-setup": (
            [{**o(), **setup_30}],
            [{**job("j", 20.5, daily_hours="08:00-22:00"), "setup_minutes": None}],
            {},
        ),
        # a price below the minor unit: 3 h × 3.335 = 10.005 → 10.00 (half-even)
        "sub-cent": ([offer("o", hourly={"price": 3.335, "stock": 4})], [job("j", 3)], {}),
        # a committed weekly unit (70) and two 20 h jobs due in a day: a second weekly (70)
        # carries the other job; the committed card cannot carry both
        "commit-weekly-two": (
            [o(weekly={"price": 70, "stock": 2})],
            [job(n, 20, deadline="2026-07-02") for n in "ab"],
            {
                "commitments": [
                    {"offer": "o", "mode": "weekly", "units": 1, "start": "2026-07-01", "count": 1}
                ]
            },
        ),
        # Berlin, 24-27 October (25 h on the 25th): 12 h in 00:00-06:00 windows from the 25th
        # run 7 h, then 5 h from 00:00 CET the next day, 25 real hours later
        "dst-window": (
            [o()],
            [job("j", 12, daily_hours="00:00-06:00", earliest_start="2026-10-25")],
            BERLIN,
        ),
        # a daily package bought on the 25 h change day holds its 25 real hours (240)
        "dst-package": (
            [offer("o", daily={"price": 240, "stock": 1})],
            [job("j", 5, earliest_start="2026-10-25", deadline="2026-10-25T12:00")],
            {**BERLIN, "days": 3},
        ),
    }


def _reserve(name: str, cards: int, hours: str = "00:00-24:00", **fields: Any) -> dict[str, Any]:
    from tests.planning import reserve  # the repository root is on the path, as above

    return reserve(name, cards, hours, days=30, **fields)


def _serve(**fields: Any) -> dict[str, Any]:
    return {
        "name": "chat",
        "kind": "serve",
        "model": "llama-3.1-8b",
        "start": "2026-07-01",
        "end": "2026-07-31",
        "context_tokens": 4096,
        "min_tokens_per_s": 20,
        "concurrency": 1,
        "min_replicas": 0,
        "setup_minutes": 0,
        **fields,
    }


def _serving_instances(one_card: int) -> dict[str, Any]:
    """Serve and reserve instances; `one_card` is what one 1-card A100 replica carries."""
    from tests.planning import job, offer

    monthly = [offer("o", hourly={"price": 10, "stock": 8}, monthly={"price": 3000, "stock": 2})]
    weekly = [
        {
            **offer("o", hourly={"price": 10, "stock": 8}, weekly={"price": 900, "stock": 8}),
            "setup_minutes": 30,
        }
    ]
    curve = {"00-08": one_card, "08-20": 3 * one_card, "20-24": 0}
    return {
        # 1 card 09:00-17:00 for two days, hourly: 160
        "reserve-hourly": (
            [offer("o", hourly={"price": 10, "stock": 8})],
            [_reserve("devs", 1, "09:00-17:00", end="2026-07-03")],
            {"days": 2},
        ),
        # a base card on a weekly package; day cards pay 1 h setup a start → packages too
        "reserve-weekly-setup": (
            weekly,
            [
                _reserve("base", 1, end="2026-07-08"),
                _reserve("day", 2, "08:00-20:00", end="2026-07-08"),
            ],
            {"days": 7},
        ),
        # a serve curve on hourly replicas across July/August: 50% monthly growth, at least 2
        # replicas, 30 min setup (1 h billed per rental start)
        "serve-curve": (
            [{**offer("o", hourly={"price": 10, "stock": 16}), "setup_minutes": 30}],
            [
                _serve(
                    start="2026-07-30",
                    end="2026-08-03",
                    concurrency=curve,
                    min_replicas=2,
                    growth_per_month=0.5,
                    setup_minutes=None,
                )
            ],
            {"start": "2026-07-30", "days": 4},
        ),
        # one card on o (10/h, 30 min setup for replicas), one on p (30/h, none); two desks
        # 09:00-12:00 and a 9 h job due by 09:00. A desk on o is rented from 08:00 (its setup
        # hour is held), so the job cannot run on o: job and one desk on p, the other desk on
        # o (400). The greedy baselines give up (both desks on o).
        "replica-setup-stock": (
            [
                {**offer("o", hourly={"price": 10, "stock": 1}), "setup_minutes": 30},
                offer("p", hourly={"price": 30, "stock": 1}),
            ],
            [
                _reserve("desk-a", 1, "09:00-12:00", end="2026-07-02"),
                _reserve("desk-b", 1, "09:00-12:00", end="2026-07-02"),
                job("x", 9, deadline="2026-07-01T09:00"),
            ],
            {"days": 1},
        ),
        # 2 cards 09:00-17:00 for two days, 30 min setup: rentals 08:00-17:00, 360; a 10 GB
        # disk per card at 72 per GB-month (1 per disk-hour) bills their 9 h too: 36; 396
        "reserve-disk": (
            [
                {
                    **offer("o", hourly={"price": 10, "stock": 8}),
                    "setup_minutes": 30,
                    "disk_price_per_gb_month": 72,
                }
            ],
            [_reserve("devs", 2, "09:00-17:00", end="2026-07-03", disk_gb=10)],
            {"days": 2},
        ),
        # 2.5 one-card replicas' worth of requests for a day on nodes of one card: three
        # A100 replicas (720); an H200 replica costs 10,000 an hour
        "serve-one-card-nodes": (
            [
                {**offer("o", hourly={"price": 10, "stock": 8}), "cards_per_node": 1},
                {
                    **offer("big", card="h200-141g", hourly={"price": 10000, "stock": 8}),
                    "cards_per_node": 1,
                },
            ],
            [_serve(end="2026-07-02", concurrency=one_card * 5 // 2)],
            {"days": 2},
        ),
        # Berlin: one replica's worth of requests at 02:00 local, an hour that happens twice
        # on 25 October: 1 + 2 + 1 replica-hours
        "dst-serve": (
            [offer("o", hourly={"price": 10, "stock": 4})],
            [
                _serve(
                    start="2026-10-24",
                    end="2026-10-27",
                    concurrency={"00-02": 0, "02-03": one_card, "03-24": 0},
                )
            ],
            {**BERLIN, "days": 3},
        ),
        # day serving on two monthly packages; a night LoRA job on the same cards
        "serve-night-job": (
            monthly,
            [
                _serve(concurrency={"00-08": 0, "08-20": 2 * one_card, "20-24": 0}),
                job(
                    "lora",
                    10,
                    checkpoint_every="30m",
                    earliest_start="2026-07-02",
                    deadline="2026-07-20",
                ),
            ],
            {"days": 30},
        ),
    }


# --- the child: solve and check every instance under the planner on PYTHONPATH ------------

SELF_TEST_MARK = "but the solver's objective is"  # planner.solve._mismatch's message
# how solve's safety net names a model plan the checker refused (planner.solve._settle)
CHECKER_MARKS = ("the checker rejects the model's plan", "the checker's total")
# how `solve` notes a baseline plan the checker refused (planner/solve.py)
BASELINE_REFUSED_MARK = "failed the independent checker"


class _Adapter:
    """Every call into the planner under test, in one place: the checker is being moved to
    a package `planner/check/` exposing `check_plan(scenario, plan)` with `.ok` and
    `.violations`; `planner.check.check_plan` is that in both layouts."""

    def __init__(self) -> None:
        import importlib

        self.check_plan = importlib.import_module("planner.check").check_plan
        solve_module = importlib.import_module("planner.solve")
        self.solve, self.params = solve_module.solve, solve_module.SolveParams
        self.rejected = getattr(solve_module, "PlanRejected", ())
        self.load = importlib.import_module("planner.domain.load").load_scenario
        self.last: dict[str, Any] = {}
        try:  # record the raw CP-SAT outcome, to check a plan the self-test refused
            model = importlib.import_module("planner.cpsat.model").CpModel
            original = model.solve
            last = self.last

            def recording(model_self: Any, *args: Any, **kwargs: Any) -> Any:
                outcome = original(model_self, *args, **kwargs)
                last.update(problem=model_self.problem, outcome=outcome)
                return outcome

            model.solve = recording
        except (ImportError, AttributeError):
            pass

    @staticmethod
    def verdict(check: Any) -> tuple[bool, list[str]]:
        violations = [str(v) for v in getattr(check, "violations", []) or []]
        return bool(getattr(check, "ok", not violations)), violations

    def raw_plan_verdict(self, scenario: Any) -> str:
        """What the checker says of the plan the self-test refused, or why unknown."""
        try:
            from planner.solution import to_plan

            problem, solution = self.last["problem"], self.last["outcome"].solution
            plan = to_plan(problem, solution, self.last["outcome"].status)
            try:  # as solve does: the checker compares the breakdown (absent in old layouts)
                from planner.pricing import breakdown
            except ImportError:
                pass
            else:
                plan = plan.model_copy(
                    update={"cost_breakdown": breakdown(problem, solution, plan)}
                )
            ok, violations = self.verdict(self.check_plan(scenario, plan))
        except Exception as exc:
            return f"unknown ({type(exc).__name__}: {exc})"
        return "accepts it" if ok else f"rejects it: {violations[0]}"

    def run(self, scenario: Any, limit: float) -> dict[str, Any]:
        """One instance: solve, then check the plan directly; the outcome as plain data."""
        self.last.clear()
        params = self.params(time_limit=limit, workers=2, seed=0, deterministic=True)
        try:
            result = self.solve(scenario, params)
        except self.rejected as exc:
            _, violations = self.verdict(getattr(exc, "check", None))
            violations = violations or [str(exc)]
            if any(SELF_TEST_MARK in v for v in violations):
                return {
                    "outcome": "self-test",
                    "violations": violations,
                    "checker_alone": self.raw_plan_verdict(scenario),
                }
            return {"outcome": "checker", "violations": violations}
        inconsistency = getattr(result, "inconsistency", None)
        if inconsistency:  # solve's safety net: the cheapest checked plan, the fault named
            shown = result.plan
            shown_ok = shown is not None and self.verdict(self.check_plan(scenario, shown))[0]
            return {
                "outcome": "inconsistency",
                "line": inconsistency,
                "status": str(result.status),
                "total": None if shown is None else str(shown.total_cost),
                "shown_checked": shown_ok,
                "shown_unproven": shown is None or (shown.status != "optimal" and not shown.bound),
            }
        if result.plan is None:
            return {"outcome": "no-plan", "status": result.status, "reasons": result.reasons}
        ok, violations = self.verdict(self.check_plan(scenario, result.plan))
        if not ok:  # a plan shown that the checker rejects: the worst outcome
            return {"outcome": "checker", "violations": violations, "shown": True}
        # solve checks each baseline plan too and reports, not raises, a refused one
        refused = [
            f"{name} baseline: {note}"
            for name, note in sorted(getattr(result.plan, "baseline_notes", {}).items())
            if BASELINE_REFUSED_MARK in note
        ]
        if refused:
            return {"outcome": "checker", "violations": refused}
        plan = result.plan.model_dump(mode="json")
        plan.pop("solve_seconds", None)  # timing
        for size in ("variables", "constraints"):  # model size: not part of the plan
            plan.get("solver", {}).pop(size, None)
        return {
            "outcome": "plan",
            "status": result.status,
            "total": plan.get("total_cost"),
            "plan": plan,
        }


def _write_scenario(
    folder: Path,
    offers: list[dict[str, Any]],
    workloads: list[dict[str, Any]],
    start: str = "2026-07-01",
    days: int = 10,
    **extra: Any,
) -> Path:
    """A scenario of `days` days from `start` on a synthetic catalog (as tests/planning.py)."""
    import datetime as dt

    import yaml

    folder.mkdir(parents=True)
    catalog = {"name": "synthetic", "currency": "CNY", "source": "tests", "offers": offers}
    (folder / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    end = dt.date.fromisoformat(start) + dt.timedelta(days=days)
    data = {
        "name": "tiny",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": start, "end": end.isoformat()},
        "catalog": "catalog.yaml",
        "workloads": workloads,
        **extra,
    }
    path = folder / "scenario.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _one_card_capacity(adapter: _Adapter, folder: Path) -> int:
    """What one 1-card hourly A100 replica of the serve workload carries (as the tests do)."""
    from planner.configs import replica_configs
    from tests.planning import offer

    path = _write_scenario(
        folder, [offer("o", hourly={"price": 10, "stock": 8})], [_serve()], days=30
    )
    probe = adapter.load(path)
    [config] = [
        c
        for c in replica_configs(probe, probe.workload("chat"))
        if c.cards == 1 and c.mode == "hourly"
    ]
    return int(config.capacity)


def _error(exc: Exception, folder: Path) -> str:
    """An exception as one line, with the innermost frame of the planner under test."""
    import traceback

    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(str(folder))
    ]
    where = (
        f" at {Path(frames[-1].filename).relative_to(folder)}:{frames[-1].lineno}" if frames else ""
    )
    return f"{type(exc).__name__}{where}: {exc}".rstrip(": ")


def child(repo: Path, folder: Path, out: Path, only: list[str] | None) -> None:
    """Solve and check every instance; write each outcome to `out` as soon as it is known."""
    import planner

    origin = Path(planner.__file__).resolve()
    if folder.resolve() not in origin.parents:
        raise SystemExit(f"planner imported from {origin}, not from {folder}")
    tempfile.tempdir = str(folder)  # helpers that make temporary folders make them here
    adapter = _Adapter()
    results: dict[str, Any] = {}

    def record(name: str, build: Any, limit: float) -> None:
        if only and name not in only:
            return
        started = time.perf_counter()
        try:
            results[name] = adapter.run(build(), limit)
        except Exception as exc:
            results[name] = {"outcome": "crash", "error": _error(exc, folder)}
        results[name]["seconds"] = round(time.perf_counter() - started, 2)
        out.write_text(json.dumps(results))

    scenarios = repo / "scenarios"
    record("seed-13b-finetune", lambda: adapter.load(scenarios / "seed-13b-finetune.yaml"), 20)
    record("seed-70b-serving", lambda: adapter.load(scenarios / "seed-70b-serving.yaml"), 20)

    def seed_70b_catalog() -> Any:
        # seed-70b-serving at 191 requests in flight: the catalog's H200s and A100 machine compete
        copy = folder / "seed-70b-191"
        copy.mkdir()
        for name in ("seed-70b-serving.yaml", "seed-70b-catalog.yaml"):
            shutil.copy(scenarios / name, copy / name)
        path = copy / "seed-70b-serving.yaml"
        path.write_text(path.read_text().replace("concurrency: 40", "concurrency: 191"))
        return adapter.load(path)

    record("seed-70b-catalog", seed_70b_catalog, 20)
    record("q3-train", lambda: adapter.load(scenarios / "q3-train.yaml"), Q3_LIMIT_S)
    hand = _hand_instances()
    try:
        hand.update(_serving_instances(_one_card_capacity(adapter, folder / "probe")))
    except Exception as exc:
        results["serving-probe"] = {"outcome": "crash", "error": _error(exc, folder)}
        out.write_text(json.dumps(results))
    for name, (offers, workloads, extra) in hand.items():
        record(
            name,
            lambda n=name, o=offers, w=workloads, x=extra: adapter.load(
                _write_scenario(folder / n, o, w, **x)
            ),
            HAND_LIMIT_S,
        )


# --- the parent: copy, patch, run, classify -----------------------------------------------


@dataclass
class Verdict:
    mutant: str
    file: str
    bug: str
    verdict: str  # caught | net | self-test | crashed | survived | equivalent | not applied
    detail: str  # which instance and violation caught it, or what differs
    seconds: float
    held: bool = True  # what the user was shown kept the safety net's promise (`contract`)
    broken: str = ""  # where it did not


def _patch(root: Path, mutant: Mutant) -> str | None:
    """Apply `mutant` under `root`; why not, if its old text is not there exactly once."""
    path = root / mutant.file
    if not path.is_file():
        return f"{mutant.file} does not exist"
    text = path.read_text(encoding="utf-8")
    count = text.count(mutant.old)
    if count != 1:
        return f"old text found {count} times in {mutant.file}"
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    return None


def _prepare(repo: Path, folder: Path, mutant: Mutant | None) -> str | None:
    """A copy of the repository's planner/ (and links to its data folders) in `folder`."""
    folder.mkdir(parents=True)
    shutil.copytree(
        repo / "planner", folder / "planner", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in DATA_FOLDERS:  # planner.paths finds them next to the package
        if (repo / name).is_dir():
            (folder / name).symlink_to(repo / name, target_is_directory=True)
    return None if mutant is None else _patch(folder, mutant)


def _run_child(
    repo: Path, folder: Path, only: list[str] | None, timeout: float
) -> tuple[dict[str, Any], str | None]:
    """The child's outcomes per instance, and an error if it died or timed out."""
    out = folder / "outcomes.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(repo)])}
    env.pop("PYTHONHOME", None)
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(folder)]
    command += ["--repo", str(repo), "--out", str(out)]
    if only:
        command += ["--instances", ",".join(only)]
    error = None
    try:
        done = subprocess.run(
            command, env=env, cwd=folder, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode:
            lines = (done.stderr or done.stdout).strip().splitlines()
            error = f"child exited {done.returncode}: {lines[-1] if lines else ''}"
    except subprocess.TimeoutExpired:
        error = f"timed out after {timeout:g} s"
    outcomes = json.loads(out.read_text()) if out.is_file() else {}
    return outcomes, error


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("outcome", "status", "plan", "reasons")
    return all(a.get(k) == b.get(k) for k in keys)


def _difference(name: str, ref: dict[str, Any], got: dict[str, Any]) -> str:
    if got.get("outcome") != ref.get("outcome"):
        if got.get("outcome") == "no-plan":
            return f"{name}: {got.get('status')} where the unmutated run has a plan"
        return f"{name}: a plan ({got.get('total')}) where the unmutated run has none"
    if got.get("total") != ref.get("total"):
        return f"{name}: total {ref.get('total')} → {got.get('total')}"
    if got.get("status") != ref.get("status"):
        return f"{name}: status {ref.get('status')} → {got.get('status')}"
    plan, old = got.get("plan") or {}, ref.get("plan") or {}
    fields = [k for k in sorted(set(plan) | set(old)) if plan.get(k) != old.get(k)]
    return f"{name}: same total, differs in {', '.join(fields) or 'reasons'}"


def classify(
    mutant: Mutant, outcomes: dict[str, Any], error: str | None, reference: dict[str, Any]
) -> tuple[str, str]:
    """(verdict, detail) of one mutant's outcomes against the unmutated run's."""
    by_kind: dict[str, list[str]] = {}
    for name, o in outcomes.items():
        by_kind.setdefault(o["outcome"], []).append(name)
    checked = [
        n
        for n in by_kind.get("inconsistency", [])
        if any(mark in outcomes[n]["line"] for mark in CHECKER_MARKS)
    ]
    if checked:  # the checker refused the model's plan; solve showed a checked one instead
        name = checked[0]
        more = len(checked) - 1
        also = f" (+{more} more instance{'s' * (more > 1)})" if more else ""
        return "caught", f"{name}: {outcomes[name]['line']}{also}"
    if "checker" in by_kind:
        name = by_kind["checker"][0]
        more = len(by_kind["checker"]) - 1
        also = f" (+{more} more instance{'s' * (more > 1)})" if more else ""
        return "caught", f"{name}: {outcomes[name]['violations'][0]}{also}"
    if "self-test" in by_kind:
        # the self-test refused the plan before the checker saw it: ask the checker alone
        alone = [n for n in by_kind["self-test"] if outcomes[n]["checker_alone"].startswith("rej")]
        if alone:
            name = alone[0]
            o = outcomes[name]
            return "caught", f"{name}: the checker {o['checker_alone']} (solve's self-test first)"
        name = by_kind["self-test"][0]
        o = outcomes[name]
        return "self-test", f"{name}: {o['violations'][0]}; the checker {o['checker_alone']}"
    if "inconsistency" in by_kind:  # not the checker: the comparison with checked plans
        name = by_kind["inconsistency"][0]
        return "net", f"{name}: {outcomes[name]['line']}"
    if "crash" in by_kind or error or set(outcomes) != set(reference):
        name = next(iter(by_kind.get("crash", [])), None)
        if name is not None:
            return "crashed", f"{name}: {outcomes[name]['error']}"
        missing = sorted(set(reference) - set(outcomes))
        return "crashed", error or f"no outcome for {', '.join(missing)}"
    differing = [n for n in reference if not _same(reference[n], outcomes[n])]
    if not differing:
        return "equivalent", "every plan equals the unmutated run's"
    # name an instance whose total or status moved, if any: the clearest evidence
    moved = [n for n in differing if _moved(reference[n], outcomes[n])]
    first = (moved or differing)[0]
    more = f" (+{len(differing) - 1} more)" if len(differing) > 1 else ""
    return "survived", _difference(first, reference[first], outcomes[first]) + more


def contract(
    outcomes: dict[str, Any], error: str | None, reference: dict[str, Any]
) -> tuple[bool, str]:
    """Whether what a user was shown under a mutant keeps the safety net's promise on every
    instance: the right answer (the unmutated run's status and total, or a plan not called
    optimal that costs no less than the unmutated optimum), or the cheapest checked plan
    with the model inconsistency named and nothing proven, or no plan found in time; never
    a plan the checker rejects, a dearer (or cheaper) "optimal" one, a false "infeasible",
    or a crash."""
    if error:
        return False, f"crashed: {error}"
    for name, ref in reference.items():
        got = outcomes.get(name)
        if got is None:
            return False, f"{name}: no outcome"
        kind = got["outcome"]
        if kind == "inconsistency":
            if got["total"] is not None and not (got["shown_checked"] and got["shown_unproven"]):
                return False, f"{name}: an inconsistency shown with an unchecked or proven plan"
            continue
        if kind == "checker" and got.get("shown"):
            return False, f"{name}: a plan the checker rejects was shown"
        if kind in ("crash", "self-test"):
            return False, f"{name}: {kind}"
        if kind == "no-plan":
            if ref["outcome"] == "plan" and got["status"] == "infeasible":
                return False, f"{name}: proven infeasible where a plan exists"
            continue  # no plan found (exit 3): honest, if no help
        if kind == "plan" and ref["outcome"] == "plan":
            proven, optimum = ref["status"] == "optimal", Decimal(str(ref["total"]))
            total = Decimal(str(got["total"]))
            if got["status"] == "optimal" and proven and total != optimum:
                return False, f"{name}: 'optimal' at {total}, the optimum is {optimum}"
            if proven and total < optimum:
                return False, f"{name}: a plan at {total}, below the optimum {optimum}"
    return True, ""


def _moved(ref: dict[str, Any], got: dict[str, Any]) -> bool:
    return any(ref.get(k) != got.get(k) for k in ("outcome", "status", "total"))


def _git_head(repo: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
        )
    except OSError:
        return None
    return done.stdout.strip() or None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=HERE, help="repository root to mutate")
    parser.add_argument("--only", help="mutant name(s), comma-separated")
    parser.add_argument("--instances", help="instance name(s), comma-separated (all if absent)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument(
        "--as-before",
        action="store_true",
        help="only the 50 mutants and 31 instances of the first run (to compare with it)",
    )
    parser.add_argument("--json", type=Path, help="write the verdicts as JSON here")
    parser.add_argument("--timeout", type=float, default=CHILD_TIMEOUT_S, help="per mutant, s")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    repo = args.repo.resolve()
    instances = args.instances.split(",") if args.instances else None
    if args.as_before:
        instances = [n for n in instances or BEFORE_INSTANCES if n in BEFORE_INSTANCES]
    if args.child:
        child(repo, args.child, args.out, instances)
        return
    if args.list:
        for m in MUTANTS:
            text = (repo / m.file).read_text(encoding="utf-8") if (repo / m.file).is_file() else ""
            applies = "" if text.count(m.old) == 1 else "  [patch does not apply]"
            print(f"{m.name:38} {m.file:30} {m.bug}{applies}")
        return
    names = {m.name for m in MUTANTS}
    if len(names) != len(MUTANTS):
        raise SystemExit("mutant names must be distinct")
    chosen = list(MUTANTS[:BEFORE_MUTANTS] if args.as_before else MUTANTS)
    if args.only:
        wanted = args.only.split(",")
        unknown = sorted(set(wanted) - names)
        if unknown:
            raise SystemExit(f"no such mutant: {', '.join(unknown)} (see --list)")
        chosen = [m for m in chosen if m.name in wanted]
    work = Path(tempfile.mkdtemp(prefix="gpuplan-mutation-"))
    started = time.perf_counter()
    try:
        verdicts, reference = _run_all(repo, work, chosen, instances, args.timeout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.perf_counter() - started
    _report(repo, verdicts, reference, seconds, args.json)


def _run_all(
    repo: Path,
    work: Path,
    chosen: list[Mutant],
    instances: list[str] | None,
    timeout: float,
) -> tuple[list[Verdict], dict[str, Any]]:
    print(f"unmutated run of {repo} …", file=sys.stderr, flush=True)
    _prepare(repo, work / "reference", None)
    reference, error = _run_child(repo, work / "reference", instances, timeout)
    bad = {n: o for n, o in reference.items() if o["outcome"] not in ("plan", "no-plan")}
    if error or bad or not reference:
        raise SystemExit(f"the unmutated run failed: {error or bad or 'no outcomes'}")
    shutil.rmtree(work / "reference")
    verdicts = []
    for i, mutant in enumerate(chosen):
        print(f"[{i + 1}/{len(chosen)}] {mutant.name} …", file=sys.stderr, flush=True)
        folder = work / f"mutant-{i:02d}"
        began = time.perf_counter()
        why = _prepare(repo, folder, mutant)
        held, broken = True, ""
        if why is not None:
            verdict, detail = "not applied", f"patch does not apply: {why}"
        else:
            outcomes, error = _run_child(repo, folder, instances, timeout)
            verdict, detail = classify(mutant, outcomes, error, reference)
            held, broken = contract(outcomes, error, reference)
        shutil.rmtree(folder, ignore_errors=True)
        took = round(time.perf_counter() - began, 1)
        verdicts.append(
            Verdict(mutant.name, mutant.file, mutant.bug, verdict, detail, took, held, broken)
        )
        print(f"    {verdict}: {detail}", file=sys.stderr, flush=True)
        if not held:
            print(f"    SAFETY NET BROKEN: {broken}", file=sys.stderr, flush=True)
    return verdicts, reference


def score(verdicts: list[Verdict]) -> tuple[int, int]:
    """(caught by the checker, mutants − equivalent − not applied)."""
    caught = sum(v.verdict == "caught" for v in verdicts)
    counted = sum(v.verdict not in ("equivalent", "not applied") for v in verdicts)
    return caught, counted


def _report(
    repo: Path,
    verdicts: list[Verdict],
    reference: dict[str, Any],
    seconds: float,
    json_path: Path | None,
) -> None:
    print("| mutant | bug | verdict | caught by / differs | safety net |")
    print("|---|---|---|---|---|")
    for v in verdicts:
        detail = v.detail if len(v.detail) <= DETAIL_CHARS else v.detail[:DETAIL_CHARS] + " …"
        detail = detail.replace("|", "\\|")  # in full in --json
        net = "held" if v.held else f"BROKEN: {v.broken}".replace("|", "\\|")
        print(f"| {v.mutant} | {v.bug} | {v.verdict} | {detail} | {net} |")
    caught, counted = score(verdicts)
    tally: dict[str, int] = {}
    for v in verdicts:
        tally[v.verdict] = tally.get(v.verdict, 0) + 1
    percent = 100 * caught / counted if counted else 0.0
    print(
        f"\nscore: {caught} of {counted} caught by the checker ({percent:.1f}%); "
        + ", ".join(f"{n} {k}" for k, n in sorted(tally.items()))
        + f"; {len(reference)} instances, {seconds:.0f} s"
    )
    applied = [v for v in verdicts if v.verdict != "not applied"]
    held = sum(v.held for v in applied)
    print(
        f"safety net: held for {held} of {len(applied)} mutants (every instance shows the "
        "right plan, or the cheapest checked plan with the inconsistency named)"
    )
    if json_path is not None:
        data = {
            "repo": str(repo),
            "commit": _git_head(repo),
            "seconds": round(seconds, 1),
            "instances": {
                n: {k: o.get(k) for k in ("outcome", "status", "total", "seconds")}
                for n, o in reference.items()
            },
            "score": {"caught": caught, "counted": counted, "percent": round(percent, 1)},
            "safety_net": {
                "held": sum(v.held for v in verdicts if v.verdict != "not applied"),
                "mutants": sum(v.verdict != "not applied" for v in verdicts),
            },
            "tally": tally,
            "mutants": [asdict(v) for v in verdicts],
        }
        json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
