"""What-if patches as plain data: where a value stands in a scenario, a map that replaces
another under `deep_merge`, and several patches composed into one.

A patch is deep-merged over a scenario file (maps merge, workloads by name, offers by id,
`null` deletes, other lists replace), and `planner.explain.patched` merges it over the
validated scenario dumped (a service with request classes there as its per-class
workloads: a patch naming the service as the file does goes over the file). Where the two
write a map differently (a demand curve written by weekday group, dumped by weekday and
hour), `replacing` lists the keys of both as null.
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from planner.domain.errors import LoadError
from planner.domain.merge import LIST_KEYS
from planner.domain.scenario import Scenario
from planner.domain.yaml_source import read_yaml

Patch = dict[str, Any]
FieldPath = tuple[
    str, ...
]  # field names; after `workloads` a workload's name, after `offers` an id


def value_at(data: Any, path: FieldPath) -> Any:
    """The value at `path` in plain scenario data (workloads by name, offers by id), or None."""
    for i, part in enumerate(path):
        key = LIST_KEYS.get(path[i - 1]) if i else None
        if key and isinstance(data, list):
            data = next((d for d in data if isinstance(d, dict) and d.get(key) == part), None)
        elif isinstance(data, dict):
            data = data.get(part)
        else:
            return None
    return data


def old_values(scenario: Scenario, path: FieldPath) -> tuple[Any, Any]:
    """The value at `path` as the scenario's file writes it (None where unwritten, or when
    the file cannot be read again), and as `patched` sees it: an offer merged over its
    catalog, the rest as validated and dumped."""
    try:
        written = value_at(read_yaml(scenario.path).data, path) if scenario.path else None
    except LoadError:
        written = None
    if path[0] == "offers" and len(path) > 1 and path[1] in scenario.offers:
        return written, value_at(scenario.offers[path[1]].model_dump(mode="json"), path[2:])
    if path[0] == "workloads":  # as the file names them: a service with classes whole
        dumps = [
            w.model_dump(mode="json", exclude_unset=True) for w in scenario.written_workloads()
        ]
        return written, value_at({"workloads": dumps}, path)
    return written, value_at(scenario.spec.model_dump(mode="json", exclude_unset=True), path)


def replacing(olds: tuple[Any, ...], new: Any) -> Any:
    """A patch value that, merged over any of `olds`, gives `new`: keys it lacks are null."""
    if not isinstance(new, dict):
        return new
    maps = [old for old in olds if isinstance(old, dict)]
    out = {k: replacing(tuple(m[k] for m in maps if k in m), v) for k, v in new.items()}
    return out | {k: None for m in maps for k in m if k not in new}


def nest(path: FieldPath, value: Any) -> Any:
    """`value` placed at `path`: `{workloads: [{name: W, field: value}]}` and the like."""
    if not path:
        return value
    key = LIST_KEYS.get(path[0])
    if key and len(path) > 1:
        return {path[0]: [{key: path[1], **nest(path[2:], value)}]}
    return {path[0]: nest(path[1:], value)}


def plain(value: Any) -> Any:
    """YAML data with its dates and times as the text a scenario file writes."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dt.datetime):
        return f"{value:%Y-%m-%dT%H:%M}"
    return value.isoformat() if isinstance(value, dt.date) else value


def combine(patches: list[Patch]) -> Patch:
    """Patches merged in order into one, as `deep_merge` merges them except that a null is
    kept (it deletes in the file), and so that flags computed from one base compose:
    - `commitments` are a union: each later list adds what it holds beyond the earlier one,
      repeats counted (every `commit` patch repeats the base's commitments, since lists
      replace; the same commitment twice is one);
    - a workload (or offer) deleted stays deleted, and leaves every `after` list.
    Otherwise the later patch wins (two prices for one offer mode: the last)."""
    out: Patch = {}
    for patch in patches:
        out = _compose(out, copy.deepcopy(patch))
    gone = {w.get("name") for w in out.get("workloads", []) if w.get("delete") is True}
    for w in out.get("workloads", []):
        if isinstance(w.get("after"), list):
            w["after"] = [a for a in w["after"] if a not in gone]
    return out


def _compose(old: Any, new: Any, key: str | None = None) -> Any:
    if isinstance(old, dict) and isinstance(new, dict):
        merged = dict(old)
        for field, value in new.items():
            known = field in old and value is not None
            merged[field] = _compose(old[field], value, field) if known else value
        return merged
    if not (isinstance(old, list) and isinstance(new, list)):
        return new
    if key == "commitments":
        rest, union = list(old), list(old)
        for item in new:
            if item in rest:
                rest.remove(item)
            else:
                union.append(item)
        return union
    ident = LIST_KEYS.get(key or "")
    if not ident:
        return new
    items = list(old)
    for item in new:
        name = _ident(item, ident)
        at = next((j for j, o in enumerate(items) if name and _ident(o, ident) == name), None)
        if at is None:
            items.append(item)
        elif item.get("delete") is True or items[at].get("delete") is True:
            items[at] = {ident: name, "delete": True}
        else:
            items[at] = _compose(items[at], item)
    return items


def _ident(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else None
