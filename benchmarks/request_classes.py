"""Class-aware against single-stream serving on generated service-heavy months.

    python benchmarks/request_classes.py [--services 4] [--seeds 1 2] [--days 30]
        [--time-limit 60]

Each seed draws `--services` services on the seeds' catalog for `--days` days from
2026-07-01 (30: July; 92: the quarter), each with a model,
a precision, a daily curve), every one with three request classes: chat (85% of the
curve, 2k context, 512 out, 20 tokens/s, first token within 1 s), long (15%, 32k context,
1k out, 20 tokens/s, within 6 s) and a night batch class (its own 00-06 curve, 4k
context, 1k out, 5 tokens/s, no replica required by day). The single stream is how such
a service is planned without classes, sized so that every request fits: the sum of the
classes' curves at the longest context and the fastest speed (no first-token target, as
one stream cannot say which requests need which). Both are solved with the same limit and
workers; the table gives each total, status, gap and solve time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.domain.load import load_scenario  # noqa: E402
from planner.solve import SolveParams, solve  # noqa: E402

START = dt.date(2026, 7, 1)
MODELS = [("llama-3.1-8b", "bf16"), ("qwen2.5-14b", "bf16"), ("llama-3.1-70b", "fp8")]


def services(count: int, seed: int, days: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        model, precision = rng.choice(MODELS)
        day, night = rng.randrange(40, 160, 10), rng.randrange(5, 30, 5)
        out.append(
            {
                "name": f"svc{i}",
                "kind": "serve",
                "model": model,
                "precision": precision,
                "start": START.isoformat(),
                "end": (START + dt.timedelta(days=days)).isoformat(),
                "min_replicas": 1,
                "setup_minutes": 10,
                "concurrency": {"00-08": night, "08-20": day, "20-24": (day + night) // 2},
                "classes": [
                    {
                        "name": "chat",
                        "share": 0.85,
                        "context_tokens": 2048,
                        "output_tokens": 512,
                        "min_tokens_per_s": 20,
                        "ttft_s": 1,
                    },
                    {
                        "name": "long",
                        "share": 0.15,
                        "context_tokens": 32768,
                        "output_tokens": 1024,
                        "min_tokens_per_s": 20,
                        "ttft_s": 6,
                    },
                    {
                        "name": "batch",
                        "concurrency": {"00-06": rng.randrange(20, 80, 10), "06-24": 0},
                        "context_tokens": 4096,
                        "output_tokens": 1024,
                        "min_tokens_per_s": 5,
                        "min_replicas": 0,
                    },
                ],
            }
        )
    return out


def single_stream(service: dict[str, Any]) -> dict[str, Any]:
    """One stream that holds every class's requests: the curves added, the longest
    context, the fastest speed."""
    curve = dict(service["concurrency"])
    night = service["classes"][2]["concurrency"]["00-06"]
    levels = {
        "00-06": curve["00-08"] + night,
        "06-08": curve["00-08"],
        "08-20": curve["08-20"],
        "20-24": curve["20-24"],
    }
    out = {k: v for k, v in service.items() if k != "classes"}
    return out | {
        "concurrency": levels,
        "context_tokens": 32768,
        "output_tokens": 1024,
        "min_tokens_per_s": 20,
    }


def scenario(workloads: list[dict[str, Any]], seed: int, days: int) -> dict[str, Any]:
    end = START + dt.timedelta(days=days)
    return {
        "name": f"service-heavy-{seed}",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": START.isoformat(), "end": end.isoformat()},
        "catalog": "jizhisuan-2026-09",
        "workloads": workloads,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--services", type=int, default=4)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    print("| seed | planning | status | total CNY | bound CNY | gap | seconds | variables |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for seed in args.seeds:
            classed = services(args.services, seed, args.days)
            variants = {"classes": classed, "single stream": [single_stream(s) for s in classed]}
            for label, workloads in variants.items():
                path = Path(folder) / f"{seed}-{label.replace(' ', '-')}.yaml"
                data = scenario(workloads, seed, args.days)
                path.write_text(yaml.safe_dump(data, sort_keys=False))
                started = time.perf_counter()
                result = solve(load_scenario(path), SolveParams(args.time_limit, args.workers))
                seconds = time.perf_counter() - started
                plan = result.plan
                if plan is None:
                    print(f"| {seed} | {label} | {result.status} | - | - | - | {seconds:.1f} | - |")
                    continue
                gap = "-" if plan.gap is None else f"{plan.gap:.2%}"
                bound = "-" if plan.bound is None else f"{plan.bound:,}"
                print(
                    f"| {seed} | {label} | {plan.status} | {plan.total_cost:,} | {bound} | "
                    f"{gap} | {seconds:.1f} | {result.size.get('variables', 0):,} |"
                )


if __name__ == "__main__":
    main()
