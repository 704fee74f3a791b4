"""Mutations of the shipped scenario and catalog files, for benchmarks/fuzz.py.

A case is built from one random generator seeded by the case id, so any case can be rebuilt
alone. Two families of mutation:

- structural, on the parsed YAML: delete or duplicate keys and items, values of the wrong
  type, extreme numbers (0, -1, 1e-12, 1e9, 1e30, .nan, .inf, huge ints), long strings, bad
  dates, times and durations, unknown names, duplicate workload names, cycles in `after`,
  windows that cross midnight, empty lists, offer patches and commitments;
- raw text, on the file's bytes (benchmarks/fuzz_raw.py).
"""

from __future__ import annotations

import copy
import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from fuzz_raw import count_steps, mutate_text

REPO = Path(__file__).resolve().parent.parent
JIZHISUAN = "jizhisuan-2026-09"

# --- value pools ------------------------------------------------------------------------

NUMBERS: list[Any] = [
    0, -1, 1e-12, 1e9, 1e30, float("nan"), float("inf"), float("-inf"), 2**63, 2**64 + 1,
    10**30, -(2**63), 0.5, 1.5, 1e-300, 1e308, 100_000, 100_001, 10**9 + 1, 0.001,
]  # fmt: skip
STRINGS: list[Any] = [
    "", " ", "x" * 100_000, "é" * 2_000, "null", "~", "yes", "0x1F", "1_000", "1e9", "2.0e9",
    "../../etc/passwd", "/dev/zero", "/dev/null", ".", "..", "catalogs/", "€", "\t", "-", "a\nb",
    "0", "-1", "nan", "inf",
]  # fmt: skip
DATES: list[Any] = [
    "2026-02-30", "2026-13-01", "0001-01-01", "9999-12-31", "2026-07-01T08:30",
    "2026-07-01T25:00", "2026-07-01T08:00+08:00", "2026-07-01 08:00", "20260701", "2026-7-1",
    "July 1", dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.datetime(2026, 7, 1, 8, 0),
    "2026-03-29T02:00", "2026-10-25T02:00", "2026-07-01T00:00:00.5", dt.date(2027, 7, 2),
]  # fmt: skip
WINDOWS: list[Any] = [
    "22:00-06:00", "00:00-00:00", "24:00-01:00", "08:00-08:00", "8-22", "23:00-24:00",
    "00:00-24:00", "20:00-00:00", "25:00-26:00", "08:00 - 22:00", "-1:00-05:00",
    "23:00-01:00", "12:00-11:00", "08:00-22:00-23:00", "08:00-22:30",
]  # fmt: skip
DURATIONS: list[Any] = [
    "0m", "0h", "99999999999d", "1h30", "-1h", "30", 30, "30s", "1d1d", "1h30m", "0d0h0m",
    "10m", "999999999999999999999999m", 10**30, -5, 1.5, "1 h", "366d", "367d",
]  # fmt: skip
NAMES: list[Any] = [
    "nope", "h200-141", "llama-9", "jizhisuan", "Asia/Nowhere", "Australia/Lord_Howe",
    "Europe/Berlin", "America/St_Johns", "UTC", "EUR", "JPY", "KRW", "XXX", "cards",
    "a100-samples", "Asia/Kathmandu", "America/Santiago", "Pacific/Chatham", "llama-3.1-405b",
    "mixtral-8x22b", "qwen3-30b-a3b", "b300-288g", "rtx3090", "ascend-910b", "UPPER",
]  # fmt: skip
WRONG_TYPES: list[Any] = [[], {}, "text", 1, 1.5, True, None, [1, 2], {"a": 1}, [[]], [{}]]

NUMERIC_KEYS = {
    "tokens", "seq_len", "micro_batch", "max_cards", "cards", "tokens_per_s", "disk_gb",
    "context_tokens", "min_tokens_per_s", "concurrency", "requests_per_s", "output_tokens",
    "growth_per_month", "min_replicas", "max_cards_per_replica", "min_memory_gib", "units",
    "count", "usable_memory_fraction", "price", "stock", "min_hours", "increment_hours",
    "preemptions_per_hour", "unit_cards", "cards_per_node", "link_gbps", "max_units",
    "disk_price_per_gb_month", "gbps", "value", "params", "layers", "hidden", "intermediate",
    "heads", "kv_heads", "head_dim", "vocab", "max_context", "experts", "experts_per_token",
    "expert_intermediate", "shared_experts", "active_params",
}  # fmt: skip
DATE_KEYS = {"start", "end", "earliest_start", "deadline", "date"}
WINDOW_KEYS = {"daily_hours", "hours"}
DURATION_KEYS = {"checkpoint_every", "setup_minutes", "restart_minutes"}
NAME_KEYS = {
    "model", "card", "offer", "catalog", "timezone", "currency", "kind", "method", "recipe",
    "precision", "kv_precision", "engine", "mode", "id", "name", "interconnect", "confidence",
}  # fmt: skip


@dataclass
class Case:
    """One fuzz case: the files to write, the command to run, and what was done."""

    id: str
    command: str  # validate | solve
    scenario: str  # file name of the scenario among `files`
    files: dict[str, bytes] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    json_out: bool = False


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def dump(data: Any) -> bytes:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10**6).encode()


# --- structural mutations ---------------------------------------------------------------

Path_ = tuple[Any, ...]


def paths(data: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every path in plain data, parents before children."""
    found = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            found += paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += paths(value, (*prefix, i))
    return found


def get(data: Any, path: Path_) -> Any:
    for part in path:
        data = data[part]
    return data


def put(data: Any, path: Path_, value: Any) -> Any:
    if not path:
        return value
    get(data, path[:-1])[path[-1]] = value
    return data


def _key(path: Path_) -> str:
    named = [p for p in path if isinstance(p, str)]
    return named[-1] if named else ""


def new_value(rng: random.Random, path: Path_, old: Any) -> Any:
    """A value for the field at `path`: of its kind (number, date, window, …) but extreme."""
    key = _key(path)
    pools: list[list[Any]] = [WRONG_TYPES, STRINGS]
    if key in NUMERIC_KEYS or (isinstance(old, int | float) and not isinstance(old, bool)):
        pools = [NUMBERS] * 4 + [WRONG_TYPES, STRINGS]
        if isinstance(old, int | float) and not isinstance(old, bool) and rng.random() < 0.4:
            return old * rng.choice([10**3, 10**6, 10**9, 10**-3, -1, 0])
    elif key in DATE_KEYS or isinstance(old, dt.date):
        pools = [DATES] * 3 + [WRONG_TYPES]
        if isinstance(old, dt.date) and rng.random() < 0.5:
            return old + dt.timedelta(days=rng.choice([-400, -31, -1, 1, 7, 92, 366, 367, 4000]))
    elif key in WINDOW_KEYS:
        pools = [WINDOWS] * 3 + [WRONG_TYPES]
    elif key in DURATION_KEYS:
        pools = [DURATIONS] * 3 + [WRONG_TYPES]
    elif key in NAME_KEYS:
        pools = [NAMES] * 3 + [STRINGS, WRONG_TYPES]
    return copy.deepcopy(rng.choice(rng.choice(pools)))


def _pick(rng: random.Random, data: Any, want: Callable[[Path_, Any], bool]) -> Path_ | None:
    found = [p for p in paths(data) if p and want(p, get(data, p))]
    return rng.choice(found) if found else None


def set_value(rng: random.Random, data: Any) -> tuple[Any, str]:
    path = _pick(rng, data, lambda _p, v: not isinstance(v, dict | list))
    if path is None:
        return data, "nothing to set"
    value = new_value(rng, path, get(data, path))
    return put(data, path, value), f"set {_show(path)} = {_short(value)}"


def wrong_type(rng: random.Random, data: Any) -> tuple[Any, str]:
    path = _pick(rng, data, lambda _p, _v: True)
    if path is None:
        return data, "nothing to retype"
    value = copy.deepcopy(rng.choice(WRONG_TYPES + STRINGS[:4]))
    return put(data, path, value), f"set {_show(path)} = {_short(value)}"


def delete(rng: random.Random, data: Any) -> tuple[Any, str]:
    path = _pick(rng, data, lambda _p, _v: True)
    if path is None:
        return data, "nothing to delete"
    del get(data, path[:-1])[path[-1]]
    return data, f"delete {_show(path)}"


def duplicate_item(rng: random.Random, data: Any) -> tuple[Any, str]:
    path = _pick(rng, data, lambda _p, v: isinstance(v, list) and bool(v))
    if path is None:
        return data, "no list to duplicate in"
    items = get(data, path)
    item = rng.choice(items)
    items.insert(rng.randrange(len(items) + 1), copy.deepcopy(item))
    return data, f"duplicate an item of {_show(path)}"


def empty(rng: random.Random, data: Any) -> tuple[Any, str]:
    path = _pick(rng, data, lambda _p, v: isinstance(v, dict | list))
    if path is None:
        return data, "nothing to empty"
    value = type(get(data, path))()
    return put(data, path, value), f"empty {_show(path)}"


def unknown_key(rng: random.Random, data: Any) -> tuple[Any, str]:
    path = _pick(rng, data, lambda _p, v: isinstance(v, dict))
    target = get(data, path) if path is not None else data
    if not isinstance(target, dict):
        return data, "no mapping for a key"
    key = rng.choice(["tokenz", "delete", "assumed", "kind", "<<", "1", "null", "x" * 200])
    target[key] = copy.deepcopy(rng.choice(WRONG_TYPES + NUMBERS[:6]))
    return data, f"add key {key[:20]!r} under {_show(path or ())}"


STRUCTURAL = [set_value] * 6 + [wrong_type, delete, delete, duplicate_item, empty, unknown_key]


# --- scenario-aware mutations -----------------------------------------------------------


def _workloads(data: Any, kind: str | None = None) -> list[dict[str, Any]]:
    items = data.get("workloads") if isinstance(data, dict) else None
    return [
        w
        for w in (items if isinstance(items, list) else [])
        if isinstance(w, dict) and (kind is None or w.get("kind") == kind)
    ]


def duplicate_name(rng: random.Random, data: Any) -> tuple[Any, str]:
    items = _workloads(data)
    if len(items) < 2:
        items.append(copy.deepcopy(items[0])) if items else None
        return data, "duplicate the only workload"
    a, b = rng.sample(items, 2)
    a["name"] = b.get("name")
    return data, f"rename a workload to {b.get('name')!r}"


def after_cycle(rng: random.Random, data: Any) -> tuple[Any, str]:
    trains = _workloads(data, "train")
    if not trains:
        return data, "no train workload for after"
    chain = rng.sample(trains, rng.randint(1, min(3, len(trains))))
    for here, before in zip(chain, chain[1:] + chain[:1], strict=True):
        here["after"] = [before.get("name")]
    if rng.random() < 0.3:  # or names that are not train workloads
        chain[0]["after"] = [rng.choice(["nobody", *[w.get("name") for w in _workloads(data)]])]
    return data, f"after cycle over {[w.get('name') for w in chain]}"


def midnight_window(rng: random.Random, data: Any) -> tuple[Any, str]:
    items = _workloads(data, "train") + _workloads(data, "reserve")
    if not items:
        return data, "no windowed workload"
    target = rng.choice(items)
    key = "hours" if target.get("kind") == "reserve" else "daily_hours"
    target[key] = rng.choice(["22:00-06:00", "23:00-01:00", "20:00-00:00", "12:00-11:00"])
    return data, f"{target.get('name')}.{key} = {target[key]} (crosses midnight)"


def horizon(rng: random.Random, data: Any) -> tuple[Any, str]:
    span = data.get("horizon") if isinstance(data, dict) else None
    if not isinstance(span, dict) or not isinstance(span.get("start"), dt.date):
        return data, "no horizon"
    days = rng.choice([0, -1, 1, 366, 367, 3650, 365 * 400, 365 * 7000])
    if days > 0 and span["start"].year + days // 365 >= 9999:
        span["end"] = dt.date(9999, 12, 31)
    else:
        span["end"] = span["start"] + dt.timedelta(days=days)
    return data, f"horizon end = {span['end']}"


def commitment(rng: random.Random, data: Any) -> tuple[Any, str]:
    if not isinstance(data, dict) or not isinstance(data.get("horizon"), dict):
        return data, "no scenario for a commitment"
    mode = rng.choice(["hourly", "spot", "daily", "weekly", "monthly", "yearly"])
    item: dict[str, Any] = {
        "offer": rng.choice(["jz-h200", "jz-rtx4090", "jz-a800-80g", "jz-h20", "nope"]),
        "mode": mode,
        "units": rng.choice([1, 2, 0, 10**9, 1.5]),
        "start": data["horizon"].get("start"),
    }
    if rng.random() < 0.5:
        item["count" if mode in ("daily", "weekly", "monthly") else "end"] = rng.choice(
            [1, 3, 0, 10**6, data["horizon"].get("end")]
        )
    data.setdefault("commitments", [])
    if isinstance(data["commitments"], list):
        data["commitments"].append(item)
    return data, f"add commitment {_short(item)}"


def offer_patch(rng: random.Random, data: Any) -> tuple[Any, str]:
    if not isinstance(data, dict):
        return data, "no scenario for an offer patch"
    patch: dict[str, Any] = {"id": rng.choice(["jz-h200", "jz-rtx4090", "jz-h20", "new-one"])}
    mode = rng.choice(["hourly", "spot", "daily", "weekly", "monthly"])
    choice = rng.random()
    if choice < 0.3:
        patch[mode] = None  # delete a billing mode
    elif choice < 0.8:
        patch[mode] = {"price": rng.choice(NUMBERS), "stock": rng.choice([None, *NUMBERS[:6]])}
    else:
        patch.update(card=rng.choice([*NAMES[:3], "h200-141g"]), hourly={"price": 1})
    data.setdefault("offers", [])
    if isinstance(data["offers"], list):
        data["offers"].append(patch)
    return data, f"add offer patch {_short(patch)}"


def inline_model(rng: random.Random, data: Any) -> tuple[Any, str]:
    items = [w for w in _workloads(data) if isinstance(w.get("model"), str)]
    if not items:
        return data, "no model reference"
    target = rng.choice(items)
    path = REPO / "models" / f"{target['model']}.yaml"
    if not path.is_file():
        return data, "model is not shipped"
    card = load(path)
    card, step = rng.choice(STRUCTURAL)(rng, card)
    target["model"] = card
    return data, f"inline {target.get('name')}'s model card, {step}"


def scale_number(rng: random.Random, data: Any) -> tuple[Any, str]:
    """A number of the right type and sign, far larger or smaller: input that parses."""
    path = _pick(rng, data, lambda _p, v: isinstance(v, int | float) and not isinstance(v, bool))
    if path is None:
        return data, "no number to scale"
    old = get(data, path)
    factor = rng.choice([0, 1e-3, 0.1, 0.5, 2, 3, 10, 100, 1000, 10**6, 10**9, 1e-12, 10**30])
    value = old * factor
    if rng.random() < 0.15:
        value = rng.choice([10_000, 10_001, 10**9, 10**9 + 1, 2**62, 1e30, 1e-12])
    return put(data, path, value), f"set {_show(path)} = {_short(value)} (was {old!r})"


def shift_date(rng: random.Random, data: Any) -> tuple[Any, str]:
    path = _pick(rng, data, lambda _p, v: isinstance(v, dt.date))
    if path is None:
        return data, "no date to shift"
    old = get(data, path)
    value = old + dt.timedelta(days=rng.choice([-400, -31, -1, 1, 7, 92, 366, 367, 4000]))
    return put(data, path, value), f"set {_show(path)} = {value} (was {old})"


def add_reserve(rng: random.Random, data: Any) -> tuple[Any, str]:
    """People's cards beside the scenario's work: any card, hours, days and count."""
    span = data.get("horizon") if isinstance(data, dict) else None
    items = data.get("workloads") if isinstance(data, dict) else None
    if not isinstance(span, dict) or not isinstance(items, list):
        return data, "no scenario for a reserve"
    item: dict[str, Any] = {
        "name": f"desk-{len(items)}",
        "kind": "reserve",
        "cards": rng.choice([1, 2, 3, 8, 16, 100, 10_000]),
        "hours": rng.choice(["09:00-19:00", "00:00-24:00", "22:00-06:00", "23:00-01:00"]),
        "days": rng.choice(["weekdays", "weekend", "all", ["mon"], ["sun", "sat"]]),
        "start": span.get("start"),
        "end": span.get("end"),
    }
    if rng.random() < 0.7:
        item["card"] = rng.choice(["h200-141g", "a100-80g", "rtx4090-48g", "h20-96g", "l20"])
    else:
        item["min_memory_gib"] = rng.choice([20, 40, 80, 140, 0.5])
    if rng.random() < 0.3:
        item["disk_gb"] = rng.choice([0, 100, 10**6])
    items.append(item)
    return data, f"add reserve {_short(item)}"


SEMANTIC = [duplicate_name, after_cycle, midnight_window, horizon, commitment, offer_patch]
SEMANTIC += [inline_model, scale_number, shift_date, add_reserve]
PLAUSIBLE = [scale_number] * 4 + [shift_date, midnight_window, horizon, commitment, offer_patch]
PLAUSIBLE += [add_reserve] * 2


def mutate_data(
    rng: random.Random, data: Any, scenario: bool, plausible: bool = False
) -> tuple[Any, list[str]]:
    steps = []
    for _ in range(count_steps(rng)):
        ops = PLAUSIBLE if plausible else STRUCTURAL + (SEMANTIC * 2 if scenario else [])
        data, step = rng.choice(ops)(rng, data)
        steps.append(step)
    return data, steps


# --- cases --------------------------------------------------------------------------------

SCENARIOS = ["q3.yaml", "q3-train.yaml", "seed-13b-finetune.yaml", "seed-70b-serving.yaml"]
SOLVE_WEIGHTS = [0.04, 0.26, 0.35, 0.35]  # mostly the small scenarios; a few q3.yaml
CATALOG_OF = {"seed-70b-serving.yaml": "seed-70b-catalog.yaml"}  # the rest use jizhisuan


def _show(path: Path_) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<root>"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def make_case(seed: int, case_id: str) -> Case:
    """Rebuild case `case_id` (`v123` validates, `s45` solves) of a run seeded `seed`."""
    rng = random.Random(f"{seed}:{case_id}")
    command = "solve" if case_id.startswith("s") else "validate"
    weights = SOLVE_WEIGHTS if command == "solve" else [0.25] * 4
    name = rng.choices(SCENARIOS, weights)[0]
    case = Case(case_id, command, name, json_out=rng.random() < 0.3)
    scenario_text = (REPO / "scenarios" / name).read_bytes()
    catalog_name = CATALOG_OF.get(name)
    if catalog_name:  # referenced by a relative path: it travels with the scenario
        case.files[catalog_name] = (REPO / "scenarios" / catalog_name).read_bytes()
    target = rng.choices(["scenario", "catalog", "cards", "second catalog"], [60, 25, 8, 7])[0]
    draw = rng.random()
    raw = draw < (0.15 if command == "solve" else 0.35)
    plausible = command == "solve" and draw > 0.4  # mostly input that reaches the solver
    if target == "scenario":
        case.files[name], case.steps = _mutated(rng, scenario_text, raw, True, plausible)
        case.steps = [f"{name}: {s}" for s in case.steps]
        return case
    data = load(REPO / "scenarios" / name)
    if catalog_name is None:  # a copy of the shipped catalog, next to the scenario
        catalog_name = f"{JIZHISUAN}.yaml"
        data["catalog"] = catalog_name
        case.files[catalog_name] = (REPO / "catalogs" / catalog_name).read_bytes()
    if target == "second catalog":
        catalog_name = "a100-samples.yaml"
        data["catalog"] = [data["catalog"], catalog_name]
        case.files[catalog_name] = (REPO / "catalogs" / catalog_name).read_bytes()
    if target == "cards":  # card specs: a catalog may override any shipped card by id
        cards = (REPO / "catalogs" / "cards.yaml").read_bytes()
        case.files[catalog_name] += b"\n" + cards
    case.files[name] = dump(data)
    case.files[catalog_name], steps = _mutated(rng, case.files[catalog_name], raw, False, plausible)
    case.steps = [f"{catalog_name} ({target}): {s}" for s in steps]
    return case


def _mutated(
    rng: random.Random, text: bytes, raw: bool, scenario: bool, plausible: bool
) -> tuple[bytes, list[str]]:
    if raw:
        return mutate_text(rng, text)
    data, steps = mutate_data(rng, yaml.safe_load(text), scenario, plausible)
    try:
        return dump(data), steps
    except (yaml.YAMLError, RecursionError, ValueError) as exc:  # unrepresentable: keep text
        return text, [*steps, f"(not written: {exc})"]
