"""Price lists other tools publish, read as a gpuplan catalog (`plan catalog import`).

Formats, read offline from files as their projects publish them (columns by name, in any
order; others ignored):

- `gpuhunt`: dstack's gpuhunt catalog, a zip of one CSV per provider (or such CSVs), with
  columns `instance_name, location, price, gpu_count, gpu_name, gpu_memory, spot`; the
  provider is the file's name, and the zip's `version` member (YYYYMMDD) dates it;
- `skypilot`: SkyPilot's catalog CSVs (`aws/vms.csv`), with columns `InstanceType,
  AcceleratorName, AcceleratorCount, Price, SpotPrice, Region` and, where given,
  `AvailabilityZone` and `GpuInfo`; the provider is the folder's name;
- `csv`: this project's plain form, `provider, instance, region, gpu_name, gpu_count,
  gpu_memory_gb, price, spot_price`.

Each priced row with whole GPUs becomes an offer: units of the instance's GPU count (one
node), hourly at its price, spot where a spot price is given (preemption rate and restart
time assumed, and marked so). A GPU name is mapped to a shipped card, or to one of the
cards in `catalogs/import/cards.yaml` (written into the catalog's `cards`, each figure with
its source and confidence). A row that cannot be mapped is returned with the reason, never
dropped silently.
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import difflib
import io
import itertools
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from planner.domain.errors import Issue, LoadError
from planner.domain.limits import MAX_PRICE
from planner.domain.load import load_catalogs
from planner.domain.money import MAX_PRICE_DECIMALS
from planner.paths import data_dir

FORMATS = ("gpuhunt", "skypilot", "csv")
# GPU names as the formats spell them (upper case, spaces and dashes dropped), with the
# memory in GB where one name covers several cards, to card ids.
GPU_CARDS: dict[tuple[str, int | None], str] = {
    ("A100", 40): "a100-40g",
    ("A100", 80): "a100-80g",
    ("A10080GB", None): "a100-80g",
    ("A100", None): "a100-40g",
    ("A800", 80): "a800-80g",
    ("H100", 80): "h100-80g",
    ("H100", None): "h100-80g",
    ("H100SXM", None): "h100-80g",
    ("H100MEGA", None): "h100-80g",
    ("H200", None): "h200-141g",
    ("H20", None): "h20-96g",
    ("L40S", None): "l40s",
    ("L20", None): "l20",
    ("RTX4090", None): "rtx4090",
    ("RTX3090", None): "rtx3090",
    ("L4", None): "l4",
    ("A10G", None): "a10g",
    ("T4", None): "t4",
    ("T4G", None): "t4",  # AWS G5g: the same T4 beside an Arm host
    ("V100", 16): "v100-16g",
    ("V100", 32): "v100-32g",
    ("V10032GB", None): "v100-32g",
    ("V100", None): "v100-16g",
    ("A6000", None): "rtx-a6000",
    ("RTXA6000", None): "rtx-a6000",
}
# SkyPilot's GCP file prices GPUs apart from the VM they run in (a row without an
# InstanceType), as GCP bills them. These GPUs come in VMs made for them, by count, whose
# own rows price their vCPUs and memory: an offer is the two rows' sum, in one zone. Other
# GPUs (T4, V100, P100) attach to an N1 VM of the user's choice: they are offers at the
# GPUs' price alone, the price marked assumed and the notes saying the VM is not in it.
GCP_HOSTS: dict[str, dict[int, str]] = {
    "A100": {n: f"a2-highgpu-{n}g" for n in (1, 2, 4, 8)} | {16: "a2-megagpu-16g"},
    "A100-80GB": {n: f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)},
    "H100": {n: f"a3-highgpu-{n}g" for n in (1, 2, 4, 8)},
    "H100-MEGA": {8: "a3-megagpu-8g"},
    "L4": {1: "g2-standard-4", 2: "g2-standard-24", 4: "g2-standard-48", 8: "g2-standard-96"},
}
# Spot rows: a price list gives no preemption rate or restart time; these are assumed.
SPOT_PREEMPTIONS_PER_HOUR = 0.05
SPOT_RESTART_MINUTES = 10
PRICE_STEP = Decimal(1).scaleb(-MAX_PRICE_DECIMALS)


@dataclass(frozen=True)
class Row:
    """One priced instance type in one region (or zone), as read."""

    provider: str
    instance: str
    region: str
    gpu_name: str
    gpu_count: Decimal  # as given: SkyPilot lists fractions of a card (0.125) for some types
    gpu_memory_gb: float | None  # each GPU's
    price: Decimal | None  # on demand, per instance-hour
    spot_price: Decimal | None
    where: str  # file:line, for messages
    zone: str = ""
    problem: str = ""  # why it cannot be an offer, where the file alone tells
    vm_excluded: bool = False  # priced without the VM the GPUs attach to
    vm_where: str = ""  # file:line of the VM row priced into it (SkyPilot's GCP file)
    malformed: str = ""  # its cells do not match the header's columns
    line: int = 0  # its line in its file


@dataclass(frozen=True)
class Imported:
    catalog: dict[str, Any]  # the catalog YAML's content
    skipped: list[tuple[Row, str]]  # rows not turned into offers, and why
    # rows whose card was taken by GPU name alone where the name comes in several memories
    assumed: list[tuple[Row, str]] = field(default_factory=list)
    left_out: int = 0  # rows of other providers or regions than those asked
    origin: dict[str, Row] = field(default_factory=dict)  # offer id: its first row


def read_rows(fmt: str, paths: Iterable[Path], rowless: list[Issue] | None = None) -> list[Row]:
    """Every row of the files, in file order (a zip: its CSV members in name order). An
    empty file is bad input, named; so are files of a header and no rows (and zips of no
    CSV) where no file has a row. Where another file has rows, those files are appended to
    `rowless` (when given), for the caller to say."""
    if fmt not in FORMATS:
        raise LoadError([Issue("FORMAT", None, None, (), f"expected one of {FORMATS}")])
    rows: list[Row] = []
    issues: list[Issue] = []  # every file's, at once
    without: list[Issue] = []
    for path in paths:
        try:
            texts = _texts(path)
        except LoadError as exc:
            issues += exc.issues
            continue
        if not texts:
            without.append(Issue(str(path), None, None, (), "a zip with no CSV in it"))
        for name, text in texts:
            if not text.strip():
                issues.append(Issue(name, None, None, (), "empty"))
                continue
            try:
                parsed = _parse(fmt, name, text)
            except LoadError as exc:
                issues += exc.issues
                continue
            if not parsed:
                without.append(Issue(name, None, None, (), "a header and no rows"))
            rows += parsed
    if issues or (without and not rows):
        raise LoadError(issues or without)
    if rowless is not None:
        rowless += without
    return rows


def published(paths: Iterable[Path]) -> dt.date | None:
    """The prices' date as the files give it: a gpuhunt zip's `version` member names the
    day it was collected (YYYYMMDD, perhaps followed by `-N`); the oldest of several. None
    unless every file gives one (CSVs carry no date)."""
    dates = []
    for path in paths:
        try:
            if not zipfile.is_zipfile(path):
                return None
            with zipfile.ZipFile(path) as z:
                if "version" not in z.namelist():
                    return None
                text = z.read("version").decode("utf-8", "replace").strip()
        except (OSError, zipfile.BadZipFile) as exc:
            raise LoadError([Issue(str(path), None, None, (), f"cannot read it: {exc}")]) from None
        try:
            dates.append(dt.datetime.strptime(text[:8], "%Y%m%d").date())
        except ValueError:
            message = f"expected the catalog's date as YYYYMMDD, got {text[:40]!r}"
            raise LoadError([Issue(f"{path}:version", None, None, (), message)]) from None
    return min(dates, default=None)


def _texts(path: Path) -> list[tuple[str, str]]:
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                members = sorted(n for n in z.namelist() if n.endswith(".csv"))
                return [(f"{path}:{n}", z.read(n).decode("utf-8-sig")) for n in members]
        return [(str(path), path.read_text(encoding="utf-8-sig"))]
    except (OSError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        raise LoadError([Issue(str(path), None, None, (), f"cannot read it: {exc}")]) from None


def _parse(fmt: str, name: str, text: str) -> list[Row]:
    reader = csv.DictReader(io.StringIO(text))
    reader.fieldnames = [f.strip() for f in reader.fieldnames or []]
    needed = {
        "gpuhunt": ("instance_name", "location", "price", "gpu_count", "gpu_name", "spot"),
        "skypilot": ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"),
        "csv": ("provider", "instance", "region", "gpu_name", "gpu_count", "price"),
    }[fmt]
    missing = [c for c in needed if c not in reader.fieldnames]
    if missing:
        message = f"not a {fmt} file: no column {', '.join(missing)}"
        raise LoadError([Issue(name, 1, None, (), message)])
    try:  # each record's line: its last physical line (blank lines and quoted newlines count)
        records = [(reader.line_num, r) for r in reader]
    except csv.Error as exc:
        raise LoadError([Issue(name, reader.line_num, None, (), f"not CSV: {exc}")]) from None
    file = Path(name.rsplit(":", 1)[-1])
    provider = file.parent.name if fmt == "skypilot" and file.stem == "vms" else file.stem
    hosts = {
        (_cell(r, "InstanceType"), _cell(r, "AvailabilityZone") or _cell(r, "Region")): (line, r)
        for line, r in records
        if fmt == "skypilot" and not _cell(r, "AcceleratorName")
    }
    rows, issues = [], []
    for line, r in records:
        try:
            row = replace(_row(fmt, provider or "skypilot", r, f"{name}:{line}", hosts), line=line)
        except ValueError as exc:  # every bad cell of the file at once
            issues.append(Issue(name, line, None, (), str(exc)))
            continue
        if None in r or None in r.values():  # csv's marks of too many or too few cells
            extra: list[str] = r.get(None) or []  # type: ignore[assignment]
            cells = sum(v is not None for k, v in r.items() if k is not None) + len(extra)
            message = f"{cells} cells where the header has {len(reader.fieldnames)}"
            row = replace(row, malformed=message)
        rows.append(row)
    if issues:
        raise LoadError(issues)
    return rows


def _cell(r: dict[str, str], column: str) -> str:
    """A cell's text, stripped; empty where the column or the cell is missing."""
    return (r.get(column) or "").strip()


def _number(r: dict[str, str], column: str) -> Decimal | None:
    text = _cell(r, column)
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or value < 0:
        raise ValueError(f"{column}: expected a number of at least 0, got {text!r}")
    return value


def _price(r: dict[str, str], column: str) -> Decimal | None:
    """A price, rounded half-even to 6 decimals; 0 is none (SkyPilot's GCP file writes 0.0
    where a zone lists none)."""
    value = _number(r, column)
    if value is None:
        return None
    if value > MAX_PRICE:
        raise ValueError(f"{column}: {_cell(r, column)!r} is over the most a price may be")
    return value.quantize(PRICE_STEP, rounding=ROUND_HALF_EVEN) or None


def _count(r: dict[str, str], column: str) -> Decimal:
    value = _number(r, column) or Decimal(0)
    return Decimal(int(value)) if value == int(value) else value.normalize()


def _memory(r: dict[str, str], column: str) -> float | None:
    value = _number(r, column)
    return None if value is None else float(value)


def _gpu_info_memory(text: str) -> float | None:
    """Each GPU's memory in GiB from SkyPilot's GpuInfo, a Python literal such as
    "{'Gpus': [{'Name': 'A100', 'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 40960}}], ...}",
    read as a literal, never run. It is optional: None where absent or not of that form."""
    if not text.startswith("{"):
        return None  # empty, or a bare name as in GCP's TPU rows
    try:
        return float(ast.literal_eval(text)["Gpus"][0]["MemoryInfo"]["SizeInMiB"]) / 1024
    except (ValueError, TypeError, SyntaxError, KeyError, IndexError, MemoryError, RecursionError):
        return None


Hosts = dict[tuple[str, str], tuple[int, dict[str, str]]]  # (VM, zone): its line and row


def _row(fmt: str, provider: str, r: dict[str, str], where: str, hosts: Hosts) -> Row:
    if fmt == "gpuhunt":  # on-demand and spot are separate rows of one instance
        spot = _cell(r, "spot").lower() in ("true", "1", "yes")
        price = _price(r, "price")
        return Row(
            provider,
            _cell(r, "instance_name"),
            _cell(r, "location"),
            _cell(r, "gpu_name"),
            _count(r, "gpu_count"),
            _memory(r, "gpu_memory"),
            None if spot else price,
            price if spot else None,
            where,
        )
    if fmt == "skypilot":
        row = Row(
            provider,
            _cell(r, "InstanceType"),
            _cell(r, "Region"),
            _cell(r, "AcceleratorName"),
            _count(r, "AcceleratorCount"),
            _gpu_info_memory(_cell(r, "GpuInfo") or _cell(r, "GPUInfo")),
            _price(r, "Price"),
            _price(r, "SpotPrice"),
            where,
            _cell(r, "AvailabilityZone"),
        )
        return _with_host(row, hosts) if row.gpu_name and not row.instance else row
    return Row(
        _cell(r, "provider"),
        _cell(r, "instance"),
        _cell(r, "region"),
        _cell(r, "gpu_name"),
        _count(r, "gpu_count"),
        _memory(r, "gpu_memory_gb"),
        _price(r, "price"),
        _price(r, "spot_price"),
        where,
    )


def _with_host(row: Row, hosts: Hosts) -> Row:
    """A row of GPUs priced alone (SkyPilot's GCP file), as the VM they come in: the VM's
    own row in the same zone added, hourly and spot each where both rows give it."""
    host = GCP_HOSTS.get(row.gpu_name, {}).get(int(row.gpu_count))
    if host is None:
        gpus = f"{row.gpu_name.lower()}-x{int(row.gpu_count)}" if row.gpu_count >= 1 else ""
        return replace(row, instance=gpus, vm_excluded=True)
    place = row.zone or row.region
    if (host, place) not in hosts:
        return replace(row, instance=host, problem=f"no row prices its VM {host} in {place}")
    line, vm = hosts[host, place]
    return replace(
        row,
        instance=host,
        price=_sum(row.price, _price(vm, "Price")),
        spot_price=_sum(row.spot_price, _price(vm, "SpotPrice")),
        where=f"{row.where} with its VM's line {line}",
        vm_where=f"{row.where.rsplit(':', 1)[0]}:{line}",
    )


def _sum(a: Decimal | None, b: Decimal | None) -> Decimal | None:
    return None if a is None or b is None else a + b


def card_for(name: str, memory_gb: float | None) -> str | None:
    """The card id a GPU name (and memory, where the row gives one) maps to. The memory is
    checked against every card of the name, its variants too (an RTX 4090 of 48 GB is
    `rtx4090-48g`), in whole GB against the marketed size or the size software reports (a
    GiB figure read from MiB); None where no card of the name has it (an A100 of 48 GB, an
    H20 of 141, an L4 of 48): a card of other memory is not guessed."""
    key, memory_gb, written = _read_name(name, memory_gb)
    card = _card_of(key, memory_gb)
    # a name and a row that say two memories: neither is guessed
    return None if card and written and round(written) not in _card_memories(card) else card


def _read_name(name: str, memory_gb: float | None) -> tuple[str, float | None, float | None]:
    """A GPU name as matched: its key, the memory to match (the row's, else one the name
    writes) and the memory the name writes. A name no card goes by is read less its form
    factor and memory words (`A100-SXM4-80GB`, `H100 80GB HBM3`: the model, then the
    memory)."""
    key = _gpu_key(name)
    if _candidates(key):
        return key, memory_gb, None
    plain, written = _without_form(name)
    return plain, memory_gb if memory_gb is not None else written, written


def _card_of(key: str, memory_gb: float | None) -> str | None:
    """`card_for` on a name key."""
    candidates = _candidates(key)
    if memory_gb is None:
        default = GPU_CARDS.get((key, None))
        return default or (candidates[0] if len(candidates) == 1 else None)
    rounded = round(memory_gb)
    fits = [c for c in candidates if rounded in _card_memories(c)]
    if GPU_CARDS.get((key, rounded)) in fits:
        return GPU_CARDS[(key, rounded)]
    if GPU_CARDS.get((key, None)) in fits:
        return GPU_CARDS[(key, None)]
    return fits[0] if fits else None


_FORM = re.compile(r"^(SXM\d*|PCIE|HBM\d*E?|GDDR\d*X?)$")
_MEMORY = re.compile(r"^(\d+)GB?$")


def _without_form(name: str) -> tuple[str, float | None]:
    """A GPU name less its form factor and memory words (`A100-SXM4-80GB`: `A100`, 80 GB;
    `H100 80GB HBM3`: `H100`, 80): its key, and the memory it writes (None if none)."""
    words = [w for w in re.split(r"[\s\-_]+", name.upper()) if w]
    memory = next((float(m.group(1)) for w in words if (m := _MEMORY.match(w))), None)
    rest = [w for w in words if not _FORM.match(w) and not _MEMORY.match(w)]
    return _gpu_key(" ".join(rest)), memory


def by_name_alone(name: str, memory_gb: float | None) -> list[int]:
    """The memories (GB) a GPU name comes in where the row gives none and `card_for` took
    the name's default card: [] where the name or the memory decides."""
    key, memory_gb, _ = _read_name(name, memory_gb)  # as `card_for` reads it
    memories = _memories(key) if memory_gb is None else []
    return memories if len(memories) > 1 else []


def _gpu_key(name: str) -> str:
    """A GPU name as matched: upper case, without what is in brackets, spaces, dashes and
    underscores, and without the vendor's and the line's words before the model
    (`NVIDIA GeForce RTX 4090`: `RTX4090`; `RTX4090-48G`: `RTX409048G`)."""
    key = re.sub(r"[\s\-_]", "", re.sub(r"\(.*?\)", "", name).upper())
    return re.sub(r"^(NVIDIA|GEFORCE|TESLA|HUAWEI)+", "", key)


def nearest_cards(name: str, count: int = 3) -> list[str]:
    """The card ids whose names are most like a GPU name that maps to none."""
    index = _name_index()
    keys = difflib.get_close_matches(_gpu_key(name), list(index), n=10, cutoff=0.5)
    return list(dict.fromkeys(c for k in keys for c in index[k]))[:count]


def _memories(key: str) -> list[int]:
    """The marketed memories (GB) of the cards a name key maps to."""
    return sorted({_card_memories(c)[0] for c in _candidates(key) if _card_memories(c)})


def _candidates(key: str) -> list[str]:
    """The card ids a name key may be: those GPU_CARDS gives it, and every card whose id
    or name is it, or whose id less a memory suffix is (`rtx4090-48g`: `RTX4090`, so an
    RTX 4090 may be the 48 GB card, and `b300-288g`: `B300`)."""
    return _name_index().get(key, [])


@cache
def _name_index() -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    for (key, _), card in GPU_CARDS.items():
        index.setdefault(key, [])
        if card not in index[key]:
            index[key].append(card)
    for card, name in _card_names().items():
        short = re.sub(r"-\d+g$", "", card)
        keys = [card, short, name] + ([f"{card}b"] if short != card else [])  # 48g, 48gb
        for key in map(_gpu_key, keys):
            if card not in index.setdefault(key, []):
                index[key].append(card)
    return index


@cache
def _card_names() -> dict[str, str]:
    """Every card a row may map to, shipped or in catalogs/import/cards.yaml: its name."""
    _, shipped = load_catalogs([])
    names = {c.id: c.name for c in shipped.values()}
    for card in _import_cards().values():
        names.setdefault(card["id"], card["name"])
    return names


def _card_memories(card: str) -> tuple[int, ...]:
    """A card's memory in whole GB: its marketed size, then the size software reports."""
    return _card_specs().get(card, ())


@cache
def _card_specs() -> dict[str, tuple[int, ...]]:
    """Every card a row may map to, shipped or in catalogs/import/cards.yaml, with its
    memories in whole GB (marketed, then as reported)."""
    _, shipped = load_catalogs([])
    specs: dict[str, tuple[int, ...]] = {
        c.id: (round(c.memory_gb.value), round(c.memory_gib.value)) for c in shipped.values()
    }
    for card in _import_cards().values():
        memories = (card["memory_gb"]["value"], card["memory_gib"]["value"])
        specs.setdefault(card["id"], tuple(round(float(m)) for m in memories))
    return specs


def import_catalog(
    rows: list[Row],
    name: str,
    currency: str,
    source: str,
    provider: str | None = None,
    region: str | None = None,
) -> Imported:
    """A catalog of the rows (those of `provider` and `region` where given): an offer per
    instance type and zone (region where none is given), on-demand and spot rows of one
    merging into it; a row whose modes that offer already sells at other prices gets an
    offer of its own (`-2`), and one at the same prices is listed as a repeat."""
    _, shipped = load_catalogs([])  # the shipped card specs alone
    extra = _import_cards()
    offers: dict[str, dict[str, Any]] = {}
    first: dict[str, str] = {}  # offer id: where its first row is
    origin: dict[str, Row] = {}  # offer id: its first row
    used_extra: dict[str, dict[str, Any]] = {}
    skipped: list[tuple[Row, str]] = []
    assumed: list[tuple[Row, str]] = []
    # VM rows priced into their GPUs' offer: (file:line of the VM, line of the GPUs' row)
    priced_in: dict[str, str] = {}
    for row in rows:
        if row.vm_where:  # the first GPU row that names it
            priced_in.setdefault(row.vm_where, str(row.line))
    left_out = 0
    for row in rows:
        if (provider is not None and row.provider != provider) or (
            region is not None and row.region != region
        ):
            left_out += 1
            continue
        if row.malformed:
            skipped.append((row, row.malformed))
            continue
        if row.where in priced_in:
            skipped.append(
                (row, f"a VM alone: priced into the GPUs of line {priced_in[row.where]}")
            )
            continue
        if row.gpu_count <= 0:
            skipped.append((row, "no GPU"))
            continue
        if row.gpu_count != int(row.gpu_count):
            skipped.append((row, f"a fraction of a GPU ({row.gpu_count})"))
            continue
        if row.price is None and row.spot_price is None:
            skipped.append((row, "no price"))
            continue
        card = card_for(row.gpu_name, row.gpu_memory_gb)
        if card is None:
            known = _memories(_gpu_key(row.gpu_name))
            why = f"no card spec for GPU {row.gpu_name!r}"
            near = [] if known else nearest_cards(row.gpu_name)
            if near:
                why += f" (the cards of names nearest it: {', '.join(near)})"
            sizes = " or ".join(f"{m} GB" for m in known)
            if row.gpu_memory_gb is not None and known:
                why += f" of {row.gpu_memory_gb:g} GB (it is known as {sizes})"
                mib = row.gpu_memory_gb / 1024
                if mib == int(mib) and int(mib) in known:  # a MiB figure in a GB column?
                    why += f"; {row.gpu_memory_gb:g} MiB would be {int(mib)} GB"
            elif known:  # several cards of the name, none its default
                why += f" without a memory (it comes as {sizes})"
            skipped.append((row, why))
            continue
        alone = by_name_alone(row.gpu_name, row.gpu_memory_gb)
        if row.problem:
            skipped.append((row, row.problem))
            continue
        if card not in shipped:
            if card not in extra:
                skipped.append((row, f"no card spec for {card}"))
                continue
            used_extra[card] = extra[card]
        modes = {
            mode: float(price)  # at most 6 decimals: the float's repr is the decimal
            for mode, price in (("hourly", row.price), ("spot", row.spot_price))
            if price is not None
        }
        unit = {"card": card, "unit_cards": int(row.gpu_count)}
        base = _slug(f"{row.provider}-{row.instance}-{row.zone or row.region}")
        for n in itertools.count(1):
            ident = base if n == 1 else f"{base}-{n}"
            offer = offers.get(ident)
            if offer is None:
                place = f" in {row.zone}" if row.zone else ""
                offers[ident] = offer = {"id": ident} | unit | {"region": row.region}
                notes = f"{row.provider} {row.instance}{place} ({row.where})"
                if row.vm_excluded:
                    notes += "; the GPUs' price alone: the VM they attach to is not included"
                if alone:
                    sizes = " or ".join(f"{m} GB" for m in alone)
                    notes += (
                        f"; card assumed {card}: the file gives no GPU memory and "
                        f"{row.gpu_name} comes as {sizes}"
                    )
                    assumed.append((row, card))
                offer["notes"] = notes
                first[ident] = row.where
                origin[ident] = row
                break
            if unit.items() <= offer.items():
                if all(offer.get(m, {}).get("price") == p for m, p in modes.items()):
                    offer = None  # the same offer again
                    break
                if not modes.keys() & offer.keys():
                    break
        if offer is None:
            skipped.append((row, f"repeats {first[ident]}"))
            continue
        partial = ["price"] if row.vm_excluded else []  # the VM's share is not in it
        if "hourly" in modes:
            offer["hourly"] = {"price": modes["hourly"], "assumed": [*partial, "min_hours"]}
        if "spot" in modes:
            offer["spot"] = {
                "price": modes["spot"],
                "preemptions_per_hour": SPOT_PREEMPTIONS_PER_HOUR,
                "restart_minutes": SPOT_RESTART_MINUTES,
                "assumed": [*partial, "preemptions_per_hour", "restart_minutes", "min_hours"],
            }
    catalog: dict[str, Any] = {
        "name": _slug(name),
        "currency": currency,
        "source": source,
    }
    if used_extra:
        catalog["cards"] = [used_extra[c] for c in sorted(used_extra)]
    catalog["offers"] = list(offers.values())
    return Imported(catalog, skipped, assumed, left_out, origin)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _import_cards() -> dict[str, dict[str, Any]]:
    path = data_dir("catalogs") / "import" / "cards.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {c["id"]: c for c in data["cards"]}
