"""`plan catalog [CATALOG]`: offers with prices per card-hour and per GB-hour, and stock;
`plan catalog import`: another tool's price list as a catalog."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

import typer
from rich.table import Table
from typer.core import TyperGroup

from planner.cli.common import JsonOption, human, input_errors, write_json
from planner.cli.import_catalog import import_catalog_command
from planner.domain.catalog import SPOT_RISK
from planner.domain.load import catalog_names, load_catalog
from planner.paths import DEFAULT_CATALOG
from planner.report import catalog_summary, offer_rows


class _ShowByDefault(TyperGroup):
    """`plan catalog [CATALOG]` shows a catalog; `plan catalog import ...` imports one. A
    first argument that is not a subcommand (a catalog's name or path, an option, nothing)
    goes to `show`; `--help` alone describes the group."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = ["show", *args]
        return super().parse_args(ctx, args)


catalog_app = typer.Typer(
    cls=_ShowByDefault,
    help="Show a catalog's offers (`plan catalog [CATALOG]`), or import another tool's price "
    "list (`plan catalog import FORMAT FILE... --out catalog.yaml`).",
)


@catalog_app.command("show")
def catalog(
    name: Annotated[
        str,
        typer.Argument(help="A shipped catalog's name or a catalog file's path."),
    ] = DEFAULT_CATALOG,
    json_path: JsonOption = None,
) -> None:
    """List a catalog's offers: card, memory, unit, price per card-hour and per GB-hour, stock."""
    with input_errors(json_path):
        loaded, cards = load_catalog(name)
    rows = offer_rows(loaded.offers, cards)
    console = human(json_path)
    console.print(_table(loaded.name, loaded.currency, rows))
    info = catalog_summary(loaded)
    console.print(f"{info['source']}; dated {info['date'] or 'unknown'}.")
    console.print(
        "* assumed: not from the price list (a documented default; on a mode: spot's "
        "preemption rate or restart time, the importer's default, or 0 where none is "
        "written).  "
        "~ the card figure it rests on is low confidence.  Packages are spread over their "
        "whole length (24, 168, 720 h); per GB-hour uses the card's marketed GB."
    )
    others = [n for n in catalog_names() if n != loaded.name]
    if others:
        console.print(f"Other shipped catalogs: {', '.join(others)}")
    write_json({**info, "rows": rows}, json_path)


def _amount(price: Decimal) -> str:
    """Whole amounts with thousands separators; others with at least two decimals."""
    if price == price.to_integral_value():
        return f"{price:,.0f}"
    places = max(2, -int(price.as_tuple().exponent))
    return f"{price:,.{places}f}"


def _table(name: str, currency: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=f"{name} ({currency})", title_justify="left")
    for column, justify in [
        ("offer", "left"),
        ("card", "left"),
        ("GiB", "right"),
        ("unit", "right"),
        ("mode", "left"),
        ("price", "right"),
        ("per", "left"),
        ("card-h", "right"),
        ("GB-h", "right"),
        ("stock", "right"),
    ]:
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        assumed = set(r["assumed"])

        def mark(field: str, text: str, assumed: set[str] = assumed) -> str:
            return text + ("*" if field in assumed else "")

        low = "~" if {"memory_gib", "memory_gb"} & set(r["low_confidence"]) else ""
        table.add_row(
            r["offer"],
            r["card"],
            f"{r['memory_gib']:g}{low}",
            f"{r['unit_cards']}",
            r["mode"] + ("*" if assumed & SPOT_RISK else ""),
            mark("price", _amount(r["price"])),
            r["price_per"],
            mark("price", f"{r['card_hour_price']:.4f}"),
            mark("price", f"{r['gb_hour_price']:.4f}") + low,
            mark("stock", "∞" if r["stock"] is None else str(r["stock"])),
        )
    return table


catalog_app.command("import")(import_catalog_command)
