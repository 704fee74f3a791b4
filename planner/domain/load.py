"""Load scenarios, catalogs and model cards: safe YAML, relative paths, precise errors.

Every problem found in a set of files is collected and raised together as one LoadError;
each names its file, line, field path and what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from planner.domain.calibration import CalibrationFile, Entry, calibrated_cards
from planner.domain.catalog import CardType, Catalog, Offer
from planner.domain.currency import convert
from planner.domain.errors import Issue, LoadError, pydantic_issues, step
from planner.domain.merge import deep_merge
from planner.domain.model_card import ModelCard, card_from_hf_config
from planner.domain.patch import apply_patch
from planner.domain.scenario import Scenario, ScenarioFile
from planner.domain.semantics import (
    catalog_issues,
    dependency_issues,
    duplicates,
    scenario_issues,
)
from planner.domain.suggest import did_you_mean
from planner.domain.workload import ReserveWorkload, ServeWorkload
from planner.domain.yaml_source import PathKey, Source, read_text, read_yaml
from planner.paths import data_dir, shipped_names

M = TypeVar("M", bound=BaseModel)
Locate = Callable[[PathKey, str], Issue]
Layers = list[tuple[Source, PathKey, dict[str, Any]]]  # (file, where in it, raw item)
CARD_SPECS = "cards"  # catalogs/cards.yaml: the shipped card specs, not a price list


@dataclass
class Collector:
    """Gathers issues while validating pieces, so that all of them are reported at once."""

    issues: list[Issue] = field(default_factory=list)

    def validate(self, model: type[M], data: Any, locate: Locate) -> M | None:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            self.issues.extend(pydantic_issues(exc, data, locate, model))
            return None

    def raise_if_any(self) -> None:
        if self.issues:
            raise LoadError(self.issues)


def _is_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.endswith((".yaml", ".yml", ".json")) or ref == "."


def _exists(path: Path) -> bool:
    """Whether anything is at `path` (a device too: reading it says what is wrong with it)."""
    try:
        return path.exists()
    except OSError:
        return False


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; a name too long or otherwise unusable is simply not one."""
    try:
        return path.is_file()
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _mapping(source: Source, what: str) -> dict[str, Any]:
    if not isinstance(source.data, dict):
        raise LoadError([source.issue((), f"expected a {what} (a YAML mapping) at the top level")])
    return source.data


# --- card specs and catalogs ---------------------------------------------------------------


@lru_cache(maxsize=1)
def _card_source() -> Source:
    return read_yaml(data_dir("catalogs") / f"{CARD_SPECS}.yaml")


def catalog_names() -> list[str]:
    """Names of the shipped catalogs."""
    return [n for n in shipped_names("catalogs") if n != CARD_SPECS]


def resolve_catalog_path(ref: str, base: Path | None, where: Locate) -> Path:
    """A catalog reference: a path (relative to `base`) or the name of a shipped catalog."""
    if _is_path(ref):
        path = Path(ref)
        path = path if path.is_absolute() or base is None else base / path
        if not _exists(path):  # said where the reference is, with the path it resolved to
            raise LoadError([where((), f"catalog file {str(path)!r} not found")])
        return path
    path = data_dir("catalogs") / f"{ref}.yaml"
    if ref == CARD_SPECS or not _is_file(path):
        names = catalog_names()
        raise LoadError(
            [
                where(
                    (),
                    f"unknown catalog {ref!r}{did_you_mean(ref, names)} "
                    f"(shipped: {', '.join(names)})",
                )
            ]
        )
    return path


def _merged_items(
    collect: Collector,
    model: type[M],
    key: str,
    base: Layers,
    patches: Layers,
    check: Callable[[dict[str, Any], Locate], list[Issue]] = lambda _item, _locate: [],
) -> list[M]:
    """Merge patch items over base items by `key`, then validate each, blaming the right file.
    `check`: references in each merged item, checked whether or not the rest of it is valid
    (every problem at once)."""
    items: dict[Any, Layers] = {}
    for n, origin in enumerate([*base, *patches]):
        ident = _ident(origin[2], key)
        if n < len(base) and any(layer[0] is origin[0] for layer in items.get(ident, [])):
            ident = (ident, n)  # an id given twice in one file: each validated alone
        items.setdefault(ident, []).append(origin)
    result = []
    for layers in items.values():
        merged: dict[str, Any] = {}
        for _, _, raw in layers:
            merged = deep_merge(merged, raw)

        def locate(path: PathKey, message: str, layers: Layers = layers) -> Issue:
            written = [layer for layer in layers if _written(layer[2], path)]
            source, prefix, _ = (written or layers)[-1]  # the last file that wrote the field
            return source.issue((*prefix, *path), message)

        value = collect.validate(model, merged, locate)
        if value is not None:
            result.append(value)
        collect.issues += check(merged, locate)
    return result


def _ident(item: dict[str, Any], key: str = "id") -> object:
    """An item's id for merging; an id that is not text (a list, a map: an error reported
    by the schema) matches nothing, so it can neither merge nor break a lookup."""
    value = item.get(key)
    return value if isinstance(value, str) else object()


def _written(data: Any, path: PathKey) -> bool:
    for part in path:
        found, data = step(data, part)
        if not found:
            return False
    return True


def _items(source: Source, key: str) -> Layers:
    data = source.data.get(key, []) if isinstance(source.data, dict) else []
    if not isinstance(data, list):
        raise LoadError([source.issue((key,), "expected a list")])
    return [(source, (key, i), item) for i, item in enumerate(data) if isinstance(item, dict)]


def _known_card(cards: dict[str, CardType]) -> Callable[[dict[str, Any], Locate], list[Issue]]:
    def check(offer: dict[str, Any], locate: Locate) -> list[Issue]:
        card = offer.get("card")
        if not isinstance(card, str) or card in cards:
            return []  # a card that is no text, or none: the schema says so
        return [locate(("card",), f"unknown card {card!r}{did_you_mean(card, cards)}")]

    return check


def load_catalogs(
    paths: list[Path], offer_patches: Source | None = None
) -> tuple[tuple[Catalog, ...], dict[str, CardType]]:
    """Catalogs with their cards merged over the shipped specs and a scenario's offer changes."""
    collect = Collector()
    sources = []
    for path in paths:
        try:
            sources.append(read_yaml(path))
        except LoadError as exc:
            collect.issues.extend(exc.issues)
    collect.raise_if_any()
    for source in sources:  # with every other problem (each such item is validated alone)
        collect.issues += duplicates(source, "offers", "id") + duplicates(source, "cards", "id")
        collect.issues += _listed_offers(source)
    card_layers = _items(_card_source(), "cards")
    for source in sources:
        _mapping(source, "catalog")
        card_layers += _items(source, "cards")
    cards = {c.id: c for c in _merged_items(collect, CardType, "id", card_layers, [])}
    catalogs = []
    patches = _items(offer_patches, "offers") if offer_patches else []
    offer_items, clashes = _prefixed_offers(sources)
    known = {_ident(i) for items in offer_items for _, _, i in items}
    # `{id: X, delete: true}` in a scenario's or patch's offers removes the catalog's offer X
    deleted = {_ident(item) for _, _, item in patches if item.get("delete") is True}
    for source, where, item in patches:
        if item.get("delete") is True and _ident(item) not in known:
            ident = str(item.get("id"))
            ids = sorted(i for i in known if isinstance(i, str))
            message = f"no offer {ident!r} to delete{did_you_mean(ident, ids)}"
            collect.issues.append(source.issue((*where, "id"), message))
    patches = [p for p in patches if _ident(p[2]) not in deleted]
    offer_items = [[x for x in items if _ident(x[2]) not in deleted] for items in offer_items]
    for source, where, item in patches:
        if _ident(item) in clashes:
            ident = str(item.get("id"))
            collect.issues.append(
                source.issue(
                    (*where, "id"),
                    f"offer id {ident!r} is in catalogs {' and '.join(clashes[ident])}, so "
                    f"each is named by its catalog: "
                    f"{' or '.join(f'{p}.{ident}' for p in clashes[ident])}",
                )
            )
        elif _ident(item) not in known and "card" not in item:
            ident = str(item.get("id"))
            ids = sorted(i for i in known if isinstance(i, str))
            collect.issues.append(
                source.issue(
                    (*where, "id"),
                    f"unknown offer id {ident!r}{did_you_mean(ident, ids)}; "
                    "a new offer needs at least card and a billing mode",
                )
            )
    patches = [
        p
        for p in patches
        if _ident(p[2]) not in clashes and (_ident(p[2]) in known or "card" in p[2])
    ]
    for source, items in zip(sources, offer_items, strict=True):
        own_ids = {_ident(item) for _, _, item in items}
        mine = [p for p in patches if _ident(p[2]) in own_ids]
        if source is sources[-1]:  # offers new to every catalog join the last one
            mine += [p for p in patches if _ident(p[2]) not in known]
        offers = _merged_items(collect, Offer, "id", items, mine, _known_card(cards))
        header = {**source.data, "cards": [], "offers": []}
        catalog = collect.validate(Catalog, header, source.issue)
        if catalog is not None:
            catalogs.append(catalog.model_copy(update={"offers": offers}))
    collect.raise_if_any()
    issues = catalog_issues(catalogs, sources)
    if issues:
        raise LoadError(issues)
    return tuple(catalogs), cards


def _listed_offers(source: Source) -> list[Issue]:
    """A catalog file lists at least one offer, each a mapping (docs/scenarios.md,
    "Catalog"): one without offers would pass as a catalog of nothing; an entry that is no
    mapping, and a card entry likewise, would be dropped unread."""
    data = source.data if isinstance(source.data, dict) else {}
    if "offers" not in data:
        return [
            source.issue(
                ("offers",), "required field is missing: a catalog lists at least one offer"
            )
        ]
    issues = []
    if data["offers"] == []:
        issues.append(
            source.issue(("offers",), "a catalog lists at least one offer; this lists none")
        )
    for key, what in (("offers", "an offer"), ("cards", "a card")):
        written = data.get(key)
        for i, item in enumerate(written if isinstance(written, list) else []):
            if not isinstance(item, dict):
                message = f"expected {what} (a mapping with an id), got {item!r}"
                issues.append(source.issue((key, i), message))
    return issues


def _prefixed_offers(sources: list[Source]) -> tuple[list[Layers], dict[str, list[str]]]:
    """Each catalog's offers, an id found in more than one catalog named by its catalog
    (`aws.g5-xlarge`, the catalog's name in lower case); and those ids with the prefixes."""
    layers = [_items(source, "offers") for source in sources]
    prefixes = [
        str(s.data.get("name") if isinstance(s.data, dict) else None).lower().replace("_", "-")
        for s in sources
    ]
    owners: dict[str, list[str]] = {}
    for prefix, items in zip(prefixes, layers, strict=True):
        for ident in {i for _, _, item in items if isinstance(i := _ident(item), str)}:
            owners.setdefault(ident, []).append(prefix)
    clashes = {i: p for i, p in owners.items() if len(p) > 1}
    out = []
    for prefix, items in zip(prefixes, layers, strict=True):
        out.append(
            [
                (src, where, {**item, "id": f"{prefix}.{item['id']}"})
                if _ident(item) in clashes
                else (src, where, item)
                for src, where, item in items
            ]
        )
    return out, clashes


def load_catalog(ref: str) -> tuple[Catalog, dict[str, CardType]]:
    """One catalog by shipped name or path (relative to the working directory)."""
    path = resolve_catalog_path(ref, Path.cwd(), lambda p, m: Issue(ref, None, None, p, m))
    catalogs, cards = load_catalogs([path])
    return catalogs[0], cards


# --- model cards ----------------------------------------------------------------------------


def model_names() -> list[str]:
    return shipped_names("models")


@lru_cache(maxsize=64)
def _model_file(path: Path) -> ModelCard:
    source = read_yaml(path)
    collect = Collector()
    card = collect.validate(ModelCard, _mapping(source, "model card"), source.issue)
    collect.raise_if_any()
    assert card is not None
    return card


def load_model(ref: str, base: Path | None, where: Locate) -> ModelCard:
    """A model card by shipped name, or from a .yaml card or a HF config.json by path."""
    if not _is_path(ref):
        path = data_dir("models") / f"{ref}.yaml"
        if not _is_file(path):
            names = model_names()
            raise LoadError(
                [
                    where(
                        (),
                        f"unknown model {ref!r}{did_you_mean(ref, names)}; "
                        "give a shipped name or a path to a config.json",
                    )
                ]
            )
        return _model_file(path)
    path = Path(ref)
    path = path if path.is_absolute() or base is None else base / path
    if _is_dir(path):  # a Hugging Face checkout: its config.json
        path = path / "config.json"
    if path.suffix != ".json":
        return _model_file(path)
    try:
        config = json.loads(read_text(path))
    except LoadError as exc:  # not found, unreadable or too large
        message = exc.issues[0].message
        raise LoadError([where((), f"model config {str(path)!r}: {message}")]) from None
    except ValueError as exc:
        raise LoadError([where((), f"cannot read model config {str(path)!r}: {exc}")]) from None
    if not isinstance(config, dict):
        raise LoadError([where((), f"{str(path)!r} is not a config.json object")])
    name = (path.parent.name or path.stem).lower().replace("_", "-")
    try:
        return card_from_hf_config(config, name, str(path))
    except (ValueError, ValidationError) as exc:
        raise LoadError([where((), f"{path}: {exc}")]) from None


def _at(source: Source, path: PathKey) -> Locate:
    """Report problems with a referenced file at the field of `source` that referenced it."""
    return lambda _inner, message: source.issue(path, message)


# --- scenarios ------------------------------------------------------------------------------


def load_scenario(path: Path | str, patches: Sequence[Path | Source] = ()) -> Scenario:
    """Read a scenario file, merge `patches` over it in order (files or built sources, such
    as what-if flags), validate and resolve it; raises LoadError listing every problem,
    each located in the file that wrote the value."""
    path = Path(path)
    source: Source = read_yaml(path)
    _mapping(source, "scenario")
    for patch in patches:
        layer = read_yaml(patch) if isinstance(patch, Path) else patch
        _mapping(layer, "patch")
        source = apply_patch(source, layer)
    return validate_scenario(path, source)


def load_calibration(path: Path) -> tuple[Entry, ...]:
    """One calibration file (`plan probe … --save`), validated; LoadError locates problems."""
    source = read_yaml(path)
    collect = Collector()
    parsed = collect.validate(CalibrationFile, _mapping(source, "calibration file"), source.issue)
    collect.raise_if_any()
    assert parsed is not None
    return tuple(parsed.calibration)


def _calibrations(source: Source, written: Any, collect: Collector) -> tuple[Entry, ...]:
    """The entries of every calibration file a scenario names, relative to the scenario."""
    entries: list[Entry] = []
    for i, ref in enumerate(written if isinstance(written, list) else []):
        if not isinstance(ref, str):
            continue
        at: PathKey = ("calibration", i)
        path = source.folder(at) / ref
        if not _is_file(path):
            collect.issues.append(source.issue(at, f"calibration file {ref!r} not found"))
            continue
        try:
            entries.extend(load_calibration(path))
        except LoadError as exc:
            collect.issues.extend(exc.issues)
    return tuple(entries)


def _per_class(spec: ScenarioFile, models: dict[str, ModelCard], source: Source) -> ScenarioFile:
    """Each serve workload with request classes replaced by one workload per class,
    `<name>.<class>`, on the same model (docs/scenarios.md, "Request classes")."""
    if not any(isinstance(w, ServeWorkload) and w.classes for w in spec.workloads):
        return spec
    collect = Collector()
    workloads: list[Any] = []
    names = {w.name for w in spec.workloads}  # every name so far, the classes' included
    for i, w in enumerate(spec.workloads):
        if not (isinstance(w, ServeWorkload) and w.classes):
            workloads.append(w)
            continue
        try:
            classes = w.per_class()
        except ValidationError as exc:
            for error in exc.errors():
                message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
                collect.issues.append(source.issue(("workloads", i, "classes"), message))
            continue
        for c in classes:
            if c.name in names:
                at = ("workloads", i, "classes")
                collect.issues.append(
                    source.issue(at, f"{c.name}, a request class's name, is taken already")
                )
            names.add(c.name)
            if w.name in models:
                models[c.name] = models[w.name]
        workloads += classes
    collect.raise_if_any()
    return spec.model_copy(update={"workloads": workloads})


def _written_issues(
    data: dict[str, Any], source: Source, catalogs: Sequence[Catalog]
) -> list[Issue]:
    """`after` entries that name no train workload or close a cycle, reserved cards that no
    offer rents, and a workload without a kind whose name is close to another's (a patch's
    misspelt name adds a workload), in the file as written, for a file whose other fields
    fail the schema (so they are reported together, not after a first fix)."""
    written = data.get("workloads")
    raws = [w for w in written if isinstance(w, dict)] if isinstance(written, list) else []
    kinds = [str(w["name"]) for w in raws if isinstance(w.get("name"), str) and "kind" in w]
    offered = sorted({o.card for c in catalogs for o in c.offers})
    issues = []
    for i, raw in enumerate(written if isinstance(written, list) else []):
        name = raw.get("name") if isinstance(raw, dict) else None
        hint = did_you_mean(name, kinds) if isinstance(name, str) and name else ""
        if hint and "kind" not in raw:
            message = f"no workload is named {name!r} (a new name adds a workload){hint}"
            issues.append(source.issue(("workloads", i, "name"), message))
        card = raw.get("card") if isinstance(raw, dict) and raw.get("kind") == "reserve" else None
        if catalogs and isinstance(card, str) and card not in offered:
            message = f"no offer rents card {card!r}{did_you_mean(card, offered)}"
            issues.append(source.issue(("workloads", i, "card"), message))
    dependents = [
        (i, str(raw["name"]), _kind(raw.get("kind")), _names(raw.get("after")))
        for i, raw in enumerate(written if isinstance(written, list) else [])
        if isinstance(raw, dict) and isinstance(raw.get("name"), str)
    ]
    return issues + dependency_issues(dependents, source)


def _kind(written: Any) -> str | None:
    """A workload's kind as written, None where it is not one (misspelt: the schema says so)."""
    return written if written in ("train", "serve", "reserve") else None


def _names(written: Any) -> list[str]:
    """The names in a list as written (nothing else)."""
    return [n for n in written if isinstance(n, str)] if isinstance(written, list) else []


def validate_scenario(path: Path, source: Source) -> Scenario:
    """A read (and perhaps patched) scenario document validated and resolved; relative paths
    resolve from the folder of the file that wrote them."""
    data = _mapping(source, "scenario")
    collect = Collector()
    given = data.get("workloads")  # the schema says what else it may be, located
    for i, raw in enumerate(given if isinstance(given, list) else []):
        for key in ("demand_share", "class_of"):  # set by request classes, not by files
            if isinstance(raw, dict) and key in raw:
                message = f"{key} is set by request classes (classes: [{{name, share}}])"
                collect.issues.append(source.issue(("workloads", i, key), message))
    spec = collect.validate(ScenarioFile, data, source.issue)
    catalogs: tuple[Catalog, ...] = ()
    cards: dict[str, CardType] = {}
    key = "catalogs" if "catalogs" in data and "catalog" not in data else "catalog"
    written = data.get(key)
    refs = [written] if isinstance(written, str) else written
    if isinstance(refs, list) and refs and all(isinstance(r, str) for r in refs):
        try:
            paths: list[Path] = []
            for i, ref in enumerate(refs):
                at: PathKey = (key,) if isinstance(written, str) else (key, i)
                resolved = resolve_catalog_path(ref, source.folder(at), _at(source, at))
                if resolved.resolve() in (p.resolve() for p in paths):
                    raise LoadError([source.issue(at, f"catalog {ref!r} is listed twice")])
                paths.append(resolved)
            catalogs, cards = load_catalogs(paths, source)
        except LoadError as exc:
            collect.issues.extend(exc.issues)
    # Model references are resolved from the written data, so a misspelt model is reported
    # together with the file's other problems.
    models: dict[str, ModelCard] = {}
    written = data.get("workloads")
    for i, raw in enumerate(written if isinstance(written, list) else []):
        if (
            isinstance(raw, dict)
            and raw.get("kind") != "reserve"
            and isinstance(raw.get("model"), str)
        ):
            try:
                at = ("workloads", i, "model")
                card = load_model(raw["model"], source.folder(at), _at(source, at))
            except LoadError as exc:
                collect.issues.extend(exc.issues)
            else:
                models[str(raw.get("name"))] = card
    calibrations = _calibrations(source, data.get("calibration"), collect)
    if spec is None:  # the checks on a valid file cannot run: those that can, on it as written
        collect.issues.extend(duplicates(source, "workloads", "name"))
        collect.issues.extend(_written_issues(data, source, catalogs))
    collect.raise_if_any()
    assert spec is not None
    if calibrations:
        where = ", ".join(str(c) for c in data.get("calibration", []))
        cards = calibrated_cards(cards, calibrations, where)
    for workload in spec.workloads:
        if not isinstance(workload, ReserveWorkload) and isinstance(workload.model, ModelCard):
            models[workload.name] = workload.model
    catalogs = tuple(
        convert(c, spec.currency, spec.exchange_rates[c.currency])
        if c.currency != spec.currency and c.currency in spec.exchange_rates
        else c
        for c in catalogs
    )
    scenario = Scenario(
        path=path,
        spec=spec,
        catalogs=catalogs,
        cards=cards,
        models=models,
        calibrations=calibrations,
    )
    issues = scenario_issues(scenario, source)
    if issues:
        raise LoadError(issues)
    per_class = _per_class(spec, models, source)  # after the checks, which read the file
    if per_class is spec:
        return scenario
    services = {w.name: w for w in spec.workloads if isinstance(w, ServeWorkload) and w.classes}
    update = {"spec": per_class, "models": dict(models), "services": services}
    return scenario.model_copy(update=update)
