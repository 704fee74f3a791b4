"""What `plan whatif` and `plan reprice` share: the variant's options (patch files and
shorthand flags), and solving several scenarios side by side in processes."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from planner.check import check_plan
from planner.cli.solve import Progress
from planner.domain.errors import Issue, LoadError
from planner.domain.load import load_scenario
from planner.domain.plan import Plan
from planner.domain.scenario import Scenario
from planner.domain.timeaxis import TimeAxisError
from planner.domain.yaml_source import Source
from planner.parallel import Executor
from planner.pricing import breakdown
from planner.problem import Infeasible, build_problem
from planner.report import annotate
from planner.solution import to_plan
from planner.solve import SolveParams, default_time_limit, solve
from planner.warm import solution_of
from planner.whatif import shorthand
from planner.whatif.compare import Side, moved


def _flag(help: str, name: str, metavar: str = "SPEC") -> Any:
    # help is rich markup: the grammar's optional parts, [@PRICE], are not tags
    return typer.Option(name, help=help.replace("[", "\\["), metavar=metavar, show_default=False)


PatchOption = Annotated[
    list[Path] | None,
    _flag(
        "A patch file deep-merged over the scenario (repeatable, applied in order).",
        "--patch",
        "FILE",
    ),
]
PriceOption = Annotated[
    list[str] | None,
    _flag(
        "OFFER.MODE=×F or =PRICE: scale or set a price; globs allowed ('*.spot=×1.3').", "--price"
    ),
]
CommitOption = Annotated[
    list[str] | None,
    _flag(
        "OFFER=N:MODE[@PRICE][/FROM][xCOUNT]: commit N units (e.g. jz-h200=8:monthly); "
        "in whatif, N may be a range A..B to sweep the commitment level.",
        "--commit",
    ),
]
StockOption = Annotated[
    list[str] | None, _flag("OFFER.MODE=N: set a stock (globs allowed).", "--stock")
]
ShiftOption = Annotated[
    list[str] | None, _flag("WORKLOAD=±Nd or ±Nh: move a workload's window.", "--shift")
]
DropOption = Annotated[list[str] | None, _flag("WORKLOAD: remove a workload.", "--drop")]
ScaleOption = Annotated[
    list[str] | None,
    _flag("[WORKLOAD=]K: multiply serving demand (all services, or one) by K.", "--scale-demand"),
]
SetOption = Annotated[
    list[str] | None,
    _flag("PATH=VALUE: set any field (workloads.NAME.FIELD, offers.ID.MODE.FIELD, …).", "--set"),
]

# --commit OFFER=A..B:MODE…: a sweep of the commitment level (plan whatif only)
RANGE = re.compile(r"^(?P<offer>[^=]+)=(?P<low>\d+)\.\.(?P<high>\d+)(?P<rest>:.+)$")

# The order flags apply in, after the patch files: where two touch one field, the later wins.
FLAG_ORDER = ("price", "stock", "commit", "shift", "drop", "scale-demand", "set")


def _builder(flag: str) -> Any:
    return {
        "price": shorthand.price,
        "stock": shorthand.stock,
        "commit": shorthand.commit,
        "shift": shorthand.shift,
        "drop": shorthand.drop,
        "scale-demand": shorthand.scale_demand,
        "set": shorthand.set_value,
    }[flag]


@dataclass(frozen=True)
class Change:
    """A variant of a scenario: patch files, then shorthand flags by name (in FLAG_ORDER)."""

    patches: tuple[Path, ...] = ()
    flags: tuple[tuple[str, str], ...] = ()  # (flag, text)

    @staticmethod
    def of(patches: list[Path] | None, **flags: list[str] | None) -> Change:
        pairs = [
            (name, text) for name in FLAG_ORDER for text in flags.get(name.replace("-", "_")) or []
        ]
        return Change(tuple(patches or ()), tuple(pairs))

    def plus(self, flag: str, text: str) -> Change:
        """This change with one more flag, applied where FLAG_ORDER puts it."""
        flags = sorted((*self.flags, (flag, text)), key=lambda f: FLAG_ORDER.index(f[0]))
        return Change(self.patches, tuple(flags))

    def uncommitted(self, base: Scenario) -> Change:
        """This change without the commitment it adds, to price that commitment alone (a
        break-even): without its --commit flags where it has any (and so without their
        @PRICE, as a sweep's level of none), else with `base`'s commitments set again over
        what its patches and other flags wrote."""
        if any(name == "commit" for name, _ in self.flags):
            return Change(self.patches, tuple(f for f in self.flags if f[0] != "commit"))
        if self.empty:
            return self
        kept = [
            c.model_dump(mode="json", exclude_unset=True, exclude_none=True)
            for c in base.spec.commitments
        ]
        return self.plus("set", "commitments=" + json.dumps(kept))

    @property
    def empty(self) -> bool:
        return not self.patches and not self.flags

    def apply(self, path: Path, base: Scenario) -> Scenario:
        """The variant: the patch files merged over the scenario at `path`, then each flag's
        patch, computed from the scenario as changed so far (so two commitments add up)."""
        return self.applied(path, base)[0]

    def applied(self, path: Path, base: Scenario) -> tuple[Scenario, list[str]]:
        """The variant (`apply`) and a line per patch file and flag, as written; a --shift's
        also says what it held at the horizon's edge rather than moved as asked."""
        layers: list[Path | Source] = list(self.patches)
        lines = [f"--patch {p}" for p in self.patches]
        current = base
        if layers:
            with caused_by(" ".join(lines), {str(p) for p in self.patches}):
                current = planned(load_scenario(path, layers), path)
        for name, text in self.flags:
            note = shorthand.clipped(current, text) if name == "shift" else ""
            lines.append(f"--{name} {text}" + (f" ({note})" if note else ""))
            layers.append(Source(f"--{name} {text}", _builder(name)(current, text), {}))
            with caused_by(f"--{name} {text}", {f"--{name} {text}"}):
                current = planned(load_scenario(path, layers), path)
        return current, lines


@contextmanager
def caused_by(cause: str, files: set[str]) -> Iterator[None]:
    """A LoadError raised inside, its problems named by the change that caused them: the
    scenario loaded before the change, so a problem located in a file the change did not
    write (the scenario's commitment that a lower --stock makes too large) is the change's.
    Such a problem is said as the cause's (`--stock X=0: commitments[0].units: … (written
    at q3.yaml:11:73)`); one located in `files` (what the cause wrote) as it is."""
    try:
        yield
    except LoadError as exc:
        issues = [
            issue
            if issue.file in files
            else Issue(
                cause,
                None,
                None,
                issue.path,
                f"{issue.message} (written at {issue.where})",
            )
            for issue in exc.issues
        ]
        raise LoadError(issues) from None


def planned(loaded: Scenario, path: Path) -> Scenario:
    """A scenario with its time axis built (a timezone's odd clock change is bad input)."""
    try:
        loaded.axis  # noqa: B018
    except TimeAxisError as exc:
        raise LoadError([Issue(str(path), None, None, ("timezone",), str(exc))]) from None
    return loaded


def params_for(
    scenario: Scenario, time_limit: float | None, workers: int | None, seed: int, det: bool
) -> SolveParams:
    limit = default_time_limit(len(scenario.spec.workloads)) if time_limit is None else time_limit
    return SolveParams(limit, workers, seed, det)


def solve_side(
    label: str, scenario: Scenario, params: SolveParams, reference: Plan | None = None
) -> Side:
    """One scenario solved, checked and annotated; its time limit counts from now. At a
    proven optimum, ties go first to the plan nearest `reference`."""
    started = time.perf_counter()
    header = (
        f"{label}: solving {scenario.name} with {params.settings().workers} worker(s), "
        f"limit {params.time_limit:g} s …"
    )
    with Progress(scenario.spec.currency, header, label=label) as progress:
        result = solve(scenario, params, progress, started, reference)
    if result.plan is None:
        reasons = result.reasons + [c.line() for c in result.conflicts]
        return Side(label, result.status.value, reasons=reasons, inconsistency=result.inconsistency)
    assert result.problem is not None and result.solution is not None
    plan = annotate(result.problem, result.solution, result.plan)
    optimal = result.status.value == "optimal"
    bound = result.objective if optimal else result.bound
    return Side(label, result.status.value, plan, result.objective, bound, [], result.inconsistency)


def crossed(base_s: Scenario, variant_s: Scenario, pair: list[Side]) -> list[Side]:
    """The pair, each side not proven optimal taking the other side's plan where that plan,
    carried to this side's scenario ("the same plan, except the change"), passes the checker
    there and costs less than what this side's own solve found. Its bound is its own."""
    out = list(pair)
    for i, (scenario, other) in enumerate(((base_s, pair[1]), (variant_s, pair[0]))):
        side = pair[i]
        if side.optimal or side.plan is None or side.total is None or other.plan is None:
            continue
        try:
            problem = build_problem(scenario, serving=True)
        except Infeasible:
            continue
        solution = solution_of(problem, other.plan)
        if solution is None or solution.cost(problem) >= side.total:
            continue
        plan = to_plan(problem, solution, "feasible")
        plan = plan.model_copy(update={"cost_breakdown": breakdown(problem, solution, plan)})
        carried = check_plan(scenario, plan)
        if not carried.ok:
            continue
        total = solution.cost(problem)
        notes = {
            **side.plan.baseline_notes,
            "solver": f"the {other.label}'s plan, carried here, costs less than this side's "
            "own solve found: it is shown instead (checked)",
        }
        kept = side.plan
        plan = plan.model_copy(
            update={
                "naive_cost": kept.naive_cost,
                "heuristic_cost": kept.heuristic_cost,
                "baseline_notes": notes,
                "bound": kept.bound,
                "bound_without_packages": kept.bound_without_packages,
                "gap": None
                if side.bound is None or not total
                else round(float((total - side.bound) / total), 6),
                "solve_seconds": kept.solve_seconds,
                "solver": kept.solver,
                "forced": kept.forced,
                "unverified": carried.undecided,
            }
        )
        out[i] = replace(side, plan=annotate(problem, solution, plan), total=total)
    return out


# A scenario to solve, as a process can receive it: a path and a change (a loaded scenario
# does not pickle), and the label its progress lines carry.
Recipe = tuple[str, Path, Change]


def _solve_recipe(recipe: Recipe, params: SolveParams, reference: Plan | None = None) -> Side:
    label, path, change = recipe
    base = planned(load_scenario(path), path)
    scenario = change.apply(path, base) if not change.empty else base
    return solve_side(label, scenario, params, reference)


def _absolute(recipe: Recipe) -> Recipe:
    """The recipe with absolute paths: a Ray worker's folder is not ours."""
    label, path, change = recipe
    return (
        label,
        path.resolve(),
        replace(change, patches=tuple(p.resolve() for p in change.patches)),
    )


def _solve_all(
    recipes: list[Recipe], params: SolveParams, executor: Executor, reference: Plan | None = None
) -> list[Side]:
    if not recipes:
        return []
    solve_one = partial(_solve_recipe, params=params, reference=reference)
    return executor.map(solve_one, [_absolute(r) for r in recipes])


def solve_sides(recipes: list[Recipe], params: SolveParams, executor: Executor) -> list[Side]:
    """Each scenario solved with the same settings, by `executor` (processes or Ray tasks);
    the first is the base of the others. All start at once, so no variant can start from the
    base's plan; instead each variant proven optimal whose plan moved workloads is solved
    again with the base plan as its first tie level (planner.reference): the diff then
    shows only what the change caused. The second solve is kept when it proves the same
    optimum (it always should; a limit that runs out first keeps the first plan)."""
    sides = _solve_all(recipes, params, executor)
    base = sides[0].plan
    if base is None:
        return sides
    again = [
        i
        for i, side in enumerate(sides[1:], 1)
        if side.plan is not None and side.status == "optimal" and moved(base, side.plan)
    ]
    redone = _solve_all([recipes[i] for i in again], params, executor, base)
    for i, side in zip(again, redone, strict=True):
        if side.status == "optimal" and side.total == sides[i].total:
            sides[i] = side
    return sides
