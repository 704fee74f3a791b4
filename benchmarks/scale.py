"""Scale benchmark: generated quarters of 10 to 1,000 workloads, each loaded,
built, solved and checked through the library in a child process of its own.

    python benchmarks/scale.py --sizes 10,30,100 --seeds 0,1,2 --time-limit 60 [--json out.json]

Per instance: build seconds (load + build_problem), solve seconds (`solve`, which builds
again, runs both baselines, searches and checks; its limit counts from the load, as `plan
solve --time-limit` does), status, objective, bound, gap, naive and heuristic cost, whether
the plan passed the checker (where the model contradicted it, `solve` shows the cheapest checked
plan and names the inconsistency: recorded as "inconsistency"),
peak RSS of the child, model size and workloads by kind. A child that runs past the cap
(default limit × 3 + 120 s) or past --max-rss-gb is killed and recorded as such. Prints a
markdown table; --json writes every figure (after each instance, so a long run keeps what
it has). Seconds depend on the machine and its load: the load average is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from generate import file_name, generate, stock_factor, write  # noqa: E402

POLL = 0.5  # seconds between looks at a running child
PHASE = "phase: "  # prefix of the child's progress lines on stderr


def main() -> None:
    args = _parser().parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.time_limit, args.workers, args.without)))
        return
    report: dict[str, Any] = {"machine": _machine(), "params": _params(args), "runs": []}
    with tempfile.TemporaryDirectory(prefix="gpuplan-scale-") as tmp:
        folder = args.instances or Path(tmp)
        for size in args.sizes:
            for seed in args.seeds:
                run = _instance(folder, size, seed, args)
                report["runs"].append(run)
                print(_row(run), file=sys.stderr, flush=True)  # progress on a long run
                _save(report, args.json)
    report["machine"]["load_end"] = list(os.getloadavg())
    _save(report, args.json)
    print(table(report))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=_ints, default=[10, 30, 100], help="workloads, e.g. 10,30")
    p.add_argument("--seeds", type=_ints, default=[0, 1, 2])
    p.add_argument("--time-limit", type=float, default=None, help="default: plan solve's, by size")
    p.add_argument(
        "--without",
        type=_names,
        default=[],
        help="techniques off, e.g. cuts,portfolio,top-k,size-gate (all off: the direct model)",
    )
    p.add_argument("--workers", type=int, default=None, help="default: as plan solve")
    p.add_argument("--stock", choices=["scaled", "seeds"], default="scaled")
    p.add_argument(
        "--generator",
        choices=["base", "mix"],
        default="base",
        help="base: benchmarks/generate.py; mix: benchmarks/generate_mix.py (service-heavy, "
        "B300-only jobs, tight stock, weekly and daily packages)",
    )
    p.add_argument("--cap", type=float, default=None, help="seconds per instance before kill")
    p.add_argument("--max-rss-gb", type=float, default=8.0, help="kill a child above this")
    p.add_argument("--instances", type=Path, default=None, help="keep (and reuse) scenarios")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    return p


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def _names(text: str) -> list[str]:
    from planner.solve import TECHNIQUES

    names = [part for part in text.split(",") if part]
    unknown = sorted(set(names) - TECHNIQUES)
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {unknown}; known: {sorted(TECHNIQUES)}")
    return names


def limit_for(args: argparse.Namespace, size: int) -> float:
    from planner.solve import default_time_limit

    return args.time_limit if args.time_limit else default_time_limit(size)


def cap_for(args: argparse.Namespace, size: int) -> float:
    return args.cap if args.cap else limit_for(args, size) * 3 + 120


def _machine() -> dict[str, Any]:
    from planner.solve import physical_cores

    return {
        "cpus": os.cpu_count(),
        "physical_cores": physical_cores(),
        "memory_gib": round(_meminfo_kib("MemTotal") / 2**20, 1),
        "load_start": list(os.getloadavg()),
        "ortools": metadata.version("ortools"),
        "python": platform.python_version(),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--", "planner")),
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }


def _meminfo_kib(key: str) -> int:
    with open("/proc/meminfo", encoding="ascii") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return ""
    return done.stdout.strip()


def _params(args: argparse.Namespace) -> dict[str, Any]:
    from planner.solve import SolveParams

    return {
        "sizes": args.sizes,
        "seeds": args.seeds,
        "time_limit": args.time_limit or "by size",
        "workers": SolveParams(workers=args.workers).settings().workers,
        "stock": args.stock,
        "cap_seconds": args.cap or "limit × 3 + 120",
        "without": args.without,
        "max_rss_gb": args.max_rss_gb,
    }


def _save(report: dict[str, Any], path: Path | None) -> None:
    if path is not None:
        path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


# --- one instance, in a child process ------------------------------------------------------


def _instance(folder: Path, size: int, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    """Generate (or reuse) the scenario, then solve it in a child watched for time and RSS."""
    mix = args.generator == "mix"
    path = folder / (f"mix-{size}-s{seed}.yaml" if mix else file_name(size, seed, args.stock))
    started = time.perf_counter()
    if not path.exists():
        try:
            if mix:
                import generate_mix

                write(generate_mix.generate(size, seed), path)
            else:
                write(generate(size, seed, args.stock), path)
        except Exception as exc:  # a generator bug or a planner crash while quoting
            return {"size": size, "seed": seed, "status": "generator failed", "error": repr(exc)}
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    run: dict[str, Any] = {
        "size": size,
        "seed": seed,
        "scenario": str(path),
        "stock_factor": stock_factor(data),
        "generate_seconds": round(time.perf_counter() - started, 2),
        "load_at_start": round(os.getloadavg()[0], 2),
        "kinds": dict(Counter(w["kind"] for w in data["workloads"])),
    }
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(path)]
    command += ["--time-limit", str(limit_for(args, size))]
    if args.without:
        command += ["--without", ",".join(args.without)]
    if args.workers:
        command += ["--workers", str(args.workers)]
    run["time_limit"] = limit_for(args, size)
    run.update(_watch(command, cap_for(args, size), args.max_rss_gb))
    return run


def _watch(command: list[str], cap: float, max_rss_gb: float) -> dict[str, Any]:
    """Run the child; kill it past `cap` seconds or `max_rss_gb`; its figures and peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT)
        started, killed, peak_kib = time.perf_counter(), None, 0
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            peak_kib = max(peak_kib, _proc_kib(child.pid, "VmHWM"))
            elapsed = time.perf_counter() - started
            if killed is None and (elapsed > cap or peak_kib > max_rss_gb * 2**20):
                killed = "time" if elapsed > cap else "memory"
                os.kill(child.pid, signal.SIGKILL)
            time.sleep(POLL)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return _outcome(
            out.read().decode(), err.read().decode(), child.returncode, killed, usage, peak_kib
        ) | {"wall_seconds": round(time.perf_counter() - started, 1)}


def _proc_kib(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _outcome(
    stdout: str, stderr: str, code: int, killed: str | None, usage: Any, peak_kib: int
) -> dict[str, Any]:
    peak_mb = round(max(usage.ru_maxrss, peak_kib) / 1024)  # ru_maxrss is KiB on Linux
    phase = _last_phase(stderr)
    if killed:
        return {"status": f"killed ({killed})", "peak_rss_mb": peak_mb, "last_phase": phase}
    lines = stdout.strip().splitlines()
    try:
        figures: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        error = stderr[-4000:]
        return {"status": "crashed", "exit": code, "error": error, "peak_rss_mb": peak_mb}
    return figures | {"peak_rss_mb": peak_mb, "last_phase": phase}


def _last_phase(stderr: str) -> dict[str, Any] | None:
    """The child's last phase line (what it had reached when it ended or was killed)."""
    for line in reversed(stderr.splitlines()):
        if line.startswith(PHASE):
            phase: dict[str, Any] = json.loads(line[len(PHASE) :])
            return phase
    return None


def _phase(name: str, started: float) -> None:
    """Tell the parent (on stderr) what the child has reached, when, at what peak RSS."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    seconds = round(time.perf_counter() - started, 1)
    line = json.dumps({"phase": name, "seconds": seconds, "peak_rss_mb": round(peak)})
    print(PHASE + line, file=sys.stderr, flush=True)


def _child(
    path: Path, time_limit: float, workers: int | None, without: list[str]
) -> dict[str, Any]:
    """Load, build, solve and check one scenario; every figure as plain JSON values."""
    try:
        return _solve_one(path, time_limit, workers, without)
    except Exception as exc:  # recorded, with its traceback, as a crash of the planner
        return {"status": "crashed", "error": f"{exc!r}", "traceback": traceback.format_exc()}


def _solve_one(
    path: Path, time_limit: float, workers: int | None, without: list[str]
) -> dict[str, Any]:
    from planner.domain.load import load_scenario
    from planner.problem import Infeasible, build_problem
    from planner.solve import TECHNIQUES, SolveParams, solve

    started = time.perf_counter()
    scenario = load_scenario(path)
    loaded = time.perf_counter() - started
    _phase("loaded", started)
    try:
        problem = build_problem(scenario, serving=True)
    except Infeasible as exc:
        return {"status": "infeasible (build)", "reasons": exc.reasons[:5]}
    figures: dict[str, Any] = {
        "build_seconds": round(time.perf_counter() - started, 2),
        "train_configs": sum(len(j.configs) for j in problem.jobs),
        "replica_configs": sum(len(j.configs) for j in problem.replica_jobs),
        "segments": len(problem.segments),
    }
    _phase("built", started)
    del problem
    searching: list[bool] = []

    def progress(*args: object) -> None:  # the model is built when the search phase starts
        if args[3:] == ("phase:searching",) and not searching:
            searching.append(True)
            _phase("searching", started)

    begun = time.perf_counter()
    # the limit counts from the load, as in `plan solve`; solve builds the problem again
    params = SolveParams(time_limit, workers, techniques=TECHNIQUES - set(without))
    result = solve(scenario, params, on_progress=progress, started=begun - loaded)
    if result.inconsistency:  # the plan shown is the cheapest checked one; record why
        figures["inconsistency"] = result.inconsistency
    figures["solve_seconds"] = round(time.perf_counter() - begun, 2)
    _phase("solved", started)
    return figures | _result(result)


def _result(result: Any) -> dict[str, Any]:
    plan = result.plan
    figures: dict[str, Any] = {
        "status": result.status.value,
        "variables": result.size.get("variables"),
        "constraints": result.size.get("constraints"),
        "cpsat_seconds": round(result.seconds, 2),
        "reasons": result.reasons,
    }
    if plan is None:
        return figures
    return figures | {
        "checked": True,  # solve returns only plans the checker accepted
        "objective": _number(plan.total_cost),
        "bound": _number(plan.bound),
        "gap": plan.gap,
        "naive": _number(plan.naive_cost),
        "heuristic": _number(plan.heuristic_cost),
        "baseline_notes": plan.baseline_notes,
    }


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


# --- the table -----------------------------------------------------------------------------

HEADER = (
    "| workloads | seed | train/serve/reserve | stock × | variables | constraints | build s "
    "| limit s | solve s | search s | status | objective | bound | gap | naive | heuristic "
    "| vs heuristic | check | peak MB | load |"
)


def table(report: dict[str, Any]) -> str:
    m, p = report["machine"], report["params"]
    lines = [
        f"{m['cpus']} CPUs ({m['physical_cores']} physical cores), {m['memory_gib']} GiB, "
        f"OR-Tools {m['ortools']}, Python {m['python']}, commit {m['commit']}"
        f"{' (planner/ modified)' if m['dirty'] else ''}; {p['workers']} workers, limit "
        f"{p['time_limit']} s, cap {p['cap_seconds']} s, stock {p['stock']}, techniques off: "
        f"{','.join(p.get('without', [])) or 'none'}; load average "
        f"{_load(m['load_start'])} at start, {_load(m.get('load_end', []))} at end",
        "",
        HEADER,
        "|" + "---|" * HEADER.count(" | ") + "---|",
    ]
    lines += [_row(run) for run in report["runs"]]
    return "\n".join(lines)


def _load(values: list[float]) -> str:
    return "/".join(f"{v:.1f}" for v in values) or "?"


def _row(r: dict[str, Any]) -> str:
    k = r.get("kinds", {})
    cells = [
        r["size"],
        r["seed"],
        f"{k.get('train', 0)}/{k.get('serve', 0)}/{k.get('reserve', 0)}",
        r.get("stock_factor", "?"),
        _count(r.get("variables")),
        _count(r.get("constraints")),
        _secs(r.get("build_seconds")),
        r.get("time_limit", "?"),
        _secs(r.get("solve_seconds")),
        _secs(r.get("cpsat_seconds")),
        _status(r),
        _money(r.get("objective")),
        _money(r.get("bound")),
        "—" if r.get("gap") is None else f"{r['gap']:.1%}",
        _money(r.get("naive"), "none" if "checked" in r else "—"),
        _money(r.get("heuristic"), "none" if "checked" in r else "—"),
        _versus(r.get("objective"), r.get("heuristic")),
        "ok" if r.get("checked") else "rejected" if r["status"] == "rejected" else "—",
        _count(r.get("peak_rss_mb")),
        r.get("load_at_start", "?"),
    ]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _status(r: dict[str, Any]) -> str:
    phase = r.get("last_phase")
    if r["status"].startswith("killed") and phase:
        return f"{r['status']} after '{phase['phase']}' ({phase['seconds']:g} s)"
    return str(r["status"])


def _count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _secs(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _money(value: float | None, missing: str = "—") -> str:
    return missing if value is None else f"{value:,.0f}"


def _versus(objective: float | None, heuristic: float | None) -> str:
    if objective is None or not heuristic:
        return "—"
    return f"{objective / heuristic - 1:+.1%}"


if __name__ == "__main__":
    main()
