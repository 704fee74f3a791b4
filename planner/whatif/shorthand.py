"""Shorthand what-if flags. Each is a function `(scenario, text) -> patch` of the loaded base
scenario that returns plain (JSON) data of the scenario file's shape, to deep-merge over the
file (maps merge, workloads by name, offers by id, `null` deletes, other lists replace).

    --price OFFER.MODE=×F   (or xF)  multiply each matched offer mode's price by F > 0, exactly
    --price OFFER.MODE=P             set it to P ≥ 0 (either way at most 6 decimals, ≤ 10^9)
    --stock OFFER.MODE=N             set each matched offer mode's stock to N units
    --commit OFFER=N:MODE[@PRICE][/FROM][xCOUNT]
        a commitment of N units of OFFER's MODE from FROM (a date, or date and hour
        2026-08-01T08:00 for hourly/spot; default the horizon start), named `whatif-<text>`.
        xCOUNT: packages in a row (daily/weekly/monthly only; default: to the horizon end).
        @PRICE sets that offer mode's price in the variant: it prices the commitment and
        every other use of that offer mode.
    --shift WORKLOAD=±AMOUNT         AMOUNT in whole hours: 14d, 6h, 1d12h (no sign: +). A train
        job's earliest_start and deadline (unset: the horizon start and end) move, a service's
        or reserve's start and end, in local wall-clock time. A start moved before the horizon
        is clipped to its start, an end moved past it to its end; an end or deadline at the
        horizon end stays there (a service runs "to the end of the quarter"; `clipped` says
        so, since the window then changes length). Only the named workload moves (not those
        `after` it).
    --drop WORKLOAD                  removes it, and removes it from every other `after` list
    --scale-demand K | WORKLOAD=K    multiplies every serve workload's demand curve (or the
        named one's), concurrency or requests_per_s, by K > 0, and each of its request
        classes' own curves (in its whole `classes` list); min_replicas stays
    --set PATH=VALUE                 PATH dotted (`workloads.NAME.field`, `offers.ID.hourly.
        stock`, `usable_memory_fraction`); VALUE one YAML value; `null` deletes; a map
        replaces the map at PATH (a whole workload or offer cannot be set: name a field)

WORKLOAD is a name as the scenario file writes it: a service with request classes whole (its
classes' names, `<name>.<class>`, are the planner's, and refused with the service's name).

OFFER and MODE in --price and --stock may be fnmatch globs ('*.spot=×1.3', 'jz-h*.hourly=20');
every offer mode that matches and exists is changed. A map a patch replaces (a demand curve,
a --set map) lists the old keys as null, those the file at `scenario.path` writes (read
again) and those validated alike (`planner.whatif.patch.replacing`), so it merges the same
over the file and, for a workload without request classes, in `planner.explain.patched`
(which merges over the per-class workloads: the flags' patches go over the file).
Bad input raises LoadError naming the flag, what was expected and, for names, a did-you-mean.

`combine` (from `planner.whatif.patch`) merges the flags' patches in order: commitments are
a union, so several --commit all survive (the same one twice is one), a dropped workload
leaves every `after` list, and otherwise the later flag wins.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal, DecimalException, Inexact
from fnmatch import fnmatchcase
from typing import Any

from pydantic import TypeAdapter, ValidationError

from planner.domain.catalog import Offer, Units
from planner.domain.errors import Issue, LoadError
from planner.domain.money import MAX_PRICE_DECIMALS, Price
from planner.domain.scenario import Scenario, ScenarioFile
from planner.domain.suggest import did_you_mean
from planner.domain.values import (
    BILLING_MODES,
    PACKAGE_DAYS,
    BillingMode,
    Curve,
    Instant,
    WeekCurve,
    parse_minutes,
)
from planner.domain.values import instant_datetime as moment
from planner.domain.workload import (
    Commitment,
    RequestClass,
    ServeWorkload,
    TrainWorkload,
    Workload,
)
from planner.domain.yaml_source import parse_yaml
from planner.whatif.patch import Patch, combine, nest, old_values, plain, replacing

__all__ = [
    "clipped",
    "combine",
    "commit",
    "drop",
    "price",
    "scale_demand",
    "set_value",
    "shift",
    "stock",
]
_PRICE: TypeAdapter[Decimal] = TypeAdapter(Price)
_UNITS: TypeAdapter[int] = TypeAdapter(Units)
_INSTANT: TypeAdapter[dt.date] = TypeAdapter(Instant)
_CURVE: TypeAdapter[WeekCurve] = TypeAdapter(Curve)
_COMMIT = re.compile(
    r"(?P<offer>[^=]+)=(?P<units>\d+):(?P<mode>[a-z]+)(?:@(?P<price>[^/x]+))?"
    r"(?:/(?P<start>[^x]+))?(?:x(?P<count>\d+))?"
)


@dataclass(frozen=True)
class _Flag:
    name: str
    text: str

    def error(self, message: str) -> LoadError:
        return LoadError([Issue(f"--{self.name} {self.text}", None, None, (), message)])

    def split(self, grammar: str) -> tuple[str, str]:
        left, eq, right = self.text.partition("=")
        if not eq or not left.strip() or not right.strip():
            raise self.error(f"expected {grammar}")
        return left.strip(), right.strip()

    def check(self, adapter: TypeAdapter[Any], value: Any, what: str) -> Any:
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            why = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
            raise self.error(f"{what}: {why}") from None


def _decimal(flag: _Flag, text: str, what: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except DecimalException:
        value = Decimal("NaN")
    if not value.is_finite():
        raise flag.error(f"expected {what}, got {text!r}")
    return value


PRICE_QUANTUM = Decimal(1).scaleb(-MAX_PRICE_DECIMALS)


def _price_text(flag: _Flag, amount: Decimal, what: str) -> str:
    return format(flag.check(_PRICE, amount, what).normalize(), "f")


def _matches(scenario: Scenario, flag: _Flag, target: str) -> list[tuple[str, BillingMode]]:
    """(offer id, mode) pairs that OFFER.MODE (globs allowed) names and that exist."""
    pattern, dot, modes = target.rpartition(".")
    if not dot or not pattern or not modes:
        raise flag.error("expected OFFER.MODE before '=', e.g. jz-h200.hourly or '*.spot'")
    offers = [o for o in scenario.offers if fnmatchcase(o, pattern)]
    if not offers:
        hint = "" if re.search(r"[*?\[]", pattern) else did_you_mean(pattern, scenario.offers)
        raise flag.error(f"no offer matches {pattern!r}{hint}")
    wanted = [m for m in BILLING_MODES if fnmatchcase(m, modes)]
    if not wanted:
        hint = did_you_mean(modes, BILLING_MODES) or f"; modes: {', '.join(BILLING_MODES)}"
        raise flag.error(f"no billing mode matches {modes!r}{hint}")
    pairs = [(o, m) for o in offers for m in wanted if m in scenario.offers[o].modes]
    if not pairs:
        sold = "; ".join(f"{o} sells {', '.join(scenario.offers[o].modes)}" for o in offers[:4])
        more = f"; and {len(offers) - 4} more" if len(offers) > 4 else ""
        raise flag.error(f"no offer matching {pattern!r} sells {modes} ({sold}{more})")
    return pairs


def _by_offer(entries: Iterable[tuple[str, str, Patch]]) -> Patch:
    offers: dict[str, Patch] = {}
    for offer, mode, change in entries:
        offers.setdefault(offer, {"id": offer})[mode] = change
    return {"offers": list(offers.values())}


def price(scenario: Scenario, text: str) -> Patch:
    """`OFFER.MODE=×F`, `=xF` or `=P`: `{offers: [{id, MODE: {price: "decimal"}}]}`."""
    flag = _Flag("price", text)
    target, value = flag.split("OFFER.MODE=×FACTOR or OFFER.MODE=PRICE, e.g. jz-h200.hourly=×1.3")
    factor = None
    if value[0] in "×x":
        factor = _decimal(flag, value[1:], "a factor such as ×1.3")
        if factor <= 0:
            raise flag.error(f"the factor must be above 0, got {value[1:]}")
    else:
        new = _decimal(flag, value, "a price such as 20 or a factor such as ×1.3")
    entries = []
    for offer, mode in _matches(scenario, flag, target):
        old = scenario.offers[offer].billing(mode).price
        if factor is not None:
            try:  # exact: enough digits for the product, and anything inexact trapped
                digits = len(old.as_tuple().digits) + len(factor.as_tuple().digits)
                new = Context(prec=digits, traps=[Inexact]).multiply(old, factor)
                # a price holds MAX_PRICE_DECIMALS places: the product rounded half-even to
                # them (8.349174 × 1.3 = 10.8539262 → 10.853926), as currency conversion does
                new = new.quantize(PRICE_QUANTUM, rounding=ROUND_HALF_EVEN)
            except DecimalException:
                raise flag.error(f"{offer} {mode}: {old} × {factor} is out of range") from None
        what = "price" if factor is None else f"the new price of {offer} {mode}, {old} × {factor}"
        entries.append((offer, mode, {"price": _price_text(flag, new, what)}))
    return _by_offer(entries)


def stock(scenario: Scenario, text: str) -> Patch:
    """`OFFER.MODE=N`: `{offers: [{id, MODE: {stock: N}}]}`."""
    flag = _Flag("stock", text)
    target, value = flag.split("OFFER.MODE=UNITS, e.g. jz-h200.hourly=32")
    if value.startswith("-") and value[1:].isdigit():
        raise flag.error(f"a stock must be at least 0 units, got {value}")
    if not value.isdigit():
        raise flag.error(f"expected a whole number of units, got {value!r}")
    units = flag.check(_UNITS, int(value), "stock")
    return _by_offer([(o, m, {"stock": units}) for o, m in _matches(scenario, flag, target)])


def _instant_text(when: dt.datetime) -> str:
    return when.date().isoformat() if when.hour == 0 else f"{when:%Y-%m-%dT%H:00}"


def _dump(item: Any) -> Any:
    return item.model_dump(mode="json", exclude_unset=True, exclude_none=True)


def commit(scenario: Scenario, text: str) -> Patch:
    """`OFFER=N:MODE[@PRICE][/FROM][xCOUNT]`: `{commitments: [*the base's, new]}`, and
    `{offers: [{id, MODE: {price}}]}` with @PRICE."""
    flag = _Flag("commit", text)
    found = _COMMIT.fullmatch(text.strip())
    if found is None:
        raise flag.error(
            "expected OFFER=UNITS:MODE[@PRICE][/FROM][xCOUNT], e.g. jz-h200=8:monthly "
            "or jz-h200=8:monthly@9000/2026-08-01x2"
        )
    offer_id, mode, count = found["offer"].strip(), found["mode"], found["count"]
    offer = scenario.offers.get(offer_id)
    if offer is None:
        raise flag.error(f"unknown offer {offer_id!r}{did_you_mean(offer_id, scenario.offers)}")
    if mode not in BILLING_MODES:
        raise flag.error(f"unknown billing mode {mode!r}{did_you_mean(mode, BILLING_MODES)}")
    if mode not in offer.modes:
        raise flag.error(f"{offer_id} does not sell {mode}; it sells {', '.join(offer.modes)}")
    if count and mode not in PACKAGE_DAYS:
        raise flag.error(f"xCOUNT counts packages; {mode} commitments run to the horizon end")
    for part, what in (("units", "the units committed"), ("count", "the packages in a row")):
        if found[part] is not None and int(found[part]) < 1:
            name = "UNITS" if part == "units" else "xCOUNT"
            raise flag.error(f"{name} ({what}) must be at least 1, got {found[part]}")
    horizon = scenario.spec.horizon
    start = moment(flag.check(_INSTANT, found["start"] or horizon.start, "FROM"))
    if not moment(horizon.start) <= start < moment(horizon.end):
        raise flag.error(f"FROM lies outside the horizon {horizon.start} .. {horizon.end}")
    entry: Patch = {
        "name": ("whatif-" + re.sub(r"[^A-Za-z0-9._-]+", "-", text.strip()))[:80],
        "offer": offer_id,
        "mode": mode,
        "units": int(found["units"]),
        "start": _instant_text(start),
    }
    if count:
        entry["count"] = int(count)
    flag.check(TypeAdapter(Commitment), entry, "commitment")
    if count:
        last = start.date() + dt.timedelta(days=PACKAGE_DAYS[mode] * (int(count) - 1))
        if last >= horizon.end:
            fit = max(1, -(-(horizon.end - start.date()).days // PACKAGE_DAYS[mode]))
            raise flag.error(
                f"{count} {mode} packages from {start.date()} start the last on {last}, at or "
                f"past the horizon end {horizon.end}: at most {fit} fit"
            )
    patch: Patch = {"commitments": [*map(_dump, scenario.spec.commitments), entry]}
    if found["price"]:
        new = _decimal(flag, found["price"], "a price after @, such as @9000")
        patch |= _by_offer([(offer_id, mode, {"price": _price_text(flag, new, "@PRICE")})])
    return patch


def _workload(scenario: Scenario, flag: _Flag, name: str) -> Workload:
    """The workload the scenario file names `name`: a service with request classes is
    named as a whole, never by its classes' names (`<name>.<class>`), which no file writes."""
    written = scenario.written_workloads()
    for w in written:
        if w.name == name:
            return w
    parent = next(
        (
            w.class_of
            for w in scenario.spec.workloads
            if isinstance(w, ServeWorkload) and w.name == name
        ),
        None,
    )
    if parent is not None:
        raise flag.error(
            f"{name} is a request class of {parent}; name the service, {parent} (its "
            "classes are its field `classes`)"
        )
    names = [w.name for w in written]
    raise flag.error(f"unknown workload {name!r}{did_you_mean(name, names)}")


@dataclass(frozen=True)
class _Shift:
    """A --shift worked out: the workload's window fields, their old, asked and new ends."""

    name: str
    fields: tuple[str, str]
    olds: tuple[dt.datetime, dt.datetime]
    asked: tuple[dt.datetime, dt.datetime]
    news: tuple[dt.datetime, dt.datetime]


def _shift(scenario: Scenario, text: str) -> _Shift:
    flag = _Flag("shift", text)
    name, value = flag.split("WORKLOAD=+AMOUNT or WORKLOAD=-AMOUNT, e.g. chat-70b=+14d")
    workload = _workload(scenario, flag, name)
    sign, amount = (value[0], value[1:]) if value[0] in "+-" else ("+", value)
    try:
        minutes = parse_minutes(amount)
    except ValueError:
        minutes = -1
    if minutes == 0:
        raise flag.error(f"a shift of {value} changes nothing; give one such as +14d or -6h")
    if minutes < 0 or minutes % 60:
        raise flag.error(f"expected a shift in whole hours such as +14d or -6h, got {value!r}")
    delta = dt.timedelta(minutes=-minutes if sign == "-" else minutes)
    first, last = moment(scenario.spec.horizon.start), moment(scenario.spec.horizon.end)
    fields = (
        ("earliest_start", "deadline") if isinstance(workload, TrainWorkload) else ("start", "end")
    )
    old_start, old_end = (getattr(workload, f) for f in fields)
    old_start = moment(old_start) if old_start else first
    old_end = moment(old_end) if old_end else last
    asked = (old_start + delta, old_end if old_end == last else old_end + delta)
    new_start, new_end = max(asked[0], first), min(asked[1], last)
    if new_end <= new_start:
        horizon = scenario.spec.horizon
        edge = f"ends {horizon.end}" if sign == "+" else f"starts {horizon.start}"
        raise flag.error(
            f"moving {name} by {value} leaves it no time: {_instant_text(new_start)} .. "
            f"{_instant_text(new_end)} (the horizon {edge})"
        )
    return _Shift(name, fields, (old_start, old_end), asked, (new_start, new_end))


def shift(scenario: Scenario, text: str) -> Patch:
    """`WORKLOAD=±AMOUNT`: `{workloads: [{name, <the window fields that moved>}]}`."""
    s = _shift(scenario, text)
    moved = {
        f: _instant_text(n) for f, o, n in zip(s.fields, s.olds, s.news, strict=True) if n != o
    }
    return {"workloads": [{"name": s.name, **moved}]}


def clipped(scenario: Scenario, text: str) -> str:
    """What a --shift held at the horizon instead of moving as asked ("" where nothing):
    its window is then shorter than before, not only moved, or not moved at all."""
    s = _shift(scenario, text)
    held = [
        f"{f} held at the horizon's {edge}, {_instant_text(n)}, not {_instant_text(a)}"
        for f, edge, a, n in zip(s.fields, ("start", "end"), s.asked, s.news, strict=True)
        if a != n
    ]
    if held and s.news == s.olds:
        return f"nothing moves: {'; '.join(held)}"
    last = moment(scenario.spec.horizon.end)
    if s.olds[1] == last and s.news != s.olds:  # the end stays by rule: not only moved
        change = (s.news[1] - s.news[0]) - (s.olds[1] - s.olds[0])
        length = "shorter" if change < dt.timedelta(0) else "longer"
        held.append(
            f"{s.fields[1]} stays at the horizon's end, {_instant_text(last)}, where it was: "
            f"the window is {_span(abs(change))} {length}"
        )
    return "; ".join(held)


def _span(length: dt.timedelta) -> str:
    """A whole number of hours as people say it: `2 days`, `6 hours`, `1 day 12 hours`."""
    days, hours = length.days, length.seconds // 3600
    parts = [
        f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in ((days, "day"), (hours, "hour")) if n
    ]
    return " ".join(parts) or "0 hours"


def drop(scenario: Scenario, text: str) -> Patch:
    """`WORKLOAD`: `{workloads: [{name, delete: true}, {name: other, after: [...]}, ...]}`."""
    flag = _Flag("drop", text)
    name = _workload(scenario, flag, text.strip()).name
    if len(scenario.written_workloads()) == 1:
        raise flag.error(f"{name} is the scenario's only workload; a scenario needs one")
    items: list[Patch] = [{"name": name, "delete": True}]
    for w in scenario.spec.workloads:
        if isinstance(w, TrainWorkload) and name in w.after:
            items.append({"name": w.name, "after": [a for a in w.after if a != name]})
    return {"workloads": items}


def _scaled(value: Any, factor: float) -> Any:
    if isinstance(value, dict):
        return {k: _scaled(v, factor) for k, v in value.items()}
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return value * factor if number else value


def scale_demand(scenario: Scenario, text: str) -> Patch:
    """`K` or `WORKLOAD=K`: `{workloads: [{name, concurrency|requests_per_s: curve × K}]}`;
    the curve keeps its written shape (see the module's note on replaced maps). A service
    with request classes: its curve, where a class takes a share of it, and each class's
    own curve, in `classes: [...]` (the whole list, which a patch replaces)."""
    flag = _Flag("scale-demand", text)
    if "=" in text:
        name, value = flag.split("WORKLOAD=FACTOR or FACTOR, e.g. chat-70b=1.5")
        workload = _workload(scenario, flag, name)
        if not isinstance(workload, ServeWorkload):
            raise flag.error(f"{name} is a {workload.kind} workload; only a serve has a demand")
        targets = [workload]
    else:
        value = text.strip()
        targets = [w for w in scenario.written_workloads() if isinstance(w, ServeWorkload)]
        if not targets:
            raise flag.error("the scenario has no serve workload to scale")
    try:
        factor = float(value.lstrip("×x"))
    except ValueError:
        factor = math.nan
    if not 0 < factor < math.inf:
        raise flag.error(f"expected a factor above 0 such as 1.5, got {value!r}")
    items = []
    for w in targets:
        item: Patch = {"name": w.name}
        # with classes that each bring a curve, the service's own (0) serves no one
        if not w.classes or any(c.share is not None for c in w.classes):
            field, curve = _demand(flag, w, w.name, factor)
            olds = old_values(scenario, ("workloads", w.name, field))
            new = _scaled(_as_written(olds, curve), factor)
            item[field] = replacing(olds, new)
        if any(c.share is None for c in w.classes):
            item["classes"] = _scaled_classes(scenario, flag, w, factor)
        items.append(item)
    return {"workloads": items}


def _demand(
    flag: _Flag, owner: ServeWorkload | RequestClass, name: str, factor: float
) -> tuple[str, WeekCurve]:
    """The demand field a service or class gives, and its curve, checked finite × factor."""
    field = "concurrency" if owner.concurrency is not None else "requests_per_s"
    curve = owner.concurrency or owner.requests_per_s
    if curve is None or not math.isfinite(curve.peak * factor):
        raise flag.error(f"{name}: {field} × {factor} is not a finite number")
    return field, curve


def _as_written(olds: tuple[Any, Any], curve: WeekCurve) -> Any:
    """A curve as the scenario file writes it, where that still reads as `curve` (a patch
    applied before the flag may have changed it), else as validated and dumped."""
    written, dumped = olds
    return written if _reads_as(written, curve, _CURVE.validate_python) else dumped


def _reads_as(written: Any, value: Any, read: Callable[[Any], Any]) -> bool:
    """Whether a value as the file writes it still reads as `value` (an earlier patch may
    have changed the scenario's)."""
    try:
        return written is not None and read(written) == value
    except ValidationError:
        return False


def _scaled_classes(
    scenario: Scenario, flag: _Flag, w: ServeWorkload, factor: float
) -> list[Patch]:
    """The service's request classes, each with a curve of its own × factor (those with a
    share follow the service's curve): each class as the file writes it where that still
    reads as the scenario's class, else as validated and dumped."""
    written = old_values(scenario, ("workloads", w.name, "classes"))[0]
    listed = written if isinstance(written, list) else []
    by_name = {c.get("name"): c for c in listed if isinstance(c, dict)}
    out = []
    for c in w.classes:
        raw = by_name.get(c.name)
        data: Patch = plain(raw) if _reads_as(raw, c, RequestClass.model_validate) else _dump(c)
        if c.share is None:
            field, _ = _demand(flag, c, f"{w.name}.{c.name}", factor)
            data[field] = _scaled(data[field], factor)
        out.append(data)
    return out


def _path(scenario: Scenario, flag: _Flag, text: str) -> tuple[str, ...]:
    """PATH's parts, a workload name or offer id kept whole (they may hold dots)."""
    head, _, rest = text.partition(".")
    if head not in ScenarioFile.model_fields:
        raise flag.error(f"unknown field {head!r}{did_you_mean(head, ScenarioFile.model_fields)}")
    if head not in ("workloads", "offers") or not rest:
        return (head, *rest.split(".")) if rest else (head,)
    models: dict[str, Any] = (
        {w.name: type(w) for w in scenario.written_workloads()}
        if head == "workloads"
        else {o: Offer for o in scenario.offers}
    )
    names = sorted((n for n in models if rest == n or rest.startswith(n + ".")), key=len)
    if not names:
        guess = rest.split(".")[0]
        what = "workload" if head == "workloads" else "offer"
        raise flag.error(f"unknown {what} {guess!r}{did_you_mean(guess, models)}")
    name, fields = names[-1], rest[len(names[-1]) + 1 :].split(".")
    known = models[name].model_fields
    service = scenario.services.get(name) if head == "workloads" else None
    if service is not None and fields[0] in {c.name for c in service.classes}:
        raise flag.error(
            f"{fields[0]} is a request class of {name}; its fields are set with the whole "
            f"list, workloads.{name}.classes=[...], or in a patch file"
        )
    if fields[0] and fields[0] not in known:
        raise flag.error(f"{name} has no field {fields[0]!r}{did_you_mean(fields[0], known)}")
    return (head, name, *fields) if fields[0] else (head, name)


def set_value(scenario: Scenario, text: str) -> Patch:
    """`PATH=VALUE`: VALUE (one YAML value, read safely) at PATH."""
    flag = _Flag("set", text)
    path_text, value_text = flag.split("PATH=VALUE, e.g. workloads.chat-70b.min_replicas=2")
    try:
        value = plain(parse_yaml(value_text, "--set").data)
    except LoadError as exc:
        raise flag.error(f"cannot read the value: {exc.issues[0].message}") from None
    path = _path(scenario, flag, path_text)
    if path[0] in ("workloads", "offers") and len(path) < 3:
        raise flag.error(f"expected {path[0]}.NAME.FIELD=VALUE; a whole item: --drop, --commit")
    return dict(nest(path, replacing(old_values(scenario, path), value)))
