"""Fuzz the CLI with mutated scenario and catalog files: no traceback, no hang, exits 0-3.

    python benchmarks/fuzz.py --validate 10000 --solve 500 --seed 1 [--jobs 2]
    python benchmarks/fuzz.py --seed 1 --only v123          # replay one case, show its output

Cases `v0…` run `plan validate FILE`, cases `s0…` run `plan solve FILE --time-limit 5`; each
is rebuilt from the seed and its id alone (benchmarks/fuzz_mutations.py), so `--only`
replays it. Each case runs in its own process: forked from this one after `planner` is
imported (fast; the same entry point, `planner.cli.app.main`, with the case's argv), or
with `--exec` as a fresh `python -m planner.cli.app`. A case is killed 30 s past its own
limit (a hang) and may use at most 4 GiB of address space (a MemoryError is a finding).

Counted: tracebacks (an escaping exception, or the CLI's one-line "internal error"),
hangs, exits outside {0, 1, 2, 3}, and the exit distribution per command. Mutated files
live in a temporary folder that is removed at the end (`--keep` keeps it). Exit status:
0 when nothing was found, 1 otherwise.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_mutations import REPO, Case, make_case

SOLVE_LIMIT_S = 5.0
HANG_S = 30.0  # a case still running this long past its own limit is a hang
MEMORY_BYTES = 4 * 2**30
OK_EXITS = {0, 1, 2, 3}
TRACEBACK_MARKS = ("Traceback (most recent call last)", "internal error")


@dataclass
class Outcome:
    case: Case
    exit: int | None  # None: killed as a hang
    seconds: float
    stdout: str = ""
    stderr: str = ""

    @property
    def traceback(self) -> bool:
        text = self.stdout + self.stderr
        return any(mark in text for mark in TRACEBACK_MARKS)

    @property
    def problems(self) -> list[str]:
        """What is wrong with this outcome: hang, traceback, exit (outside 0-3); or nothing."""
        found = []
        if self.exit is None:
            found.append("hang")
        if self.traceback:
            found.append("traceback")
        if self.exit is not None and self.exit not in OK_EXITS:
            found.append("exit")
        return found

    @property
    def problem(self) -> str:
        return ", ".join(f"exit {self.exit}" if p == "exit" else p for p in self.problems)


@dataclass
class Tally:
    exits: dict[str, Counter[str]] = field(default_factory=dict)
    problems: Counter[str] = field(default_factory=Counter)
    failures: list[Outcome] = field(default_factory=list)
    slowest: dict[str, tuple[float, str]] = field(default_factory=dict)

    def add(self, outcome: Outcome) -> None:
        command = outcome.case.command
        code = "killed" if outcome.exit is None else str(outcome.exit)
        self.exits.setdefault(command, Counter())[code] += 1
        mark = (outcome.seconds, outcome.case.id)
        self.slowest[command] = max(self.slowest.get(command, mark), mark)
        self.problems.update(outcome.problems)
        if outcome.problems:
            self.failures.append(outcome)


# --- running one case ---------------------------------------------------------------------


def argv(case: Case, folder: Path) -> list[str]:
    args = [case.command, str(folder / case.scenario)]
    if case.command == "solve":
        args += ["--time-limit", f"{SOLVE_LIMIT_S:g}"]
    if case.json_out:
        args += ["--json", "-" if case.command == "validate" else str(folder / "plan.json")]
    return args


def limit(case: Case) -> float:
    return (SOLVE_LIMIT_S if case.command == "solve" else 0.0) + HANG_S


def write(case: Case, root: Path) -> Path:
    folder = root / case.id
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in case.files.items():
        (folder / name).write_bytes(content)
    return folder


def _child(args: list[str], folder: str) -> None:
    """In the forked process: the CLI's own entry point, its output to files."""
    _limit_memory()
    for fd, name in ((1, "stdout"), (2, "stderr")):
        handle = os.open(os.path.join(folder, f".{name}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(handle, fd)
        os.close(handle)
    os.environ.pop("PLAN_DEBUG", None)
    from planner.cli.app import main

    sys.argv = ["plan", *args]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # what Python itself would print for an escaping exception
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@dataclass
class Started:
    """A running case: its process (forked, or a fresh interpreter) and a waitable for it."""

    case: Case
    folder: Path
    began: float
    process: Any  # multiprocessing.Process | subprocess.Popen[bytes]
    sentinel: int  # readable once the process ends

    def exit_code(self) -> int | None:
        if isinstance(self.process, subprocess.Popen):
            os.close(self.sentinel)  # our pidfd
            return self.process.wait()
        self.process.join()
        return self.process.exitcode  # type: ignore[no-any-return]

    def kill(self) -> None:
        if isinstance(self.process, subprocess.Popen):
            os.killpg(self.process.pid, signal.SIGKILL)
        else:
            self.process.kill()
        self.exit_code()

    def output(self) -> tuple[str, str]:
        def read(name: str) -> str:
            path = self.folder / name
            return path.read_bytes().decode("utf-8", "replace") if path.exists() else ""

        return read(".stdout"), read(".stderr")


class Runner:
    """Runs cases at most `jobs` at a time, each in its own process with a hard timeout."""

    def __init__(self, root: Path, jobs: int, exec_: bool, keep: bool) -> None:
        self.root, self.jobs, self.exec_, self.keep = root, jobs, exec_, keep
        self.context = mp.get_context("fork")

    def run(self, cases: list[Case], done: Callable[[Outcome], None]) -> None:
        pending = list(reversed(cases))
        running: list[Started] = []
        while pending or running:
            while pending and len(running) < self.jobs:
                running.append(self._start(pending.pop()))
            deadline = min(r.began + limit(r.case) for r in running)
            ready = wait([r.sentinel for r in running], max(0.0, deadline - time.monotonic()))
            now = time.monotonic()
            for r in list(running):
                if r.sentinel in ready:
                    running.remove(r)
                    done(self._finish(r, r.exit_code(), now))
                elif now - r.began > limit(r.case):
                    running.remove(r)
                    r.kill()
                    done(self._finish(r, None, now))

    def _start(self, case: Case) -> Started:
        folder = write(case, self.root)
        args = argv(case, folder)
        began = time.monotonic()
        if self.exec_:
            env = {k: v for k, v in os.environ.items() if k != "PLAN_DEBUG"}
            env["PYTHONPATH"] = str(REPO)
            with open(folder / ".stdout", "wb") as out, open(folder / ".stderr", "wb") as err:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "planner.cli.app", *args],
                    stdout=out,
                    stderr=err,
                    env=env,
                    start_new_session=True,
                    preexec_fn=_limit_memory,
                )
            return Started(case, folder, began, proc, os.pidfd_open(proc.pid))
        sys.stdout.flush()
        sys.stderr.flush()
        process = self.context.Process(target=_child, args=(args, str(folder)))
        process.start()
        return Started(case, folder, began, process, process.sentinel)

    def _finish(self, r: Started, code: int | None, now: float) -> Outcome:
        outcome = Outcome(r.case, code, now - r.began, *r.output())
        if not outcome.problems and not self.keep:
            shutil.rmtree(r.folder, ignore_errors=True)
        return outcome


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


# --- the run ---------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--validate", type=int, default=200, help="cases through plan validate")
    parser.add_argument("--solve", type=int, default=10, help="cases through plan solve")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="cases at once (default 2)")
    parser.add_argument("--only", help="replay one case (e.g. v123 or s45) and show its output")
    parser.add_argument("--exec", action="store_true", help="run a fresh interpreter per case")
    parser.add_argument("--keep", action="store_true", help="keep the mutated files")
    opts = parser.parse_args()
    keep = opts.keep or bool(opts.only)
    if opts.exec:
        os.environ["PYTHONPATH"] = str(REPO)
    else:
        import planner.cli.app  # noqa: F401  (imported once; every forked case shares it)
    ids = [opts.only] if opts.only else [f"v{i}" for i in range(opts.validate)]
    ids += [f"s{i}" for i in range(opts.solve)] if not opts.only else []
    cases = [make_case(opts.seed, case_id) for case_id in ids]
    root = Path(tempfile.mkdtemp(prefix="gpuplan-fuzz-"))
    tally = Tally()
    started = time.monotonic()

    def done(outcome: Outcome) -> None:
        tally.add(outcome)
        if opts.only:
            _show(outcome, opts.seed, full=True)
        elif outcome.problems:
            _show(outcome, opts.seed, full=False)
        count = sum(sum(c.values()) for c in tally.exits.values())
        if count % 500 == 0:
            print(f"  … {count} of {len(cases)} cases, {time.monotonic() - started:.0f} s")

    try:
        Runner(root, max(1, opts.jobs), opts.exec, keep).run(cases, done)
    finally:
        if keep:
            print(f"mutated files kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    _summary(tally, opts, time.monotonic() - started)
    return 1 if tally.failures else 0


def _show(outcome: Outcome, seed: int, full: bool) -> None:
    case = outcome.case
    print(f"[{case.id}] {outcome.problem or 'ok'}: plan {case.command} {case.scenario}, exit "
          f"{outcome.exit}, {outcome.seconds:.1f} s  (replay: python benchmarks/fuzz.py "
          f"--seed {seed} --only {case.id})")  # fmt: skip
    for step in case.steps:
        print(f"    - {step}")
    text = (outcome.stdout + outcome.stderr).strip()
    lines = text.splitlines()
    shown = lines if full else [ln for ln in lines if any(m in ln for m in TRACEBACK_MARKS)]
    for line in (shown or lines[-3:])[-60:]:
        print(f"    | {line[:300]}")


def _summary(tally: Tally, opts: argparse.Namespace, seconds: float) -> None:
    print(f"\nfuzz seed {opts.seed}: {seconds:.0f} s wall, {opts.jobs} at a time, "
          f"{os.cpu_count()} CPUs, {platform.python_version()}, "
          f"{'fresh interpreter' if opts.exec else 'forked'} per case")  # fmt: skip
    for command, exits in sorted(tally.exits.items(), reverse=True):
        spread = ", ".join(f"exit {k}: {v}" for k, v in sorted(exits.items()))
        seconds, slowest = tally.slowest[command]
        print(f"  plan {command}: {sum(exits.values())} cases ({spread}); "
              f"slowest {seconds:.1f} s ({slowest})")  # fmt: skip
    print(f"  tracebacks {tally.problems['traceback']}, hangs {tally.problems['hang']}, "
          f"exits outside 0-3 {tally.problems['exit']}")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
