"""Run `plan probe memory` over a fixed set of workloads on one CUDA card, in one process.

python benchmarks/probe_sweep.py --card h200-141g --out probes.jsonl [--only qlora] [--budget S]
python benchmarks/probe_sweep.py --records probes.jsonl --source TEXT [--exclude TASKS=WHY]

One Python process builds each model on the card (random weights: nothing is downloaded),
runs it and writes one JSON line per batch size as soon as it is measured, so a run cut
short keeps what it measured. Two sets of cases: `first` (the default) in the order the estimates
most need them, QLoRA first, then LoRA, full fine-tunes and serving; `second`, serving speed
and mixtures of experts with LoRA; `third`, mixtures of experts with QLoRA.

`--records` turns such a file into records for benchmarks/measurements (peak allocated
memory of every line; tokens/s of every training line), each quoting its line's measured
figures and placed in the set its id sends it to (tests/measurements.py, split_of).
`--exclude serve=WHY` (tasks separated by commas; repeatable) keeps those tasks' speed
records with `excluded: WHY`, for speeds the measuring machine's CPU set rather than its
card. The records of the H200 sweeps were made so; RESULTS ("The probe on an H200") has
the command.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.domain.errors import Issue
from planner.domain.load import load_catalog, load_model
from planner.paths import DEFAULT_CATALOG
from planner.probe.memory import ProbeShape, run, summary

# (model, task, batches, seq_len, rank, targets, checkpointing)
Case = tuple[str, str, tuple[int, ...], int, int, str, bool]
FIRST: list[Case] = [
    ("llama-3.1-8b", "qlora", (1, 4), 2048, 64, "all", True),
    ("llama-3.1-8b", "qlora", (1,), 512, 16, "attn", False),
    ("qwen2.5-7b", "qlora", (2,), 1024, 64, "all", True),
    ("mistral-7b", "qlora", (1, 8), 512, 16, "all", True),
    ("llama-3.2-3b", "qlora", (4,), 1024, 16, "all", False),
    ("llama-2-13b", "qlora", (1,), 4096, 64, "all", True),
    ("qwen2.5-14b", "qlora", (1,), 2048, 64, "all", True),
    ("qwen2.5-32b", "qlora", (1,), 2048, 64, "all", True),
    ("llama-3.1-8b", "lora", (1, 4), 2048, 16, "attn", False),
    ("qwen2.5-7b", "lora", (2,), 1024, 16, "all", True),
    ("mistral-7b", "lora", (1,), 4096, 8, "qv", True),
    ("qwen2.5-14b", "lora", (1,), 2048, 16, "attn", True),
    ("llama-3.2-1b", "full", (4,), 2048, 16, "attn", False),
    ("llama-3.2-3b", "full", (2,), 2048, 16, "attn", True),
    ("llama-3.1-8b", "full", (1,), 2048, 16, "attn", True),
    ("qwen2.5-7b", "full", (2,), 1024, 16, "attn", True),
    ("llama-3.1-8b", "serve", (1, 16, 64), 1024, 16, "attn", False),
    ("qwen2.5-7b", "serve", (1,), 6144, 16, "attn", False),
]
# Serving speed (HF generate after a warm-up) and mixtures of experts with LoRA on attention.
SECOND: list[Case] = [
    ("llama-3.1-8b", "serve", (1, 8, 32), 512, 16, "attn", False),
    ("mistral-7b", "serve", (1, 8), 1024, 16, "attn", False),
    ("qwen2.5-7b", "serve", (1,), 2048, 16, "attn", False),
    ("llama-3.2-3b", "serve", (1, 16), 512, 16, "attn", False),
    ("llama-3.2-1b", "serve", (1,), 256, 16, "attn", False),
    ("qwen2.5-14b", "serve", (1,), 1024, 16, "attn", False),
    ("qwen2.5-32b", "serve", (1,), 1024, 16, "attn", False),
    ("olmoe-1b-7b", "lora", (4,), 1024, 16, "attn", True),
    ("mixtral-8x7b", "lora", (1,), 1024, 16, "attn", True),
    ("qwen3-30b-a3b", "lora", (1,), 2048, 16, "attn", True),
    ("olmoe-1b-7b", "serve", (1,), 512, 16, "attn", False),
]
# QLoRA on mixtures of experts (each expert's matrices as linear layers, quantised).
THIRD: list[Case] = [
    ("olmoe-1b-7b", "qlora", (1, 4, 8), 1024, 16, "attn", True),
    ("olmoe-1b-7b", "qlora", (1,), 4096, 16, "attn", True),
    ("olmoe-1b-7b", "qlora", (1, 2), 1024, 16, "attn", False),
    ("mixtral-8x7b", "qlora", (1, 2), 2048, 16, "attn", True),
    ("qwen3-30b-a3b", "qlora", (1, 2), 1024, 16, "attn", True),
]
SETS = {"first": FIRST, "second": SECOND, "third": THIRD}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--card", help="the catalog card this runs on")
    parser.add_argument("--out", type=Path, help="JSON lines, appended")
    parser.add_argument("--records", type=Path, help="print a sweep's lines as records")
    parser.add_argument("--source", default="", help="with --records: where the lines are")
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="TASKS=WHY",
        help="with --records: keep these tasks' speeds excluded, for this reason",
    )
    parser.add_argument("--set", default="first", choices=sorted(SETS), help="which cases")
    parser.add_argument("--only", default="", help="run the cases whose task or model has this")
    parser.add_argument("--steps", type=int, default=3, help="optimizer steps (first: warm-up)")
    parser.add_argument("--new-tokens", type=int, default=64, help="serve: tokens generated")
    parser.add_argument("--budget", type=float, default=1e9, help="start no case after S s")
    parser.add_argument("--device", default="cuda", help="cuda; cpu to try the sweep itself")
    parser.add_argument("--layers", type=int, default=None, help="keep N layers (a smoke test)")
    args = parser.parse_args()
    if args.records is not None:
        excluded = {}
        for spec in args.exclude:
            tasks, _, why = spec.partition("=")
            if not why:
                parser.error(f"--exclude {spec!r}: expected TASKS=WHY")
            excluded |= dict.fromkeys(tasks.split(","), why)
        print(records(args.records, args.source, excluded), end="")
        return 0
    if args.card is None or args.out is None:
        parser.error("--card and --out are needed to run a sweep")
    _, cards = load_catalog(DEFAULT_CATALOG)
    card = cards[args.card]
    started = time.perf_counter()
    failed = 0
    for name, task, batches, seq_len, rank, targets, checkpointing in SETS[args.set]:
        if args.only and args.only not in (task, name):
            continue
        if time.perf_counter() - started > args.budget:
            print(f"budget spent: {name} {task} not started", flush=True)
            continue
        model = load_model(name, None, lambda _p, m, ref=name: Issue(ref, None, None, (), m))
        shape = ProbeShape(
            task,
            batch=batches[0],
            seq_len=seq_len,
            new_tokens=args.new_tokens,
            steps=args.steps,
            lora_rank=rank,
            lora_targets=targets,
            checkpointing=checkpointing,
            layers=args.layers,
        )
        case = {
            "model": name,
            "task": task,
            "seq_len": seq_len,
            "new_tokens": args.new_tokens if task == "serve" else None,
            "lora_rank": rank if task in ("lora", "qlora") else None,
            "lora_targets": targets if task in ("lora", "qlora") else None,
            "checkpointing": checkpointing,
            "card": args.card,
        }
        t0 = time.perf_counter()
        try:
            results = run(model, card, shape, args.device, batches=batches)
        except Exception as exc:  # one case's failure (out of memory, a kernel) is a row too
            failed += 1
            line = {**case, "error": f"{type(exc).__name__}: {exc}"[:2000]}
            traceback.print_exc()
            results = []
            _write(args.out, line)
        for result in results:
            _write(args.out, {**case, **summary(result)})
        print(f"{name} {task} {batches}: {time.perf_counter() - t0:.1f} s", flush=True)
        _release()
    return 1 if failed else 0


def records(path: Path, source: str, excluded: dict[str, str] | None = None) -> str:
    """The sweep's lines as records of both sets (YAML, one block per set); the speed
    records of the tasks in `excluded` kept with that reason."""
    import yaml

    from tests.measurements import split_of

    sets: dict[str, list[dict[str, object]]] = {"calibration": [], "evaluation": []}
    text = path.read_text(encoding="utf-8")
    for number, raw in enumerate(text.splitlines(), start=1):
        line = json.loads(raw)
        if isinstance(line.get("error"), str):
            continue  # a case that failed to run measured nothing
        start = raw.index('"measured": ')
        quote = raw[start : raw.index("}", start) + 1]
        for record in _records_of(line):
            record["source"] = f"{source} line {number}"
            record["quote"] = quote
            why = (excluded or {}).get(line["task"])
            if why and str(record["id"]).endswith("-speed"):
                record["excluded"] = why
            sets[split_of(str(record["id"]))].append(record)

    class Plain(yaml.SafeDumper):  # no anchors: records share their knobs' dict
        def ignore_aliases(self, data: object) -> bool:
            return True

    return "".join(
        f"# {name}\n" + yaml.dump(rows, Dumper=Plain, sort_keys=False, width=100)
        for name, rows in sets.items()
    )


def _records_of(line: dict[str, Any]) -> list[dict[str, object]]:
    task, batch, seq = line["task"], line["batch"], line["seq_len"]
    measured = line["measured"]
    stem = f"probe-{line['card']}-{line['model']}-{task}-b{batch}-s{seq}"
    if task in ("lora", "qlora"):
        stem += f"-r{line['lora_rank']}-{line['lora_targets']}"
    if task != "serve" and not line["checkpointing"]:
        stem += "-nockpt"
    shape: dict[str, object] = {
        "model": line["model"],
        "card": line["card"],
        "cards": 1,
        "task": task,
        "engine": "hf" if task in ("serve", "full") else "peft",
        "precision": "bf16",
    }
    if task == "serve":
        # lines written before the field was: the sweep's default, 64
        new = line.get("new_tokens") or 64
        shape |= {"input_tokens": seq, "output_tokens": new, "concurrency": batch}
    else:
        knobs: dict[str, object] = {
            "optimizer": "adamw-bf16" if task == "full" else "adamw",
            "zero": 0,
            "offload": "none",
            "checkpointing": line["checkpointing"],
            "chunked_loss": False,
            "compile": False,
            "attention": "flash",
            "plain_loop": True,
        }
        if task in ("lora", "qlora"):
            knobs |= {
                "lora_rank": line["lora_rank"],
                "lora_targets": line["lora_targets"],
                "lora_precision": "fp32" if task == "lora" else "bf16",
            }
        shape |= {"seq_len": seq, "micro_batch": batch, "packed": True, "knobs": knobs}
    note = (
        "plan probe memory: random weights built on the card; "
        + (
            "HF generate, greedy"
            if task == "serve"
            else "a plain loop (torch AdamW, foreach=False), SDPA attention, fp32 loss"
        )
        + (", NF4 base (bitsandbytes, double quantisation)" if task == "qlora" else "")
    )
    rows: list[dict[str, object]] = [
        {
            "id": f"{stem}-memory",
            "quantity": "serve_memory" if task == "serve" else "train_memory",
            "measured": measured["peak_allocated_gib"],
            "unit": "GiB",
            "metric": "allocated",
            **shape,
            "note": note + "; peak: torch.cuda.max_memory_allocated",
        }
    ]
    # serving lines with new_tokens were timed after a warm-up (earlier ones were not)
    timed = task != "serve" or bool(line.get("new_tokens"))
    if measured.get("tokens_per_s") and timed:
        if task == "serve":
            quantity = "decode_tok_s" if batch == 1 else "serve_throughput"
            how = "generated tokens/s of the whole call, prefill included"
        else:
            quantity, how = "train_tok_s", "tokens/s of the steps after the first"
        rows.append(
            {
                "id": f"{stem}-speed",
                "quantity": quantity,
                "measured": measured["tokens_per_s"],
                "unit": "tok/s",
                **shape,
                "note": f"{note}; {how}",
            }
        )
    return rows


def _write(path: Path, line: dict[str, object]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
    print(json.dumps(line), flush=True)


def _release() -> None:
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


if __name__ == "__main__":
    raise SystemExit(main())
