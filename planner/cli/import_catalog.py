"""`plan catalog import FORMAT FILE...`: another tool's price list as a gpuplan catalog."""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
from pathlib import Path
from typing import Annotated

import typer
import yaml

from planner.catalog_import import (
    FORMATS,
    Imported,
    Row,
    import_catalog,
    published,
    read_rows,
)
from planner.cli.common import err, input_errors, output_errors, writable
from planner.domain.errors import Issue, LoadError
from planner.domain.load import load_catalogs
from planner.domain.money import MINOR_DIGITS
from planner.domain.values import SLUG_PATTERN
from planner.explain.conflict import plural


def import_catalog_command(
    fmt: Annotated[str, typer.Argument(metavar="FORMAT", help="gpuhunt, skypilot or csv.")],
    files: Annotated[
        list[Path], typer.Argument(help="The files as published: CSVs, or gpuhunt's zip.")
    ],
    out: Annotated[Path, typer.Option(help="Where to write the catalog YAML.")],
    provider: Annotated[
        str | None, typer.Option(help="Only this provider's rows (gpuhunt: the CSV's name).")
    ] = None,
    region: Annotated[str | None, typer.Option(help="Only this region's rows.")] = None,
    currency: Annotated[str, typer.Option(help="The prices' currency.")] = "USD",
    name: Annotated[str | None, typer.Option(help="The catalog's name (default: --out's).")] = None,
    date: Annotated[
        str | None,
        typer.Option(
            help="The prices' date, YYYY-MM-DD; needed unless the files give it (a gpuhunt "
            "zip's version)."
        ),
    ] = None,
    network_gbps: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="The network between nodes, Gb/s per node, where the provider states one "
            "(e.g. 3200 for 8 × 400 Gb/s): set on every offer imported, so a job may span "
            "nodes. Without it no offer has one (a job stays within one node), and plans say "
            "what stating it would save.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Import another tool's price list, offline, as a gpuplan catalog.

    An offer per instance type and zone (or region), in units of its GPUs, hourly and spot.
    Every row that cannot be mapped is listed with the reason."""
    with input_errors(None):
        if fmt not in FORMATS:
            message = f"expected one of {', '.join(FORMATS)}, got {fmt!r}"
            raise LoadError([Issue("FORMAT", None, None, (), message)])
        _check_flags(files, out, currency, name)
        rowless: list[Issue] = []
        rows = read_rows(fmt, files, rowless)
        when = _date(date) if date else published(files)
        if when is None:
            message = "the files give no date: state the prices' date as --date YYYY-MM-DD"
            raise LoadError([Issue("--date", None, None, (), message)])
        source = f"imported with plan catalog import from {fmt} files: " + ", ".join(
            f"{p.parent.name}/{p.name}" if p.stem == "vms" else p.name for p in files
        )
        result = import_catalog(
            rows, name or out.stem, currency, source, provider=provider, region=region
        )
        result.catalog["date"] = when.isoformat()
        if network_gbps is not None:
            for offer in result.catalog["offers"]:
                offer["network"] = {"gbps": network_gbps}
        if not result.catalog["offers"]:
            _list_skipped(result.skipped)
            _list_left_out(result.left_out, rows, provider, region)
            # said of the files read, or of the flag that left every row out
            where = ", ".join(str(p) for p in files)
            message = "no row could be made an offer" + (
                " (see the rows listed above)" if result.skipped else ""
            )
            if not rows:
                message = "the files have no rows"
            elif result.left_out == len(rows):
                where = " and ".join(
                    f for f, v in (("--provider", provider), ("--region", region)) if v
                )
                message = "no row is of " + _asked(provider, region)
            raise LoadError([Issue(where, None, None, (), message)])
        _write_checked(out, result)
    offers = result.catalog["offers"]
    err.print(
        f"wrote {out}: {len(offers)} offers from {len(rows)} rows, prices of {when}",
        markup=False,
    )
    for file in rowless:  # read, and nothing in them
        err.print(f"{file}; nothing imported from it", markup=False)
    _list_skipped(result.skipped)
    _list_left_out(result.left_out, rows, provider, region)
    if result.assumed:
        count = len(result.assumed)
        err.print(f"{plural(count, 'offer')}: card taken by GPU name alone:", markup=False)
        for row, card in result.assumed:
            err.print(
                f"  {row.where}: {row.instance} ({row.gpu_name}, no memory given): {card}, "
                "as its notes say",
                markup=False,
            )


def _write_checked(out: Path, result: Imported) -> None:
    """The catalog written to --out only once it loads as any catalog does: it is written
    beside --out under another name and checked there, and replaces --out only then; a
    catalog that does not load leaves --out as it was, and each problem is named at the row
    of the files it came from."""
    text = yaml.safe_dump(result.catalog, sort_keys=False, allow_unicode=True)
    with output_errors():
        handle, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".yaml", dir=out.parent)
        checked = Path(name)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            try:
                load_catalogs([checked])
            except LoadError as exc:
                raise LoadError([_at_row(i, result) for i in exc.issues]) from None
            umask = os.umask(0)
            os.umask(umask)
            checked.chmod(0o666 & ~umask)  # as a file written in place would be
            checked.replace(out)
        finally:
            checked.unlink(missing_ok=True)


def _at_row(issue: Issue, result: Imported) -> Issue:
    """A problem of the catalog built, at the input row its offer came from (`offers[0]
    .unit_cards`: the row of 20000 GPUs); one not of an offer, at the catalog."""
    path = issue.path
    offers = result.catalog["offers"]
    if len(path) >= 2 and path[0] == "offers" and isinstance(path[1], int):
        index = path[1]
        row = result.origin.get(offers[index]["id"])
        if row is not None:
            file = row.where.split(" with its VM's line ")[0].rsplit(":", 1)[0]
            what = Issue("", None, None, path[2:], "").field or "offer"
            message = (
                f"{row.instance} ({row.gpu_count} × {row.gpu_name}), as offer "
                f"{offers[index]['id']}: {what}: {issue.message}"
            )
            return Issue(file, row.line, None, (), message)
    return Issue("the catalog built", None, None, path, issue.message)


def _asked(provider: str | None, region: str | None) -> str:
    return " and ".join(
        f"{what} {value!r}" for what, value in (("provider", provider), ("region", region)) if value
    )


def _list_left_out(
    left_out: int, rows: list[Row], provider: str | None, region: str | None
) -> None:
    """How many rows --provider and --region left out, and what the files hold."""
    if not left_out:
        return
    providers = ", ".join(sorted({r.provider for r in rows}))
    regions = ", ".join(sorted({r.region for r in rows if r.region}))
    err.print(
        f"{left_out} rows left out as not of {_asked(provider, region)} (the files hold "
        f"providers {providers}; regions {regions})",
        markup=False,
    )


def _check_flags(files: list[Path], out: Path, currency: str, name: str | None) -> None:
    """The flags that shape the written file, before any row is read: --out's folder exists
    and it is not one of the files read; --currency is known; the catalog's name (--name, or
    --out's stem) is a lowercase slug."""
    writable(out=out)
    issues = []
    if any(out.resolve() == f.resolve() for f in files):
        issues.append(Issue("--out", None, None, (), f"{out} is a file being imported"))
    if currency not in MINOR_DIGITS:
        known = ", ".join(MINOR_DIGITS)
        message = f"unknown currency {currency!r}; expected one of {known}"
        issues.append(Issue("--currency", None, None, (), message))
    slug = re.compile(SLUG_PATTERN)
    if name is not None and not slug.match(name):
        message = f"expected lowercase letters, digits, '.', '_' or '-', got {name!r}"
        issues.append(Issue("--name", None, None, (), message))
    elif name is None and not slug.match(out.stem):
        message = f"the catalog's name would be --out's {out.stem!r}, not a lowercase slug"
        issues.append(Issue("--name", None, None, (), message + ": give --name"))
    if issues:
        raise LoadError(issues)


def _list_skipped(skipped: list[tuple[Row, str]]) -> None:
    if not skipped:
        return
    err.print(f"{len(skipped)} rows not imported:", markup=False)
    for row, why in skipped:
        err.print(
            f"  {row.where}: {row.instance or 'no instance'} ({row.gpu_count} × {row.gpu_name}): "
            f"{why}",
            markup=False,
        )


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        message = f"expected the prices' date as YYYY-MM-DD, got {text!r}"
        raise LoadError([Issue("--date", None, None, (), message)]) from None
