"""What every command shares: consoles, the --json option, error printing."""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from planner.domain.errors import Issue, LoadError
from planner.domain.load import load_scenario
from planner.domain.plan import Plan
from planner.domain.scenario import Scenario
from planner.domain.timeaxis import TimeAxisError

if TYPE_CHECKING:
    from planner.explain import Conflict

# Tables are wide: when output is piped (no terminal width to respect), don't squeeze to 80.
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

_launched: list[float] = []  # when this process's command began (planner.cli.app.main)


def launched_at(when: float) -> None:
    """Tell the command about to run that it began at `when` (a `time.perf_counter()`)."""
    _launched[:] = [when]


def command_started() -> float:
    """When the running command began: the time handed on by `launched_at` (once), or now."""
    return _launched.pop() if _launched else time.perf_counter()


for _console in (out, err):
    if not _console.is_terminal:
        _console.width = 160

JsonOption = Annotated[
    str | None,
    typer.Option(
        "--json",
        metavar="PATH|-",
        help="Also write the result as JSON to PATH; '-' writes only the JSON, to stdout.",
    ),
]


ScenarioArgument = Annotated[Path, typer.Argument(help="Scenario YAML file.", show_default=False)]
PlanArgument = Annotated[
    Path, typer.Argument(help="Plan JSON written by plan solve --json.", show_default=False)
]
MarginOption = Annotated[
    str | None,
    typer.Option(
        "--memory-margin",
        metavar="band|-band|PCT",
        help="Fit memory with a margin: 'band' (each estimate's measured error band), "
        "'-band' (plan at the band's low end: cards the estimate overfills but the measured "
        "figures say may do, each named in the plan's warnings), or a share such as 10%, "
        "0.1 or -5%.",
    ),
]


SpeedMarginOption = Annotated[
    str | None,
    typer.Option(
        "--speed-margin",
        metavar="band|PCT",
        help="Plan training at a slower speed than estimated: 'band' (each estimate's lower "
        "band, how far below such estimates speeds were measured) or a share such as 20%.",
    ),
]


def parse_margin(text: str | None) -> float | str | None:
    """A --memory-margin value: "band", "-band", or a share from -90% to 100% ("10%", "0.1",
    "-5%"); None when not given."""
    if text is None or text in ("band", "-band"):
        return text
    expected = "'band', '-band' or a share from -90% to 100% (e.g. 10%, 0.1 or -5%)"
    return _share("--memory-margin", text, lambda v: -0.9 <= v <= 1, expected)


def parse_speed_margin(text: str | None) -> float | str | None:
    """A --speed-margin value: "band", or a share from 0 to under 100% ("20%", "0.2")."""
    if text is None or text == "band":
        return text
    expected = "'band' or a share from 0 to under 100% (e.g. 20% or 0.2)"
    return _share("--speed-margin", text, lambda v: 0 <= v < 1, expected)


def _share(flag: str, text: str, allowed: Callable[[float], bool], expected: str) -> float:
    """`text` as a share ("10%" or "0.1"), refused by `flag`'s name unless `allowed`."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        value = math.nan  # fails every range below
    if not allowed(value):
        raise LoadError([Issue(flag, None, None, (), f"expected {expected}, got {text!r}")])
    return value


def with_margin(
    scenario: Scenario, margin: float | str | None, speed: float | str | None = None
) -> Scenario:
    """The scenario with its memory_margin (--memory-margin) and speed_margin
    (--speed-margin) replaced where given, or as it is."""
    update = {
        k: v for k, v in (("memory_margin", margin), ("speed_margin", speed)) if v is not None
    }
    if not update:
        return scenario
    spec = scenario.spec.model_copy(update=update)
    return scenario.model_copy(update={"spec": spec})


def human(json_path: str | None) -> Console:
    """Where human-readable output goes: stdout, or stderr when the JSON takes stdout."""
    return err if json_path == "-" else out


def _default(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        number = float(value)
        # Prices and rates have far fewer than 15 significant digits, so the float's shortest
        # repr is the decimal itself; refuse silently lossy output.
        if Decimal(repr(number)) != value:
            return str(value)
        return number
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def to_json(data: Any) -> str:
    return json.dumps(data, default=_default, ensure_ascii=False, indent=2)


@contextmanager
def output_errors() -> Iterator[None]:
    """An output file that cannot be written is one clear error (exit 1), no traceback."""
    try:
        yield
    except OSError as exc:
        err.print(f"[bold red]error:[/] cannot write {escape(str(exc.filename))}: {exc.strerror}")
        raise typer.Exit(1) from None


def print_conflicts(conflicts: list[Conflict]) -> None:
    """Each conflict on stderr, on a line of its own (unwrapped: easy to grep), with its
    smallest relaxation below it."""
    for conflict in conflicts:
        err.print(f"  {conflict.line()}", markup=False, soft_wrap=True)
        relax = conflict.relaxation or "no relaxation computed"
        err.print(f"    relax: {relax}", markup=False, soft_wrap=True)


def write_text(path: Path, text: str) -> None:
    with output_errors():
        path.write_text(text, encoding="utf-8")
    err.print(f"wrote {path}")


def writable(**paths: str | Path | None) -> None:
    """Each output file's folder exists (by option name, as `json=…`, `report=…`; "-" is
    stdout): said before a long solve, not after it. A LoadError (exit 1) naming each."""
    issues = [
        Issue("--" + name.replace("_", "-"), None, None, (), why)
        for name, path in paths.items()
        if (why := _no_folder(path)) is not None
    ]
    if issues:
        raise LoadError(issues)


def _no_folder(path: str | Path | None) -> str | None:
    """Why an output file cannot be written for want of its folder; None where it can (or
    it goes to stdout, "-", or nowhere)."""
    if path is None or str(path) == "-":
        return None
    folder = Path(path).parent
    if folder.is_dir():
        return None
    return f"folder {str(folder)!r} {'is not a folder' if folder.exists() else 'does not exist'}"


def with_plan_margins(
    scenario: Scenario, plan: Plan, memory: str | None = None, speed: str | None = None
) -> Scenario:
    """`scenario` with the margins `plan` was made with (`_margins_of`), to check, replay or
    reprice it as it was planned."""
    memory, speed = _margins_of(plan, memory, speed)
    return with_margin(scenario, parse_margin(memory), parse_speed_margin(speed))


def _margins_of(plan: Plan, memory: str | None, speed: str | None) -> tuple[str | None, str | None]:
    """The margins to check or replay `plan` with: those it was made with (`plan solve`
    records them), which flags given here must repeat."""
    issues = []
    for flag, given, made, parse in (
        ("--memory-margin", memory, plan.memory_margin, parse_margin),
        ("--speed-margin", speed, plan.speed_margin, parse_speed_margin),
    ):
        if given is not None and not _same_margin(parse(given), made and parse(made)):
            said = f"was made with {flag} {made}" if made else f"was made without {flag}"
            issues.append(Issue(flag, None, None, (), f"the plan {said}; give the same or none"))
    if issues:
        raise LoadError(issues)
    return plan.memory_margin, plan.speed_margin


def _same_margin(given: float | str | None, made: float | str | None) -> bool:
    """The same margin however written: 10%, 0.1 and 0.10 are one share, and 0 is none;
    "band" is itself."""
    given, made = (0.0 if m is None else m for m in (given, made))
    if isinstance(given, float) and isinstance(made, float):
        return math.isclose(given, made, rel_tol=1e-9, abs_tol=1e-12)
    return given == made


def write_json(data: Any, json_path: str | None) -> None:
    if json_path is None:
        return
    text = to_json(data) + "\n"
    if json_path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_text(Path(json_path), text)


def print_issues(error: LoadError) -> None:
    count = len(error.issues)
    err.print(f"[bold red]{count} problem{'s' if count != 1 else ''}[/] found:", highlight=False)
    for issue in error.issues:
        err.print(f"  • {issue}", markup=False, highlight=False)


@contextmanager
def input_errors(json_path: str | None = None) -> Iterator[None]:
    """Bad input becomes its listed problems and exit code 1, never a traceback."""
    try:
        yield
    except LoadError as exc:
        print_issues(exc)
        if _no_folder(json_path) is None:  # the errors as JSON too, where they can go
            write_json({"valid": False, "errors": [i.as_dict() for i in exc.issues]}, json_path)
        raise typer.Exit(1) from None


def load_planned(path: Path) -> Scenario:
    """A scenario with its time axis built: a timezone whose clock change inside the horizon
    is not a whole hour (Australia/Lord_Howe) is a problem in the input, not an internal
    error."""
    loaded = load_scenario(path)
    try:
        loaded.axis  # noqa: B018 (built here so its error is reported as the input's)
    except TimeAxisError as exc:
        raise LoadError([Issue(str(path), None, None, ("timezone",), str(exc))]) from None
    return loaded


def read_plan(path: Path) -> Plan:
    """A plan JSON as `plan solve --json` writes it; unreadable or malformed is bad input."""
    try:
        return Plan.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LoadError([Issue(str(path), None, None, (), f"cannot read: {exc}")]) from None
    except ValidationError as exc:
        raise LoadError(
            [
                Issue(str(path), None, None, tuple(e["loc"]), e["msg"])
                for e in exc.errors(include_url=False)
            ]
        ) from None
