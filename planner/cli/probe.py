"""`plan probe card|memory`: measure on the local accelerator; `--save` a calibration file."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from planner.cli.common import JsonOption, err, human, input_errors, write_json
from planner.domain.errors import Issue, LoadError
from planner.domain.load import load_catalog
from planner.paths import DEFAULT_CATALOG
from planner.probe.calibration import card_entry, save
from planner.probe.card import (
    Verdict,
    benchmark,
    match_card,
    power_verdict,
    speed_verdicts,
    version_verdict,
)
from planner.probe.smi import GpuReading, parse_query

probe = typer.Typer(help="Measure on the local accelerator (optional extra gpuplan[probe]).")
NO_GPU = 3  # exit code 3: no answer could be produced here (README, "Exit codes")


def _readings(from_file: Path | None) -> list[GpuReading]:
    """nvidia-smi -q from a recorded file, or from this machine (exit 3 without a GPU)."""
    if from_file is not None:
        try:
            return parse_query(from_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LoadError([Issue(str(from_file), None, None, (), str(exc))]) from None
    if shutil.which("nvidia-smi") is None:
        err.print(
            "[bold red]no NVIDIA GPU here:[/] nvidia-smi is not on PATH. Run this on the rented "
            "card, or analyse a recorded output with --from FILE (nvidia-smi -q > FILE)."
        )
        raise typer.Exit(NO_GPU)
    run = subprocess.run(["nvidia-smi", "-q"], capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        err.print(f"[bold red]nvidia-smi failed[/] ({run.returncode}): {run.stderr.strip()}")
        raise typer.Exit(NO_GPU)
    return parse_query(run.stdout)


def _torch() -> tuple[str | None, str | None, bool]:
    """PyTorch's version, its CUDA build, and whether it sees a CUDA device."""
    try:
        import torch
    except ImportError:
        return None, None, False
    return torch.__version__, torch.version.cuda, bool(torch.cuda.is_available())


@probe.command("card")
def card_command(
    card: Annotated[str | None, typer.Option(help="The catalog card it should be.")] = None,
    gpu: Annotated[int, typer.Option(min=0, help="GPU index on this machine.")] = 0,
    from_file: Annotated[
        Path | None,
        typer.Option("--from", help="A recorded nvidia-smi -q output: readings only, no run."),
    ] = None,
    seconds: Annotated[float, typer.Option(min=0.1, help="Seconds per benchmark.")] = 2.0,
    catalog: Annotated[str, typer.Option(help="Catalog with the card figures.")] = DEFAULT_CATALOG,
    save_path: Annotated[
        Path | None, typer.Option("--save", help="Write the measured figures as a calibration.")
    ] = None,
    json_path: JsonOption = None,
) -> None:
    """Driver, CUDA and PyTorch versions, memory, power limit vs rated power, and a BF16
    matmul and a memory-copy benchmark against the catalog's figures."""
    with input_errors(json_path):
        _, cards = load_catalog(catalog)
        if card is not None and card not in cards:
            raise LoadError([Issue("--card", None, None, (), f"unknown card {card!r}")])
        readings = _readings(from_file)
        if gpu >= len(readings):
            message = f"GPU {gpu} not found: {len(readings)} GPU(s) reported"
            raise LoadError([Issue("--gpu", None, None, (), message)])
    reading = readings[gpu]
    spec = cards[card] if card is not None else match_card(reading, cards)
    torch_version, torch_cuda, has_cuda = _torch() if from_file is None else (None, None, False)
    verdicts = [power_verdict(reading, spec)]
    if from_file is None:
        verdicts.append(version_verdict(reading, torch_version, torch_cuda))
    tflops = bandwidth = None
    if from_file is None and has_cuda:
        tflops, bandwidth = benchmark(gpu, seconds=seconds)
    elif from_file is None:
        err.print(
            "benchmarks skipped: PyTorch with CUDA is not installed (pip install 'gpuplan[probe]')"
        )
    if spec is not None:
        verdicts += speed_verdicts(spec, tflops, bandwidth)
    else:
        verdicts.append(
            Verdict(
                "unknown-card",
                f"{reading.name!r} is not a catalog card: give --card to compare its figures",
            )
        )
    data: dict[str, Any] = {
        "gpu": vars(reading),
        "card": spec.id if spec is not None else None,
        "torch": torch_version,
        "torch_cuda": torch_cuda,
        "bf16_tflops": tflops,
        "copy_gbs": bandwidth,
        "verdicts": [vars(v) for v in verdicts],
    }
    _print(human(json_path), reading, data)
    if save_path is not None and spec is not None and tflops is not None and bandwidth is not None:
        save(save_path, [card_entry(spec, reading, tflops, bandwidth)])
        err.print(f"calibration written to {save_path}")
    write_json(data, json_path)


def _print(console: Any, reading: GpuReading, data: dict[str, Any]) -> None:
    table = Table(
        title=f"{reading.name} ({reading.bus_id})", title_justify="left", show_header=False
    )
    table.add_row("catalog card", data["card"] or "-")
    table.add_row("driver / CUDA", f"{reading.driver} / {reading.cuda}")
    table.add_row("PyTorch / CUDA", f"{data['torch'] or '-'} / {data['torch_cuda'] or '-'}")
    memory = reading.memory_total_mib
    table.add_row("memory", f"{memory / 1024:.2f} GiB" if memory else "-")
    table.add_row(
        "power limit / default / max",
        " / ".join(
            f"{w:g} W" if w else "-"
            for w in (reading.power_limit_w, reading.default_limit_w, reading.max_limit_w)
        ),
    )
    console.print(table)
    for v in data["verdicts"]:
        colour = {"ok": "green", "unknown": "yellow", "unknown-card": "yellow"}.get(
            v["name"], "red"
        )
        console.print(f"  [{colour}]{v['name']}[/]: {v['text']}", highlight=False)


@probe.command("memory")
def memory_command(
    model: Annotated[str, typer.Argument(help="A shipped model card or a config.json path.")],
    task: Annotated[str, typer.Option(help="serve | full | lora | qlora (CUDA)")] = "lora",
    batch: Annotated[
        str, typer.Option(help="Sequences per step (prompts for serve); a list runs each: 1,2,4.")
    ] = "1",
    seq_len: Annotated[
        int, typer.Option(min=1, help="Tokens per sequence (prompt for serve).")
    ] = 512,
    precision: Annotated[str, typer.Option(help="bf16 | fp16 | fp32")] = "bf16",
    lora_rank: Annotated[int, typer.Option(min=1)] = 16,
    lora_targets: Annotated[str, typer.Option(help="qv | attn | all")] = "attn",
    checkpointing: Annotated[bool, typer.Option(help="Activation checkpointing.")] = False,
    steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")] = 2,
    new_tokens: Annotated[int, typer.Option(min=1, help="serve: tokens to generate.")] = 16,
    layers: Annotated[
        int | None, typer.Option(min=1, help="Keep only this many layers (same shape).")
    ] = None,
    weights: Annotated[str | None, typer.Option(help="Local weights folder to load.")] = None,
    device: Annotated[str, typer.Option(help="auto | cuda | cpu")] = "auto",
    card: Annotated[
        str | None, typer.Option(help="Catalog card this runs on (for --save).")
    ] = None,
    catalog: Annotated[str, typer.Option(help="Catalog with the card figures.")] = DEFAULT_CATALOG,
    save_path: Annotated[
        Path | None, typer.Option("--save", help="Write measured − estimated as a calibration.")
    ] = None,
    json_path: JsonOption = None,
) -> None:
    """Run the workload on the local accelerator and print its peak beside the estimate."""
    from planner.domain.load import load_model
    from planner.probe.calibration import memory_entry
    from planner.probe.memory import NoDevice, ProbeError, ProbeShape, run, summary

    with input_errors(json_path):
        card_model = load_model(model, Path.cwd(), lambda _p, m: Issue(model, None, None, (), m))
        _, cards = load_catalog(catalog)
        checks = {
            "--task": (task, ("serve", "full", "lora", "qlora")),
            "--precision": (precision, ("bf16", "fp16", "fp32")),
            "--lora-targets": (lora_targets, ("qv", "attn", "all")),
            "--device": (device, ("auto", "cuda", "cpu")),
        }
        for flag, (value, allowed) in checks.items():
            if value not in allowed:
                message = f"{value!r}: expected one of {', '.join(allowed)}"
                raise LoadError([Issue(flag, None, None, (), message)])
        if card is not None and card not in cards:
            raise LoadError([Issue("--card", None, None, (), f"unknown card {card!r}")])
        batches = _batches(batch)
    shape = ProbeShape(
        task,
        precision,
        batches[0],
        seq_len,
        new_tokens,
        steps,
        lora_rank,
        lora_targets,
        checkpointing,
        layers,
    )
    spec = cards[card or "h100-80g"]  # the card only sets "usable"; the terms do not use it
    try:
        say = lambda text: err.print(f"  {text}")  # noqa: E731
        results = run(card_model, spec, shape, device, weights, say, batches)
    except ProbeError as exc:
        err.print(f"[bold red]cannot probe:[/] {exc}")
        raise typer.Exit(NO_GPU if isinstance(exc, NoDevice) else 1) from None
    rows = [summary(r) for r in results]
    console = human(json_path)
    first = results[0]
    console.print(
        f"{first.model.name} {task} on {first.device}: {seq_len} tokens per sequence "
        f"({first.model.params / 1e6:,.0f}M params); weights after load "
        f"{rows[0]['measured']['weights_gib']:.3f} GiB measured, "
        f"{rows[0]['estimate']['weights_gib']:.3f} estimated"
    )
    table = Table(show_header=True)
    columns = [
        "batch",
        "peak allocated",
        "estimate",
        "error",
        "peak reserved",
        "estimate + overhead",
        "tokens/s",
    ]
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        m, e = row["measured"], row["estimate"]
        reserved = m["peak_reserved_gib"]
        table.add_row(
            str(row["batch"]),
            f"{m['peak_allocated_gib']:.3f} GiB",
            f"{e['allocated_gib']:.3f} GiB",
            f"{row['error']:+.1%}" if row["error"] is not None else "-",
            "-" if reserved is None else f"{reserved:.3f} GiB",
            f"{e['total_gib']:.3f} GiB",
            "-" if m["tokens_per_s"] is None else f"{m['tokens_per_s']:,.0f}",
        )
    console.print(table)
    console.print(
        f"  estimate by term (last batch): {rows[-1]['estimate']['breakdown_gib']}", markup=False
    )
    console.print(f"  {first.note}", markup=False)
    if first.tokens_per_s is not None:
        console.print(
            "  tokens/s: "
            + (
                "generated tokens per second of the whole generate call, prefill included"
                if task == "serve"
                else "trained tokens per second of the steps after the first (a warm-up)"
            )
        )
    if save_path is not None:
        if first.device != "cuda" or card is None:
            err.print("--save needs a CUDA run with --card (a CPU peak is not a card's)")
            raise typer.Exit(1)
        last = rows[-1]  # the largest batch asked for: the offset at the working point
        what = f"{task} batch {last['batch']} × {seq_len}"
        entry = memory_entry(
            card_model.name,
            card,
            task,
            last["measured"]["peak_allocated_gib"],
            last["estimate"]["allocated_gib"],
            what,
        )
        save(save_path, [entry])
        err.print(f"calibration written to {save_path}")
    write_json(rows, json_path)


def _batches(text: str) -> tuple[int, ...]:
    """--batch 4 or --batch 1,2,4: positive sizes, in the order given."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        message = f"expected a batch size or a list such as 1,2,4, got {text!r}"
        raise LoadError([Issue("--batch", None, None, (), message)])
    return sizes
