"""Price lists other tools publish, read as a gpuplan catalog (`plan catalog import`).

Formats, read offline from files as their projects publish them:

- `gpuhunt`: dstack's gpuhunt catalog, a zip of one CSV per provider (or such CSVs), with
  columns `instance_name, location, price, gpu_count, gpu_name, gpu_memory, spot` (others
  ignored); the provider is the file's name;
- `skypilot`: SkyPilot's catalog CSVs (`vms.csv`), with columns `InstanceType,
  AcceleratorName, AcceleratorCount, Price, SpotPrice, Region` (others ignored);
- `csv`: this project's plain form, `provider, instance, region, gpu_name, gpu_count,
  gpu_memory_gb, price, spot_price`.

Each priced row with GPUs becomes an offer: units of the instance's GPU count (one node),
hourly at its price, spot where a spot price is given (preemption rate and restart time
assumed, and marked so). A GPU name is mapped to a shipped card, or to one of the cards in
`catalogs/import/cards.yaml` (written into the catalog's `cards`, each figure with its
source and confidence). A row that cannot be mapped is returned with the reason, never
dropped silently.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planner.domain.errors import Issue, LoadError
from planner.domain.load import load_catalogs
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
    ("H200", None): "h200-141g",
    ("H20", None): "h20-96g",
    ("L40S", None): "l40s",
    ("L20", None): "l20",
    ("RTX4090", None): "rtx4090",
    ("RTX3090", None): "rtx3090",
    ("L4", None): "l4",
    ("A10G", None): "a10g",
    ("T4", None): "t4",
    ("V100", 16): "v100-16g",
    ("V100", 32): "v100-32g",
    ("V100", None): "v100-16g",
    ("A6000", None): "rtx-a6000",
    ("RTXA6000", None): "rtx-a6000",
}
# Spot rows: a price list gives no preemption rate or restart time; these are assumed.
SPOT_PREEMPTIONS_PER_HOUR = 0.05
SPOT_RESTART_MINUTES = 10


@dataclass(frozen=True)
class Row:
    """One priced instance type in one region, as read."""

    provider: str
    instance: str
    region: str
    gpu_name: str
    gpu_count: int
    gpu_memory_gb: float | None
    price: float | None  # on demand, per instance-hour
    spot_price: float | None
    where: str  # file:line, for messages


@dataclass(frozen=True)
class Imported:
    catalog: dict[str, Any]  # the catalog YAML's content
    skipped: list[tuple[Row, str]]  # rows not turned into offers, and why


def read_rows(fmt: str, paths: Iterable[Path]) -> list[Row]:
    """Every row of the files, in file order (a zip: its CSV members in name order)."""
    if fmt not in FORMATS:
        raise LoadError([Issue("FORMAT", None, None, (), f"expected one of {FORMATS}")])
    rows: list[Row] = []
    for path in paths:
        for name, text in _texts(path):
            rows += _parse(fmt, name, text)
    return rows


def _texts(path: Path) -> list[tuple[str, str]]:
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                members = sorted(n for n in z.namelist() if n.endswith(".csv"))
                return [(f"{path}:{n}", z.read(n).decode("utf-8")) for n in members]
        return [(str(path), path.read_text(encoding="utf-8"))]
    except (OSError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        raise LoadError([Issue(str(path), None, None, (), f"cannot read it: {exc}")]) from None


def _parse(fmt: str, name: str, text: str) -> list[Row]:
    reader = csv.DictReader(io.StringIO(text))
    needed = {
        "gpuhunt": ("instance_name", "location", "price", "gpu_count", "gpu_name", "spot"),
        "skypilot": ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"),
        "csv": ("provider", "instance", "region", "gpu_name", "gpu_count", "price"),
    }[fmt]
    missing = [c for c in needed if c not in (reader.fieldnames or [])]
    if missing:
        message = f"not a {fmt} file: no column {', '.join(missing)}"
        raise LoadError([Issue(name, 1, None, (), message)])
    provider = Path(name.rsplit(":", 1)[-1]).stem
    rows = []
    for line, r in enumerate(reader, start=2):
        where = f"{name}:{line}"
        try:
            rows.append(_row(fmt, provider, r, where))
        except ValueError as exc:
            raise LoadError([Issue(name, line, None, (), str(exc))]) from None
    return rows


def _number(text: str | None) -> float | None:
    return None if text is None or text.strip() == "" else float(text)


def _row(fmt: str, provider: str, r: dict[str, str], where: str) -> Row:
    if fmt == "gpuhunt":  # on-demand and spot are separate rows of one instance
        spot = r["spot"].strip().lower() in ("true", "1", "yes")
        price = float(r["price"])
        return Row(
            provider,
            r["instance_name"],
            r["location"],
            r["gpu_name"],
            int(float(r["gpu_count"] or 0)),
            _number(r.get("gpu_memory")),
            None if spot else price,
            price if spot else None,
            where,
        )
    if fmt == "skypilot":
        return Row(
            "skypilot",
            r["InstanceType"],
            r["Region"],
            r["AcceleratorName"],
            int(float(r["AcceleratorCount"] or 0)),
            None,
            _number(r["Price"]),
            _number(r.get("SpotPrice")),
            where,
        )
    return Row(
        r["provider"],
        r["instance"],
        r["region"],
        r["gpu_name"],
        int(float(r["gpu_count"] or 0)),
        _number(r.get("gpu_memory_gb")),
        _number(r["price"]),
        _number(r.get("spot_price")),
        where,
    )


def card_for(name: str, memory_gb: float | None) -> str | None:
    """The card id a GPU name (and memory, where the name covers several) maps to."""
    key = re.sub(r"[\s\-_]", "", name.upper()).replace("NVIDIA", "")
    if memory_gb is not None:
        rounded = round(memory_gb)
        if (key, rounded) in GPU_CARDS:
            return GPU_CARDS[(key, rounded)]
    return GPU_CARDS.get((key, None))


def import_catalog(
    rows: list[Row],
    name: str,
    currency: str,
    source: str,
    provider: str | None = None,
    region: str | None = None,
) -> Imported:
    """A catalog of the rows (those of `provider` and `region` where given): on-demand and
    spot rows of one instance and region merge into one offer."""
    _, shipped = load_catalogs([])  # the shipped card specs alone
    extra = _import_cards()
    offers: dict[str, dict[str, Any]] = {}
    used_extra: dict[str, dict[str, Any]] = {}
    skipped: list[tuple[Row, str]] = []
    for row in rows:
        if provider is not None and row.provider != provider:
            continue
        if region is not None and row.region != region:
            continue
        if row.gpu_count <= 0:
            skipped.append((row, "no GPU"))
            continue
        if row.price is None and row.spot_price is None:
            skipped.append((row, "no price"))
            continue
        card = card_for(row.gpu_name, row.gpu_memory_gb)
        if card is None:
            skipped.append((row, f"no card spec for GPU {row.gpu_name!r}"))
            continue
        if card not in shipped:
            if card not in extra:
                skipped.append((row, f"no card spec for {card}"))
                continue
            used_extra[card] = extra[card]
        ident = _slug(f"{row.provider}-{row.instance}-{row.region}")
        offer = offers.setdefault(
            ident,
            {
                "id": ident,
                "card": card,
                "unit_cards": row.gpu_count,
                "region": row.region,
                "notes": f"{row.provider} {row.instance} ({row.where})",
            },
        )
        if row.price is not None:
            offer["hourly"] = {"price": round(row.price, 6), "assumed": ["min_hours"]}
        if row.spot_price is not None:
            offer["spot"] = {
                "price": round(row.spot_price, 6),
                "preemptions_per_hour": SPOT_PREEMPTIONS_PER_HOUR,
                "restart_minutes": SPOT_RESTART_MINUTES,
                "assumed": ["preemptions_per_hour", "restart_minutes", "min_hours"],
            }
    catalog: dict[str, Any] = {
        "name": _slug(name),
        "currency": currency,
        "source": source,
    }
    if used_extra:
        catalog["cards"] = [used_extra[c] for c in sorted(used_extra)]
    catalog["offers"] = list(offers.values())
    return Imported(catalog, skipped)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _import_cards() -> dict[str, dict[str, Any]]:
    path = data_dir("catalogs") / "import" / "cards.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {c["id"]: c for c in data["cards"]}
