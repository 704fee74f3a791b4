"""Rules that span fields, files and references: names exist, ids are unique, no cycles."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import networkx as nx

from planner.domain.catalog import Catalog
from planner.domain.errors import Issue
from planner.domain.magnitudes import magnitude_issues
from planner.domain.scenario import Scenario
from planner.domain.suggest import did_you_mean
from planner.domain.values import PACKAGE_DAYS, instant_datetime
from planner.domain.workload import ReserveWorkload, ServeWorkload, TrainWorkload
from planner.domain.yaml_source import Source


def duplicates(source: Source, key: str, id_key: str) -> list[Issue]:
    """Items of list `key` whose `id_key` an earlier item has, as written."""
    items = source.data.get(key, []) if isinstance(source.data, dict) else []
    seen: dict[object, int] = {}
    issues = []
    for i, item in enumerate(items if isinstance(items, list) else []):
        ident = item.get(id_key) if isinstance(item, dict) else None
        if not isinstance(ident, str | int):  # none, or not a name: the schema says so
            continue
        if ident in seen:
            issues.append(
                source.issue(
                    (key, i, id_key), f"{id_key} {ident!r} is used by {key}[{seen[ident]}] too"
                )
            )
        seen.setdefault(ident, i)
    return issues


def catalog_issues(catalogs: Sequence[Catalog], sources: Sequence[Source]) -> list[Issue]:
    """Unique offer ids across catalogs (within one, `load_catalogs` says so with the rest;
    currencies: the scenario converts them)."""
    issues: list[Issue] = []
    owner: dict[str, str] = {}
    for catalog, source in zip(catalogs, sources, strict=True):
        for i, offer in enumerate(catalog.offers):
            if offer.id in owner and owner[offer.id] != catalog.name:
                issues.append(
                    source.issue(
                        ("offers", i, "id"),
                        f"offer id {offer.id!r} is also in catalog "
                        f"{owner[offer.id]}; offer ids must be unique",
                    )
                )
            owner.setdefault(offer.id, catalog.name)
    return issues


def scenario_issues(scenario: Scenario, source: Source) -> list[Issue]:
    """Every cross-field and reference rule of a parsed scenario."""
    spec = scenario.spec
    issues: list[Issue] = []
    for catalog in scenario.catalogs:
        if catalog.currency != spec.currency:
            issues.append(
                source.issue(
                    ("currency",),
                    f"scenario currency {spec.currency} differs "
                    f"from catalog {catalog.name}'s {catalog.currency}; state its rate as "
                    f"exchange_rates: {{{catalog.currency}: {{rate: …, date: YYYY-MM-DD}}}} "
                    f"({spec.currency} per {catalog.currency})",
                )
            )
    issues += duplicates(source, "workloads", "name")
    issues += _horizon_issues(scenario, source)
    issues += _reference_issues(scenario, source)
    issues += _dependency_issues(scenario, source)
    issues += magnitude_issues(scenario, source)
    issues += _committed_stock_issues(scenario, source)
    return issues


def _packages_to(start: dt.date, end: dt.date, days: int) -> int:
    """Packages of `days` days back to back from `start` that reach `end` (at least one): a
    package commitment's default count, and the most that start before the horizon ends."""
    return max(1, -(-(end - start).days // days))


def _committed_stock_issues(scenario: Scenario, source: Source) -> list[Issue]:
    """Commitments count against stock (rules 7 and 8): the units they hold at once fit each
    mode's stock and each offer's cap; said at the commitment that first passes it."""
    horizon_end = instant_datetime(scenario.spec.horizon.end)
    spans: dict[tuple[str, str | None], list[tuple[dt.datetime, dt.datetime, int, int]]] = {}
    for i, c in enumerate(scenario.spec.commitments):
        offer = scenario.offers.get(c.offer)
        if offer is None or c.mode not in offer.modes:  # said by `_reference_issues`
            continue
        start = instant_datetime(c.start)
        if c.mode in PACKAGE_DAYS:
            length = PACKAGE_DAYS[c.mode]
            count = c.count or _packages_to(start, horizon_end, length)
            end = start + dt.timedelta(days=count * length)
        else:
            end = instant_datetime(c.end) if c.end is not None else horizon_end
        for key in ((c.offer, c.mode), (c.offer, None)):
            spans.setdefault(key, []).append((start, end, c.units, i))
    issues = []
    for (offer_id, mode), items in sorted(spans.items(), key=lambda x: (x[0][0], x[0][1] or "")):
        offer = scenario.offers[offer_id]
        limit = offer.billing(mode).stock if mode is not None else offer.max_units
        if limit is None:
            continue
        for start, _, _, i in items:  # held at once where one starts: those not ended
            held = sum(u for a, b, u, _ in items if a <= start < b)
            if held > limit:
                what = f"its {mode} stock" if mode else "its cap over all modes (max_units)"
                message = (
                    f"commitments hold {held} units of {offer_id} at once from "
                    f"{start:%Y-%m-%d %H:%M}, more than {what}, {limit}: commitments count "
                    "against stock"
                )
                issues.append(source.issue(("commitments", i, "units"), message))
                break
    return issues


def _horizon_issues(scenario: Scenario, source: Source) -> list[Issue]:
    horizon = scenario.spec.horizon
    start, end = instant_datetime(horizon.start), instant_datetime(horizon.end)
    issues = []

    def inside(path: tuple[str | int, ...], label: str, value: dt.date | None) -> None:
        if value is None:
            return
        moment = instant_datetime(value)
        if not start <= moment <= end:
            issues.append(
                source.issue(
                    path,
                    f"{label} {value} lies outside the horizon {horizon.start} .. {horizon.end}",
                )
            )

    for i, w in enumerate(scenario.spec.workloads):
        if isinstance(w, TrainWorkload):
            inside(("workloads", i, "earliest_start"), "earliest_start", w.earliest_start)
            inside(("workloads", i, "deadline"), "deadline", w.deadline)
        else:
            inside(("workloads", i, "start"), "start", w.start)
            inside(("workloads", i, "end"), "end", w.end)
        if isinstance(w, ServeWorkload):
            for month in w.month_scale:
                number = int(month.split("-")[1])
                if not 1 <= number <= 12:
                    issues.append(
                        source.issue(
                            ("workloads", i, "month_scale", month),
                            f"{month} is not a month (YYYY-MM)",
                        )
                    )
    for i, c in enumerate(scenario.spec.commitments):
        inside(("commitments", i, "start"), "start", c.start)
        inside(("commitments", i, "end"), "end", c.end)
        if c.mode in PACKAGE_DAYS and c.count and isinstance(c.start, dt.date):
            length = PACKAGE_DAYS[c.mode]
            last = c.start + dt.timedelta(days=length * (c.count - 1))
            if last >= horizon.end:
                fit = _packages_to(c.start, horizon.end, length)
                issues.append(
                    source.issue(
                        ("commitments", i, "count"),
                        f"{c.count} {c.mode} packages from {c.start} start the last on {last}, "
                        f"at or past the horizon end {horizon.end}; every package must start "
                        f"before the horizon end: at most {fit} fit",
                    )
                )
    return issues


def _reference_issues(scenario: Scenario, source: Source) -> list[Issue]:
    """Cards, offers and modes named by workloads and commitments exist."""
    cards, offers = scenario.cards, scenario.offers
    issues = []
    for i, w in enumerate(scenario.spec.workloads):
        if isinstance(w, TrainWorkload) and w.measured and w.measured.card not in cards:
            issues.append(
                source.issue(
                    ("workloads", i, "measured", "card"),
                    f"unknown card {w.measured.card!r}{did_you_mean(w.measured.card, cards)}",
                )
            )
        if isinstance(w, ReserveWorkload):
            offered = {o.card for o in offers.values()}
            if w.card is not None and w.card not in offered:
                hint = did_you_mean(w.card, sorted(offered))
                what = "no offer rents card" if w.card in cards else "unknown card"
                issues.append(source.issue(("workloads", i, "card"), f"{what} {w.card!r}{hint}"))
            if w.min_memory_gib is not None and not any(
                cards[c].memory_gib.value >= w.min_memory_gib for c in offered if c in cards
            ):
                issues.append(
                    source.issue(
                        ("workloads", i, "min_memory_gib"),
                        f"no offered card has {w.min_memory_gib} GiB",
                    )
                )
    for i, c in enumerate(scenario.spec.commitments):
        offer = offers.get(c.offer)
        if offer is None:
            issues.append(
                source.issue(
                    ("commitments", i, "offer"),
                    f"unknown offer {c.offer!r}{did_you_mean(c.offer, offers)}",
                )
            )
        elif c.mode not in offer.modes:
            issues.append(
                source.issue(
                    ("commitments", i, "mode"),
                    f"offer {c.offer} does not sell {c.mode}; it sells {', '.join(offer.modes)}",
                )
            )
    return issues


def _dependency_issues(scenario: Scenario, source: Source) -> list[Issue]:
    """`after` names existing train workloads and the graph has no cycle."""
    return dependency_issues(
        [
            (i, w.name, w.kind, w.after if isinstance(w, TrainWorkload) else ())
            for i, w in enumerate(scenario.spec.workloads)
        ],
        source,
    )


# a workload as `after` sees it: its index in the file, name, kind (None where not written)
# and the names its `after` lists
Dependent = tuple[int, str, str | None, Sequence[str]]


def dependency_issues(workloads: Sequence[Dependent], source: Source) -> list[Issue]:
    """Each `after` names an existing train workload other than its own, and the lists form
    no cycle. On a valid file and on one as written (a workload whose kind is not written
    is taken for one that can wait)."""
    kinds = {name: kind for _, name, kind, _ in workloads}
    waits = [w for w in workloads if w[2] in ("train", None)]
    graph = nx.DiGraph()
    issues = []
    for i, name, _, after in waits:
        graph.add_node(name)
        for j, before in enumerate(after):
            path = ("workloads", i, "after", j)
            if before not in kinds:
                # a suggestion another job could wait for: never the one whose list this is
                others = [k for k, kind in kinds.items() if k != name and kind in ("train", None)]
                hint = did_you_mean(before, others)
                issues.append(source.issue(path, f"unknown workload {before!r}{hint}"))
            elif kinds[before] not in ("train", None):
                issues.append(
                    source.issue(
                        path,
                        f"{before!r} is a {kinds[before]} workload; "
                        "only train workloads finish, so only they can "
                        "come before another",
                    )
                )
            elif before == name:
                issues.append(source.issue(path, f"{name!r} cannot come after itself"))
            else:
                graph.add_edge(before, name)
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return issues
    names = [edge[0] for edge in cycle] + [cycle[0][0]]
    # where the cycle closes: the `after` list that names the last edge's start (a name
    # given twice is found at the workload whose list holds it)
    before, last = cycle[-1]
    index = next(i for i, name, _, after in waits if name == last and before in after)
    issues.append(
        source.issue(
            ("workloads", index, "after"), f"the after: lists form a cycle: {' → '.join(names)}"
        )
    )
    return issues
