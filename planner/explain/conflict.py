"""What an infeasible scenario is told: typed conflicts, each with the relaxations that
restore feasibility, as text for people and as a patch over the scenario file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from planner.domain.catalog import Catalog
from planner.domain.merge import deep_merge
from planner.domain.scenario import Scenario, ScenarioFile
from planner.domain.timeaxis import TimeAxis
from planner.estimate.core import GIB

Kind = Literal["memory", "deadline", "dependency", "stock", "demand", "joint"]

# what is available where nothing is offered: every catalog lists offers (load_catalogs),
# so the scenario's (or a patch's) `offers:` changes deleted them all
NO_OFFERS = "no offer at all (the offers: changes delete every offer the catalogs list)"


@dataclass(frozen=True)
class Relaxation:
    """One change that restores feasibility. `patch` is that change as a what-if over the
    scenario file (deep-merged: workloads by name, offers by id); None where it lies
    outside the file (a bigger card than any offer sells)."""

    text: str
    patch: dict[str, Any] | None = None


@dataclass(frozen=True)
class Conflict:
    """Workloads that cannot all be planned, what they need against what is available, in
    units a person reads, and the smallest relaxations found (alternatives, best first)."""

    kind: Kind
    workloads: tuple[str, ...]
    needed: str
    available: str
    relaxations: tuple[Relaxation, ...] = ()

    @property
    def relaxation(self) -> str | None:
        return " or ".join(r.text for r in self.relaxations) or None

    def line(self) -> str:
        who = ", ".join(self.workloads) or "the commitments"
        return f"[{self.kind}] {who}: needs {self.needed}; available: {self.available}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "workloads": list(self.workloads),
            "needed": self.needed,
            "available": self.available,
            "relaxation": self.relaxation,
            "relaxations": [{"text": r.text, "patch": r.patch} for r in self.relaxations],
        }


def plural(n: float, what: str) -> str:
    """'1 unit', '2 units', '1,024 cards', '3 requests in flight' (the first word takes
    the plural)."""
    first, _, rest = what.partition(" ")
    return f"{n:,.0f} {first}{'' if n == 1 else 's'}{' ' + rest if rest else ''}"


def listing(names: list[str], most: int = 4) -> str:
    """'a, b, c, d and 3 more': long lists cut, so a line stays readable."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def by_value(pairs: list[tuple[str, str]]) -> str:
    """'a, b: 0 units each; c: 4 units' from (name, value) pairs, grouped by value."""
    groups: dict[str, list[str]] = {}
    for name, value in pairs:
        groups.setdefault(value, []).append(name)
    return "; ".join(
        f"{listing(names)}: {value}{' each' if len(names) > 1 else ''}"
        for value, names in groups.items()
    )


def gib(amount: float) -> str:
    return f"{amount / GIB:,.1f} GiB"


def when(axis: TimeAxis, hour: int) -> str:
    """An hour index as people read it, local time without seconds."""
    return f"{axis.local(hour):%Y-%m-%d %H:%M}"


def stamp(axis: TimeAxis, hour: int) -> str:
    """An hour index as a scenario file writes a local time."""
    return f"{axis.local(hour):%Y-%m-%dT%H:%M}"


def workload_patch(name: str, **fields: Any) -> dict[str, Any]:
    return {"workloads": [{"name": name, **fields}]}


def stock_patch(
    offer: str, mode: str, stock: int | None, max_units: int | None = None
) -> dict[str, Any]:
    """A new stock for one offer's mode and/or a new cap over its modes (None: unchanged)."""
    entry: dict[str, Any] = {"id": offer}
    if stock is not None:
        entry[mode] = {"stock": stock}
    if max_units is not None:
        entry["max_units"] = max_units
    return {"offers": [entry]}


def merged(*patches: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for patch in patches:
        out = deep_merge(out, patch)
    return out


def within_limits(scenario: Scenario, patch: dict[str, Any]) -> Scenario | None:
    """`patched`, or None where the patch takes the scenario past what the planner accepts
    (a horizon over 366 days, stock over the input limits): no relaxation to offer."""
    try:
        return patched(scenario, patch)
    except ValidationError:
        return None


def patched(scenario: Scenario, patch: dict[str, Any]) -> Scenario:
    """The scenario with `patch` applied as a user would apply it to the file: workloads
    merged by name (`delete: true` removes one), offers merged over the catalogs by id."""
    offers = patch.get("offers", [])
    rest = {k: v for k, v in patch.items() if k != "offers"}
    spec = scenario.spec.model_dump(mode="json", exclude_unset=True)
    catalogs = []
    for catalog in scenario.catalogs:
        ids = {o.id for o in catalog.offers}
        mine = [o for o in offers if o["id"] in ids]
        data = catalog.model_dump(mode="json")
        catalogs.append(Catalog.model_validate(deep_merge(data, {"offers": mine})))
    return Scenario(
        path=scenario.path,
        spec=ScenarioFile.model_validate(deep_merge(spec, rest)),
        catalogs=tuple(catalogs),
        cards=scenario.cards,
        models=scenario.models,
    )
