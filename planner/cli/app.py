"""The `plan` application: wires the commands, handles --version and unexpected errors."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.markup import escape

try:  # typer vendors click since 0.2x; before that it depended on it
    from typer._click.exceptions import ClickException
    from typer.exceptions import Abort
except ImportError:  # pragma: no cover - older typer
    from click.exceptions import (  # type: ignore[no-redef,assignment,unused-ignore]
        Abort,
        ClickException,
    )

from planner import __version__
from planner.cli import IMPORTED
from planner.cli.catalog import catalog_app
from planner.cli.check import check_command
from planner.cli.common import err, launched_at
from planner.cli.fit import fit
from planner.cli.import_catalog import import_catalog_command
from planner.cli.probe import probe
from planner.cli.quote import quote_command
from planner.cli.reprice import reprice_command
from planner.cli.schema import schema_command
from planner.cli.simulate import simulate_command
from planner.cli.solve import solve_command
from planner.cli.validate import validate
from planner.cli.whatif import whatif_command

app = typer.Typer(
    name="plan",
    help="gpuplan: the cheapest GPU rental plan for a quarter of LLM work.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command()(validate)
app.add_typer(catalog_app, name="catalog")
app.command("import-catalog", hidden=True)(import_catalog_command)  # the earlier name
app.command()(fit)
app.command("quote")(quote_command)
app.command("solve")(solve_command)
app.command("check")(check_command)
app.command("schema")(schema_command)
app.command("whatif")(whatif_command)
app.command("reprice")(reprice_command)
app.command("simulate")(simulate_command)
app.add_typer(probe, name="probe")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuplan {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """gpuplan: the cheapest GPU rental plan for a quarter of LLM work."""


def main() -> None:
    """Console entry point. Usage errors exit 1 (2 means proven infeasible); an unexpected
    failure is one line, unless PLAN_DEBUG is set."""
    launched_at(IMPORTED)  # `plan solve`'s limit counts its imports too
    try:
        code = app(standalone_mode=False)
    except ClickException as exc:  # a mistyped flag or a missing argument: bad input
        exc.show()
        raise SystemExit(1) from None
    except Abort:
        raise SystemExit(1) from None
    except Exception as exc:  # a bug, not bad input (bad input exits 1 with its problems)
        if os.environ.get("PLAN_DEBUG"):
            raise
        err.print(
            f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))} "
            "(set PLAN_DEBUG=1 for a traceback, and please report it)"
        )
        raise SystemExit(70) from None
    raise SystemExit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # `python -m planner.cli.app …` runs the CLI, as `plan …` does
    main()
