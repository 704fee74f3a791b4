"""`plan catalog import FORMAT FILE...`: another tool's price list as a gpuplan catalog."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
import yaml

from planner.catalog_import import FORMATS, Row, import_catalog, published, read_rows
from planner.cli.common import err, input_errors
from planner.domain.errors import Issue, LoadError
from planner.domain.load import load_catalogs


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
        rows = read_rows(fmt, files)
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
            message = "no row could be made an offer (see the rows listed above)"
            _list_skipped(result.skipped)
            raise LoadError([Issue(str(out), None, None, (), message)])
        out.write_text(yaml.safe_dump(result.catalog, sort_keys=False, allow_unicode=True))
        load_catalogs([out])  # what was written must load as any catalog does
    offers = result.catalog["offers"]
    err.print(
        f"wrote {out}: {len(offers)} offers from {len(rows)} rows, prices of {when}",
        markup=False,
    )
    _list_skipped(result.skipped)


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
