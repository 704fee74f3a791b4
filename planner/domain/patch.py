"""Patches: a document deep-merged over a scenario, every value remembering who wrote it.

A patch has the scenario's shape (docs/scenarios.md): maps merge, `workloads` merge by
`name` and `offers` by `id` (an item with `delete: true` removes its namesake: a workload
here, and its name from every `after` list, as `--drop` does; an offer from the catalogs,
its scenario change with it), `null`
deletes a field, and any other value (lists such as `commitments` or `after` included)
replaces. Inside `offers` a `null` is kept, because those entries are merged once more,
over the catalog's offers, where it deletes the catalog's field (`hourly: null` drops a
billing mode). The merged document is a `Source` whose problems are located in the file
that wrote the value: `patch.yaml:4:7: workloads.0.deadline: …`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.domain.errors import Issue, LoadError
from planner.domain.merge import LIST_KEYS
from planner.domain.suggest import did_you_mean
from planner.domain.yaml_source import PathKey, Source

Origin = tuple[Source, PathKey]  # the file that wrote a value, and where in it


@dataclass
class _Node:
    """A value of the merged document with its origin; maps and lists hold nodes."""

    origin: Origin
    value: Any


def _plain(node: _Node) -> Any:
    if isinstance(node.value, dict):
        return {k: _plain(v) for k, v in node.value.items()}
    if isinstance(node.value, list):
        return [_plain(v) for v in node.value]
    return node.value


def _merge(base: _Node, patch: _Node, key: str | None, keep_null: bool) -> _Node:
    """`patch` over `base`; a merged map keeps the origin of the map it merged into."""
    if isinstance(base.value, dict) and isinstance(patch.value, dict):
        merged = dict(base.value)
        for name, value in patch.value.items():
            if value.value is None and not keep_null:
                merged.pop(name, None)
            elif name in merged:
                inner = keep_null or (key is None and name == "offers")
                merged[name] = _merge(merged[name], value, name, inner)
            else:
                merged[name] = value
        return _Node(base.origin, merged)
    id_key = LIST_KEYS.get(key or "")
    if id_key and isinstance(base.value, list) and isinstance(patch.value, list):
        return _Node(base.origin, _merge_named(base.value, patch.value, id_key, keep_null))
    return patch


def _ident(node: _Node, id_key: str) -> object:
    value = node.value.get(id_key) if isinstance(node.value, dict) else None
    return value.value if value is not None and isinstance(value.value, str) else None


def _merge_named(
    base: list[_Node], patch: list[_Node], id_key: str, keep_null: bool
) -> list[_Node]:
    merged = list(base)
    for item in patch:
        ident = _ident(item, id_key)
        same = (i for i, old in enumerate(merged) if ident and _ident(old, id_key) == ident)
        where = next(same, None)
        delete = isinstance(item.value, dict) and _plain(item).get("delete") is True
        if ident is not None and delete and id_key == "id":
            # an offer's deletion goes on to the catalogs, where the offer is: it replaces
            # the scenario's own change to that offer, if any
            if where is not None:
                merged[where] = item
            else:
                merged.append(item)
        elif ident is not None and delete:
            if where is not None:
                del merged[where]
        elif where is not None:
            merged[where] = _merge(merged[where], item, None, keep_null)
        else:
            merged.append(item)
    return merged


@dataclass
class Layered(Source):
    """A scenario with patches merged over it: each value's origin is the file that wrote it."""

    origins: dict[PathKey, Origin] = field(default_factory=dict)

    def issue(self, path: PathKey, message: str) -> Issue:
        for depth in range(len(path), -1, -1):
            origin = self.origins.get(path[:depth])
            if origin is not None:
                source, at = origin
                return source.issue((*at, *path[depth:]), message)
        return Issue(self.file, None, None, path, message)

    def folder(self, path: PathKey) -> Path:
        for depth in range(len(path), -1, -1):
            origin = self.origins.get(path[:depth])
            if origin is not None:
                return origin[0].folder(origin[1])
        return Path(self.file).parent


def _origins(node: _Node, path: PathKey, out: dict[PathKey, Origin]) -> None:
    out[path] = node.origin
    children: Any = ()
    if isinstance(node.value, dict):
        children = node.value.items()
    elif isinstance(node.value, list):
        children = enumerate(node.value)
    for key, child in children:
        _origins(child, (*path, key), out)


def apply_patch(base: Source, patch: Source) -> Layered:
    """`patch` merged over `base` (either may itself be merged), origins kept. A workload
    the patch deletes that `base` does not have is refused (LoadError, located in the
    patch), as `--drop` refuses it: deleting nothing is a misspelt name."""
    issues = _unknown_deletes(base, patch)
    if issues:
        raise LoadError(issues)
    merged = _merge(_tree(base), _tree(patch), None, False)
    _leave_after(merged, _deleted(patch))
    origins: dict[PathKey, Origin] = {}
    _origins(merged, (), origins)
    return Layered(base.file, _plain(merged), {}, origins)


def _unknown_deletes(base: Source, patch: Source) -> list[Issue]:
    """`{name: X, delete: true}` items under the patch's `workloads` where `base` has no
    workload X, each at its name in the patch, with a did-you-mean."""

    names = [str(w["name"]) for _, w in _workloads(base) if isinstance(w.get("name"), str)]
    issues = []
    for i, item in _workloads(patch):
        name = item.get("name")
        if item.get("delete") is True and isinstance(name, str) and name not in names:
            message = f"no workload {name!r} to delete{did_you_mean(name, names)}"
            issues.append(patch.issue(("workloads", i, "name"), message))
    return issues


def _workloads(source: Source) -> list[tuple[int, dict[str, Any]]]:
    """The source's `workloads` items that are maps, with their positions."""
    data = source.data.get("workloads") if isinstance(source.data, dict) else None
    items = data if isinstance(data, list) else []
    return [(i, w) for i, w in enumerate(items) if isinstance(w, dict)]


def _deleted(patch: Source) -> set[str]:
    """The names of the workloads the patch deletes."""
    return {
        w["name"]
        for _, w in _workloads(patch)
        if w.get("delete") is True and isinstance(w.get("name"), str)
    }


def _leave_after(merged: _Node, gone: set[str]) -> None:
    """A deleted workload leaves every other workload's `after` list, as `--drop` removes it
    (a job that waited for it no longer waits)."""
    workloads = merged.value.get("workloads") if isinstance(merged.value, dict) else None
    if not gone or workloads is None or not isinstance(workloads.value, list):
        return
    for w in workloads.value:
        after = w.value.get("after") if isinstance(w.value, dict) else None
        if after is not None and isinstance(after.value, list):
            after.value = [a for a in after.value if a.value not in gone]


def _tree(source: Source) -> _Node:
    """The document as nodes, each with the origin it already has (itself, unless merged)."""
    origins = source.origins if isinstance(source, Layered) else {}

    def build(data: Any, path: PathKey) -> _Node:
        origin = origins.get(path, (source, path))
        if isinstance(data, dict):
            return _Node(origin, {k: build(v, (*path, k)) for k, v in data.items()})
        if isinstance(data, list):
            return _Node(origin, [build(v, (*path, i)) for i, v in enumerate(data)])
        return _Node(origin, data)

    return build(source.data, ())
