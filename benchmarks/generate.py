"""Seeded quarters for the scale benchmark: a team's train, serve and reserve
workloads on the seeds' catalog, with stock scaled to the team.

    python benchmarks/generate.py --workloads 100 --seed 0 --out DIR [--stock seeds]

writes DIR/scale-100-s0.yaml. `generate(n, seed)` returns the same scenario as a dict.

The mix follows scenarios/q3.yaml: ~15% serve, ~10% reserve, the rest train: LoRA, QLoRA
and full fine-tunes and continued pre-training of shipped model cards, some in `after`
chains of 2-3 (a pre-training, a fine-tune, its evaluation), some in daily windows, some
checkpointed (spot-eligible). Every train job is feasible alone with slack: its cheapest
rented config (hourly or spot, as `plan quote` lists it) fits its window 1.3-2.5 times,
and a chain's windows follow one another. Every service has an hourly config whose peak
replicas fit the catalog's own stock. Together they may still exceed the (scaled) stock:
that is what the benchmark measures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.configs import replica_configs  # noqa: E402
from planner.demand import hourly_demand  # noqa: E402
from planner.domain.load import load_catalog, load_scenario  # noqa: E402
from planner.domain.scenario import Scenario  # noqa: E402
from planner.domain.workload import ServeWorkload  # noqa: E402
from planner.problem import quote_job  # noqa: E402

CATALOG = "jizhisuan-2026-09"
START = dt.date(2026, 7, 1)
DAYS = 92  # 2026-07-01 .. 2026-10-01, end exclusive
HOURS = DAYS * 24  # Asia/Shanghai has no daylight saving
SIZES = (10, 30, 100, 300, 1000)
SLACK = (1.3, 2.5)  # window ÷ the cheapest rented config's span
LOOSE_HOURS = (48.0, 504.0)  # or a window of 2-21 days, where the chain fits
ROUNDS = 12  # redraws before giving up on a workload (each round redraws only the failures)
Q3_WORKLOADS = 11  # the catalog's stock was sized for a team like q3's

SMALL = ["llama-2-7b", "llama-3.1-8b", "mistral-7b", "qwen2.5-7b"]
MEDIUM = ["llama-2-13b", "qwen2.5-14b"]
LARGE = ["qwen2.5-32b", "qwen3-30b-a3b", "mixtral-8x7b"]
HUGE = ["llama-2-70b", "llama-3.1-70b", "qwen2.5-72b"]
# method → (models, tokens range (log-uniform), max_cards choices, disk_gb choices)
METHODS: dict[str, tuple[list[str], tuple[float, float], list[int], list[int]]] = {
    "lora": (SMALL + MEDIUM + LARGE, (2e8, 1.5e9), [1, 2, 4, 8], [0, 100, 200, 500]),
    "qlora": (SMALL + MEDIUM + LARGE + HUGE, (1e8, 6e8), [1, 2, 4, 8], [0, 100, 200]),
    "full": (SMALL + MEDIUM, (3e8, 2e9), [4, 8], [200, 500, 1000]),
    "cpt": (SMALL + MEDIUM, (2e9, 8e9), [8], [1000, 2000]),
    "eval": ([], (1e7, 1e8), [1, 2], [0]),
}
SINGLE_METHODS = (["lora", "qlora", "full", "cpt"], [40, 25, 20, 15])
WINDOWS = ["08:00-22:00", "09:00-19:00", "00:00-08:00"]
# serve: model → (precision, peak requests in flight range)
SERVED: dict[str, tuple[Any, tuple[int, int]]] = {
    "llama-3.1-8b": ("bf16", (8, 48)),
    "qwen2.5-7b": ("bf16", (8, 48)),
    "mistral-7b": ("bf16", (8, 40)),
    "qwen2.5-14b": (["fp8", "int8"], (8, 40)),
    "qwen2.5-32b": (["fp8", "int8"], (8, 32)),
    "qwen3-30b-a3b": ("bf16", (8, 32)),
    "mixtral-8x7b": (["fp8", "int8"], (8, 32)),
    "llama-3.1-70b": (["fp8", "int8"], (8, 48)),
}

Workload = dict[str, Any]


def generate(n: int, seed: int, stock: str = "scaled") -> dict[str, Any]:
    """A scenario of `n` workloads drawn from `seed` (the same dict for the same arguments).
    `stock`: "scaled" multiplies every catalog stock by a team-size factor drawn per seed
    (about n ÷ 11 × 0.6-1.1, at least 1: q3's eleven workloads fit the catalog's own
    stock); "seeds" keeps the catalog's own."""
    if n < 3:
        raise ValueError("at least 3 workloads: a train, a serve and a reserve")
    if stock not in ("scaled", "seeds"):
        raise ValueError(f"stock is 'scaled' or 'seeds', got {stock!r}")
    rng = random.Random(f"gpuplan-scale-{n}-{seed}")
    factor = max(1, round(n / Q3_WORKLOADS * rng.uniform(0.6, 1.1)))
    serves, reserves = max(1, round(0.15 * n)), max(1, round(0.10 * n))
    with tempfile.TemporaryDirectory(prefix="gpuplan-gen-") as tmp:
        folder = Path(tmp)
        workloads = _train(rng, n - serves - reserves, folder)
        workloads += _serve(rng, serves, folder)
        workloads += _reserve(rng, reserves)
        offers = _stock(factor) if stock == "scaled" else []
        data = _scenario(n, seed, workloads, offers)
        data["description"] += (
            f"; catalog stock × {factor}" if stock == "scaled" else " --stock seeds"
        )
        _load(folder, data)  # what `plan validate` checks
        _verify(data, folder)
    return data


def write(data: dict[str, Any], path: Path) -> Path:
    """The scenario as YAML, referring to the shipped catalog by name: no other file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = f"# {data['description']}\n"
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(header + text, encoding="utf-8")
    return path


def file_name(n: int, seed: int, stock: str = "scaled") -> str:
    return f"scale-{n}-s{seed}{'-seeds' if stock == 'seeds' else ''}.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", type=int, required=True, help=f"e.g. {SIZES}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="folder for the YAML file")
    parser.add_argument("--stock", choices=["scaled", "seeds"], default="scaled")
    args = parser.parse_args()
    data = generate(args.workloads, args.seed, args.stock)
    print(write(data, args.out / file_name(args.workloads, args.seed, args.stock)))


def _scenario(n: int, seed: int, workloads: list[Workload], offers: list[Any]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": f"scale-{n}-s{seed}",
        "description": f"generated by benchmarks/generate.py --workloads {n} --seed {seed}",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": START.isoformat(), "end": _date(DAYS)},
        "catalog": CATALOG,
    }
    if offers:
        data["offers"] = offers
    data["workloads"] = workloads
    return data


def _load(folder: Path, data: dict[str, Any]) -> Scenario:
    path = folder / "draft.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_scenario(path)


def _date(day: int) -> str:
    return (START + dt.timedelta(days=day)).isoformat()


def _tokens(rng: random.Random, low: float, high: float) -> float:
    return float(f"{math.exp(rng.uniform(math.log(low), math.log(high))):.2g}")


# --- train ---------------------------------------------------------------------------------


def _train(rng: random.Random, count: int, folder: Path) -> list[Workload]:
    """`count` train jobs in chains of 1-3, each chain feasible alone, placed in the quarter."""
    chains: list[list[Workload]] = []
    while sum(map(len, chains)) < count:
        left = count - sum(map(len, chains))
        r = rng.random()
        length = 3 if left >= 3 and r < 0.08 else 2 if left >= 2 and r < 0.3 else 1
        chains.append(_chain(rng, length, sum(map(len, chains))))
    spans = _settle(rng, chains, folder)
    return [w for chain in chains for w in _place(rng, chain, spans)]


def _chain(rng: random.Random, length: int, first: int) -> list[Workload]:
    """A single job, a fine-tune and its evaluation, or a pre-training, fine-tune, eval."""
    if length == 1:
        methods = [rng.choices(*SINGLE_METHODS)[0]]
    elif length == 2:
        methods = [rng.choice(["lora", "qlora", "full"]), "eval"]
    else:
        methods = ["cpt", rng.choice(["lora", "full"]), "eval"]
    models = METHODS[methods[0]][0]
    for method in methods[1:]:
        models = [m for m in models if m in METHODS[method][0]] or models
    model = rng.choice(models)
    return [_job(rng, first + i, method, model, length == 1) for i, method in enumerate(methods)]


def _job(rng: random.Random, slot: int, method: str, model: str, single: bool) -> Workload:
    _, (low, high), max_cards, disks = METHODS[method]
    w: Workload = {
        "name": f"t{slot:04d}-{method}-{model}",
        "kind": "train",
        "model": model,
        "method": "full" if method == "cpt" else method,
    }
    if method in ("full", "cpt"):
        w["recipe"] = "fsdp-full-shard"
    elif method == "lora" and rng.random() < 0.3:
        w["recipe"] = "hf-deepspeed-zero2"
    w["precision"] = "nf4" if method == "qlora" else "bf16"
    w["tokens"] = _tokens(rng, low, high)
    w["seq_len"] = rng.choice([2048, 4096, 8192] if method == "cpt" else [2048, 4096])
    w["micro_batch"] = rng.choice([1, 2, 4])
    windowed = method in ("lora", "qlora", "eval") and rng.random() < 0.2
    if windowed:
        w["daily_hours"] = rng.choice(WINDOWS)
    elif method != "eval" and rng.random() < 0.5:
        w["checkpoint_every"] = rng.choice(["30m", "1h"])
    w["max_cards"] = rng.choice(max_cards)
    disk = rng.choice(disks)
    if disk:
        w["disk_gb"] = disk
    return w


def _settle(rng: random.Random, chains: list[list[Workload]], folder: Path) -> dict[str, int]:
    """Each job's span on its cheapest rented config, alone; a chain with a job that has no
    rented config is redrawn, a job too long for its share of the quarter gets fewer tokens."""
    spans: dict[str, int] = {}
    pending = list(range(len(chains)))
    for _ in range(ROUNDS):
        if not pending:
            return spans
        quoted = _quote([w for i in pending for w in chains[i]], folder)
        still = []
        for i in pending:
            cap = HOURS * 0.8 / (len(chains[i]) * SLACK[1])
            verdict = _verdict(chains[i], quoted, cap, spans, rng)
            if verdict == "none":
                chains[i] = _chain(rng, len(chains[i]), int(chains[i][0]["name"][1:5]))
            if verdict != "ok":
                still.append(i)
        pending = still
    raise RuntimeError(f"no feasible draw after {ROUNDS} rounds: {[chains[i] for i in pending]}")


def _quote(drafts: list[Workload], folder: Path) -> dict[str, int | str]:
    """Each draft's span on its cheapest rented config, "none" without one, "long" for a
    windowed job none of whose configs fits a generous estimate of its window. A windowed
    job is quoted in that estimate (hours alone × 1.5 ÷ the window's hours, plus two days)
    rather than the whole quarter: the planner tries every window hour as a start, so a
    quarter-long quote of a windowed job costs seconds."""
    scenario = _load(folder, _scenario(0, 0, [_unwindowed(w) for w in drafts], []))
    quoted: dict[str, int | str] = {}
    bounded = []
    for w in drafts:
        span = _span(scenario, w)
        quoted[w["name"]] = "none" if span is None else span
        if span is not None and "daily_hours" in w:
            opens, closes = (int(t[:2]) for t in w["daily_hours"].split("-"))
            days = math.ceil(span * 1.5 / max(1, closes - opens - 1)) + 2
            bounded.append(w | {"deadline": _date(min(days, DAYS))})
    if bounded:
        scenario = _load(folder, _scenario(0, 0, bounded, []))
        for w in bounded:
            span = _span(scenario, w)
            quoted[w["name"]] = "long" if span is None else span
    return quoted


def _unwindowed(w: Workload) -> Workload:
    return {k: v for k, v in w.items() if k != "daily_hours"}


def _span(scenario: Scenario, w: Workload) -> int | None:
    """Hours of the cheapest rented (hourly or spot) config alone; None if there is none."""
    rented = [c for c in quote_job(scenario, w["name"]).configs if not c.held]
    if not rented:
        return None
    return min(rented, key=lambda c: (c.cost, c.span)).span


def _verdict(
    chain: list[Workload],
    quoted: dict[str, int | str],
    cap: float,
    spans: dict[str, int],
    rng: random.Random,
) -> str:
    """ "ok" and the chain's spans recorded if every job has one within `cap`; "short" if
    some were too long (their tokens are cut); "none" if a job has no rented config."""
    if any(quoted[w["name"]] == "none" for w in chain):
        return "none"
    verdict = "ok"
    for w in chain:
        span = quoted[w["name"]]
        if isinstance(span, str) or span > cap:
            cut = 0.5 if isinstance(span, str) else cap / span * rng.uniform(0.4, 0.9)
            w["tokens"] = float(f"{w['tokens'] * cut:.2g}")
            verdict = "short"
        else:
            spans[w["name"]] = span
    return verdict


def _place(rng: random.Random, chain: list[Workload], spans: dict[str, int]) -> list[Workload]:
    """Windows one after another, the chain at a random place. A window is the cheapest
    rented span × 1.3-2.5, or 2-21 days where the chain still fits the quarter (q3's run
    1-4 weeks), plus a day so that a start at 00:00 reaches a daily window's opening."""
    tight = [spans[w["name"]] * rng.uniform(*SLACK) for w in chain]
    loose = [max(t, rng.uniform(*LOOSE_HOURS)) for t in tight]
    hours = loose if sum(math.ceil(h / 24) + 1 for h in loose) <= DAYS else tight
    days = [math.ceil(h / 24) + 1 for h in hours]
    day = rng.randint(0, DAYS - sum(days))
    placed = []
    for i, (w, length) in enumerate(zip(chain, days, strict=True)):
        fields = dict(w)
        if i == 0:
            fields["earliest_start"] = _date(day)
        else:
            fields["after"] = [chain[i - 1]["name"]]
        day += length
        fields["deadline"] = _date(day)
        placed.append(_ordered(fields))
    return placed


TRAIN_ORDER = ["name", "kind", "model", "method", "recipe", "precision", "tokens", "seq_len"]
TRAIN_ORDER += ["micro_batch", "earliest_start", "after", "deadline", "daily_hours"]
TRAIN_ORDER += ["checkpoint_every", "max_cards", "disk_gb"]


def _ordered(w: Workload) -> Workload:
    return {k: w[k] for k in TRAIN_ORDER if k in w}


# --- serve and reserve ------------------------------------------------------------------


def _serve(rng: random.Random, count: int, folder: Path) -> list[Workload]:
    """`count` services, each with an hourly config whose peak replicas fit the stock."""
    drafts = [_service(rng, i) for i in range(count)]
    pending = list(range(count))
    for _ in range(ROUNDS):
        if not pending:
            return drafts
        scenario = _load(folder, _scenario(0, 0, [drafts[i] for i in pending], []))
        pending = [i for i in pending if not _servable(scenario, drafts[i]["name"])]
        for i in pending:
            drafts[i] = _service(rng, i)
    raise RuntimeError(f"no servable draw after {ROUNDS} rounds: {pending}")


def _servable(scenario: Scenario, name: str) -> bool:
    w = scenario.workload(name)
    assert isinstance(w, ServeWorkload)
    peak = max(max(hourly_demand(scenario, w)), w.min_replicas)
    for c in replica_configs(scenario, w):
        stock = scenario.offers[c.offer].billing(c.mode).stock
        if c.rented and c.mode == "hourly" and -(-peak // c.capacity) * c.units <= (stock or peak):
            return True
    return False


def _service(rng: random.Random, slot: int) -> Workload:
    model = rng.choice(sorted(SERVED))
    precision, (low, high) = SERVED[model]
    peak = rng.randint(low, high)
    w: Workload = {
        "name": f"s{slot:04d}-{model}",
        "kind": "serve",
        "model": model,
        "precision": precision,
        "start": _date(0 if rng.random() < 0.6 else rng.randint(1, 61)),
        "end": _date(DAYS),
        "context_tokens": rng.choice([2048, 4096, 8192]),
        "min_tokens_per_s": rng.choice([15, 20, 30]),
    }
    if rng.random() < 0.5:  # weekdays and weekends differ
        weekend = max(1, round(peak * rng.uniform(0.3, 0.7)))
        w["concurrency"] = {"weekdays": _day(rng, peak), "weekend": _day(rng, weekend)}
    else:
        w["concurrency"] = _day(rng, peak)
    growth = rng.choice([0.0, 0.05, 0.1, 0.15, 0.2])
    if growth:
        w["growth_per_month"] = growth
    w["min_replicas"] = 2 if rng.random() < 0.15 else 1
    disk = rng.choice([0, 100, 200])
    if disk:
        w["disk_gb"] = disk
    return w


def _day(rng: random.Random, peak: int) -> dict[str, int]:
    """Requests in flight by hour range, covering the day once: office hours or evenings."""
    low = max(1, round(peak * rng.uniform(0.05, 0.25)))
    mid = max(low, round(peak * rng.uniform(0.3, 0.6)))
    if rng.random() < 0.5:
        return {"00-08": low, "08-12": peak, "12-14": mid, "14-20": peak, "20-24": mid}
    return {"00-09": low, "09-18": mid, "18-23": peak, "23-24": mid}


def _reserve(rng: random.Random, count: int) -> list[Workload]:
    """People's cards, weekdays 09:00-19:00, from the quarter's start or a later month."""
    reserves = []
    for i in range(count):
        w: Workload = {"name": f"r{i:04d}-dev", "kind": "reserve"}
        r = rng.random()
        if r < 0.5:
            w["card"] = "rtx4090-48g"
        elif r < 0.7:
            w["card"] = "rtx4090"
        else:
            w["min_memory_gib"] = rng.choice([24, 40, 70])
        w["cards"] = rng.choice([1, 1, 2, 2, 4])
        w["hours"] = "09:00-19:00"
        w["days"] = "weekdays"
        w["start"] = _date(rng.choice([0, 0, 0, 31, 62]))
        w["end"] = _date(DAYS)
        disk = rng.choice([0, 100, 200])
        if disk:
            w["disk_gb"] = disk
        reserves.append(w)
    return reserves


# --- stock and the final check ----------------------------------------------------------


def _stock(factor: int) -> list[dict[str, Any]]:
    """`offers:` patches multiplying every stock (and cap) of the catalog by `factor`."""
    catalog, _ = load_catalog(CATALOG)
    patches = []
    for offer in catalog.offers:
        patch: dict[str, Any] = {"id": offer.id}
        for mode, billing in offer.modes.items():
            if billing.stock is not None:
                patch[mode] = {"stock": billing.stock * factor}
        if offer.max_units is not None:
            patch["max_units"] = offer.max_units * factor
        if len(patch) > 1:
            patches.append(patch)
    return patches


def stock_factor(data: dict[str, Any]) -> int:
    """The multiple of the catalog's stock that a generated scenario's `offers:` set."""
    patches = data.get("offers") or []
    if not patches:
        return 1
    catalog, _ = load_catalog(CATALOG)
    first = patches[0]
    offer = next(o for o in catalog.offers if o.id == first["id"])
    mode = next(m for m in first if m in offer.modes)
    stock = offer.billing(mode).stock
    assert stock, first
    return int(first[mode]["stock"] // stock)


def _verify(data: dict[str, Any], folder: Path) -> None:
    """Every train job has a config alone in its window; a job after another from that
    one's deadline (what its chain guarantees). A generator bug otherwise."""
    deadlines = {w["name"]: w.get("deadline") for w in data["workloads"]}
    alone = []
    for w in data["workloads"]:
        if w["kind"] == "train" and w.get("after"):
            w = _unchained(w) | {"earliest_start": deadlines[w["after"][0]]}
        alone.append(w)
    scenario = _load(folder, data | {"workloads": alone})
    for w in scenario.spec.workloads:
        if w.kind == "train" and not quote_job(scenario, w.name).configs:
            raise RuntimeError(f"{w.name}: no config fits its window alone")


def _unchained(w: Workload) -> Workload:
    return {k: v for k, v in w.items() if k != "after"}


if __name__ == "__main__":
    main()
