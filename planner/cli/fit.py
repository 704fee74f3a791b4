"""`plan fit MODEL --task …`: which cards and counts fit, memory breakdown, speed, cost."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from planner.cli.common import (
    JsonOption,
    MarginOption,
    human,
    input_errors,
    parse_margin,
    write_json,
)
from planner.domain.calibration import calibrated_cards, measured_lines, memory_offset_gib
from planner.domain.errors import Issue, LoadError
from planner.domain.load import load_calibration, load_catalog, load_model
from planner.domain.recipes import RECIPES, TrainKnobs, recipe_knobs
from planner.domain.suggest import did_you_mean
from planner.estimate.bands import BANDS, MIN_CASES
from planner.estimate.fit import FitQuery, fit_rows
from planner.estimate.memory import ServeSetup
from planner.paths import DEFAULT_CATALOG


# Choices for the flags; tests/test_cli_fit.py checks they equal the schema's vocabulary.
class Task(StrEnum):
    serve = "serve"
    full = "full"
    lora = "lora"
    qlora = "qlora"
    eval = "eval"


class Engine(StrEnum):
    vllm = "vllm"
    hf = "hf"


class Precision(StrEnum):
    fp32 = "fp32"
    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"
    int8 = "int8"
    int4 = "int4"
    nf4 = "nf4"


class Optimizer(StrEnum):
    adamw = "adamw"
    adamw_bf16 = "adamw-bf16"
    adamw_8bit = "adamw-8bit"
    paged_adamw_8bit = "paged-adamw-8bit"
    paged_adamw = "paged-adamw"
    sgd = "sgd"


class Offload(StrEnum):
    none = "none"
    optimizer = "optimizer"
    optimizer_params = "optimizer+params"


class Attention(StrEnum):
    flash = "flash"
    eager = "eager"


class Targets(StrEnum):
    qv = "qv"
    attn = "attn"
    all = "all"


class AdapterFormat(StrEnum):
    fp32 = "fp32"
    bf16 = "bf16"


Opt = typer.Option
VERDICTS = {"fits": "[green]yes[/]", "marginal": "[yellow]marginal[/]", "no": "[red]no[/]"}


# Defaults of the flags a task may refuse (given to another task, each is named): None in
# the signature, so that a flag given can be told from one left out.
SEQ_LEN, BATCH, ENGINE, CONCURRENCY, CONTEXT_TOKENS = 2048, 1, Engine.vllm, 1, 4096


def fit(
    model: Annotated[
        str,
        typer.Argument(
            help="A shipped model card, or a path to a model card YAML or a config.json."
        ),
    ],
    task: Annotated[Task, Opt(help="What to run.")] = Task.serve,
    precision: Annotated[
        Precision | None, Opt(help="Weights (default bf16; qlora: nf4 base).")
    ] = None,
    seq_len: Annotated[
        int | None,
        Opt(min=2, help=f"Training sequence length, at least 2 (default {SEQ_LEN})."),
    ] = None,
    batch: Annotated[
        int | None, Opt(min=1, help=f"Training micro-batch per card (default {BATCH}).")
    ] = None,
    recipe: Annotated[str | None, Opt(help=f"Named recipe: {', '.join(RECIPES)}.")] = None,
    optimizer: Annotated[Optimizer | None, Opt(help="Optimizer.")] = None,
    zero: Annotated[int | None, Opt(min=0, max=3, help="DeepSpeed ZeRO stage.")] = None,
    fsdp: Annotated[bool, Opt("--fsdp", help="FSDP full shard (= ZeRO-3).")] = False,
    offload: Annotated[Offload | None, Opt(help="CPU offload.")] = None,
    checkpointing: Annotated[
        bool | None, Opt("--checkpointing/--no-checkpointing", help="Activation checkpointing.")
    ] = None,
    optimizer_in_backward: Annotated[
        bool | None,
        Opt("--optimizer-in-backward/--no-optimizer-in-backward", help="Step in backward."),
    ] = None,
    chunked_loss: Annotated[
        bool | None, Opt("--chunked-loss/--no-chunked-loss", help="Chunked cross-entropy.")
    ] = None,
    fused_loss: Annotated[
        bool | None,
        Opt("--fused-loss/--no-fused-loss", help="LM head + loss fused, no logits kept."),
    ] = None,
    attention: Annotated[Attention | None, Opt(help="Attention kernel.")] = None,
    lora_rank: Annotated[int | None, Opt(min=1, help="LoRA rank.")] = None,
    lora_targets: Annotated[
        Targets | None, Opt(help="LoRA on q,v; on q,k,v,o (attn); or every linear (all).")
    ] = None,
    lora_precision: Annotated[
        AdapterFormat | None,
        Opt(help="Adapter weights and gradients (PEFT: fp32; QLoRA paper, torchtune: bf16)."),
    ] = None,
    compile_: Annotated[
        bool | None,
        Opt("--compile/--no-compile", help="torch.compile: fused kernels free activations."),
    ] = None,
    activation_offload: Annotated[
        bool | None,
        Opt(
            "--activation-offload/--no-activation-offload",
            help="Saved activations wait in CPU RAM (torchtune, Unsloth).",
        ),
    ] = None,
    packed: Annotated[
        bool | None,
        Opt("--packed/--unpacked", help="Sequences packed to --seq-len, or padded batches."),
    ] = None,
    mean_seq_len: Annotated[
        int | None, Opt(min=1, help="Unpacked: real tokens per sequence (speed counts these).")
    ] = None,
    pipeline: Annotated[
        bool | None,
        Opt(
            "--pipeline/--no-pipeline",
            help="Layers split in sequence over the cards (device_map / vLLM pipeline).",
        ),
    ] = None,
    mixed_units: Annotated[
        bool | None,
        Opt(
            "--mixed-units/--no-mixed-units",
            help="FSDP units hold adapters beside frozen weights (litgpt's LoRA): gradients "
            "kept for the frozen ones too.",
        ),
    ] = None,
    expert_loop: Annotated[
        bool | None,
        Opt(
            "--expert-loop/--no-expert-loop",
            help="Experts looped over and indexed out of fused weights (HF transformers' "
            "gpt-oss training path).",
        ),
    ] = None,
    plain_loop: Annotated[
        bool | None,
        Opt(
            "--plain-loop/--no-plain-loop",
            help="A plain PyTorch loop around PEFT and bitsandbytes, no trainer framework: "
            "a QLoRA base holds no trainer's working memory.",
        ),
    ] = None,
    mfu: Annotated[
        float | None,
        Opt(
            min=0.01,
            max=1.0,
            help="MFU per card before multi-card overhead (scaling efficiency applied on top).",
        ),
    ] = None,
    engine: Annotated[Engine | None, Opt(help=f"Serving engine (default {ENGINE.value}).")] = None,
    gpu_util: Annotated[float, Opt(min=0.05, max=1.0, help="Usable memory fraction.")] = 0.90,
    concurrency: Annotated[
        int | None, Opt(min=1, help=f"Requests in flight per replica (default {CONCURRENCY}).")
    ] = None,
    context_tokens: Annotated[
        int | None,
        Opt(min=1, help=f"Prompt + output tokens per request (default {CONTEXT_TOKENS})."),
    ] = None,
    output_tokens: Annotated[
        int | None,
        Opt(min=1, help="Output tokens per request: speeds then count the prompts' prefills."),
    ] = None,
    min_tokens_per_s: Annotated[float | None, Opt(help="Decode speed each request needs.")] = None,
    kv_precision: Annotated[Precision | None, Opt(help="KV cache format (default 16-bit).")] = None,
    max_num_seqs: Annotated[
        int | None,
        Opt(min=1, help="vLLM's max_num_seqs: requests a replica runs at once (default 256)."),
    ] = None,
    memory_margin: MarginOption = None,
    calibration: Annotated[
        list[Path] | None,
        Opt(help="Calibration file (plan probe --save): measured figures replace estimates."),
    ] = None,
    explain: Annotated[
        bool, Opt(help="Print each memory term's formula with the numbers put in.")
    ] = False,
    cards: Annotated[int | None, Opt(min=1, help="Only this card count.")] = None,
    network_gbps: Annotated[
        float | None,
        Opt(
            min=0.001,
            help="Network between nodes, Gb/s per node (8 × 400 Gb/s NICs: 3200). Without "
            "it a count past one node is timed on the hosting offer's network, or on an "
            "assumed 25 Gb/s Ethernet.",
        ),
    ] = None,
    cards_per_node: Annotated[
        int | None, Opt(min=1, help="Cards per node (default: the offer's, else 8).")
    ] = None,
    card: Annotated[str | None, Opt(help="Only this card type.")] = None,
    catalog: Annotated[str, Opt(help="Catalog for prices.")] = DEFAULT_CATALOG,
    json_path: JsonOption = None,
) -> None:
    """For every card type × count: fits or not, memory per card by term, speed, cost."""
    with input_errors(json_path):
        margin = parse_margin(memory_margin) or 0.0
        _coherent(task, precision, packed, mean_seq_len)
        _applies(
            task,
            training={
                "--seq-len": seq_len,
                "--batch": batch,
                "--recipe": recipe,
                "--optimizer": optimizer,
                "--zero": zero,
                "--fsdp": fsdp or None,
                "--offload": offload,
                "--checkpointing": checkpointing,
                "--optimizer-in-backward": optimizer_in_backward,
                "--chunked-loss": chunked_loss,
                "--fused-loss": fused_loss,
                "--compile": compile_,
                "--activation-offload": activation_offload,
                "--packed": packed,
                "--mean-seq-len": mean_seq_len,
                "--mixed-units": mixed_units,
                "--expert-loop": expert_loop,
                "--plain-loop": plain_loop,
            },
            adapters={
                "--lora-rank": lora_rank,
                "--lora-targets": lora_targets,
                "--lora-precision": lora_precision,
            },
            serving={
                "--engine": engine,
                "--concurrency": concurrency,
                "--context-tokens": context_tokens,
                "--output-tokens": output_tokens,
                "--min-tokens-per-s": min_tokens_per_s,
                "--kv-precision": kv_precision,
                "--max-num-seqs": max_num_seqs,
            },
            gradients={"--optimizer": optimizer, "--optimizer-in-backward": optimizer_in_backward},
        )
        seq_len, batch = seq_len or SEQ_LEN, batch or BATCH
        engine, concurrency = engine or ENGINE, concurrency or CONCURRENCY
        if max_num_seqs is not None and engine.value != "vllm":
            message = f"max_num_seqs is vLLM's; engine {engine.value} has no such limit"
            raise LoadError([Issue("--max-num-seqs", None, None, (), message)])
        context_tokens = context_tokens or CONTEXT_TOKENS
        if kv_precision is not None and kv_precision.value == "nf4":
            message = "nf4 is a weights format (bitsandbytes); a KV cache is 16-bit, fp8 or int8"
            raise LoadError([Issue("--kv-precision", None, None, (), message)])
        if output_tokens is not None and output_tokens >= context_tokens:
            message = (
                f"--output-tokens {output_tokens} must be less than --context-tokens "
                f"{context_tokens} (prompt + output)"
            )
            raise LoadError([Issue("--output-tokens", None, None, (), message)])
        card_model = load_model(model, Path.cwd(), lambda _p, m: Issue(model, None, None, (), m))
        loaded, card_specs = load_catalog(catalog)
        entries = tuple(e for path in calibration or [] for e in load_calibration(path))
        card_specs = calibrated_cards(card_specs, entries, ", ".join(map(str, calibration or [])))
        if recipe is not None and recipe not in RECIPES:
            raise LoadError(
                [
                    Issue(
                        "--recipe",
                        None,
                        None,
                        (),
                        f"unknown recipe {recipe!r}{did_you_mean(recipe, RECIPES)}",
                    )
                ]
            )
        if card is not None and card not in card_specs:
            raise LoadError(
                [
                    Issue(
                        "--card",
                        None,
                        None,
                        (),
                        f"unknown card {card!r}{did_you_mean(card, card_specs)}",
                    )
                ]
            )
    own = TrainKnobs(
        optimizer=optimizer.value if optimizer else None,
        zero=3 if fsdp else zero,
        offload=offload.value if offload else None,
        checkpointing=checkpointing,
        optimizer_in_backward=optimizer_in_backward,
        chunked_loss=chunked_loss,
        fused_loss=fused_loss,
        attention=attention.value if attention else None,
        lora_rank=lora_rank,
        lora_targets=lora_targets.value if lora_targets else None,
        lora_precision=lora_precision.value if lora_precision else None,
        mfu=mfu,
        compile=compile_,
        activation_offload=activation_offload,
        packed=packed,
        mean_seq_len=mean_seq_len,
        pipeline=pipeline,
        mixed_units=mixed_units,
        expert_loop=expert_loop,
        plain_loop=plain_loop,
    )
    method = task.value if task.value != "serve" else "full"
    weights = precision.value if precision else ("nf4" if task is Task.qlora else "bf16")
    query = FitQuery(
        model=card_model,
        task=task.value,
        precision=weights,
        knobs=recipe_knobs(method, recipe, own),
        seq_len=seq_len,
        micro_batch=batch,
        serve=ServeSetup(
            precision=weights,
            kv_precision=kv_precision.value if kv_precision else None,
            engine=engine.value,
            usable_fraction=gpu_util,
            context_tokens=context_tokens,
            output_tokens=output_tokens,
            concurrency=concurrency,
            max_seqs=max_num_seqs or ServeSetup.max_seqs,
            pipeline=bool(pipeline),
            margin=margin,
        ),
        min_tokens_per_s=min_tokens_per_s,
        counts=(cards,) if cards else None,
        card=card,
        network_gbps=network_gbps,
        cards_per_node=cards_per_node,
        offsets_gib={
            c: memory_offset_gib(entries, card_model.name, c, task.value) for c in card_specs
        },
    )
    rows = fit_rows(query, card_specs, list(loaded.offers))
    console = human(json_path)
    everywhere = _everywhere(rows)
    console.print(_table(query, [r for r in rows if r["cards"] not in everywhere], loaded.currency))
    for count, reason in everywhere.items():
        console.print(f"  {count} cards, on every card: {reason}", markup=False)
    _notes(console, rows)
    _basis(console, rows)
    _bands(console, rows)
    if card_model.moe is not None and task.value != "serve":
        console.print(f"  note: {_moe_note(task.value)}", markup=False)
    serving = task.value == "serve"
    long = card_model.past_context(
        context_tokens if serving else seq_len, "a request" if serving else "a sequence"
    )
    if long is not None:
        console.print(f"  note: {long}", markup=False)
    for line in measured_lines(entries, card_model.name, task.value):
        console.print(f"  measured: {line}", markup=False)
    if explain:
        _explain(console, query, rows)
    write_json(rows, json_path)


def _coherent(
    task: Task, precision: Precision | None, packed: bool | None, mean_seq_len: int | None
) -> None:
    """Flags that contradict each other are bad input, not silently dropped."""
    problems = []
    if task is Task.qlora and precision is not None and precision.value not in ("nf4", "int4"):
        problems.append(
            (
                "--precision",
                f"a QLoRA base is nf4 (bitsandbytes) or int4 (GPTQ/AWQ), not {precision.value}",
            )
        )
    if task is Task.full and precision is not None and precision.value in ("int8", "int4", "nf4"):
        problems.append(
            (
                "--precision",
                f"full training updates every weight, so not in {precision.value} (a quantised "
                "base is trained through adapters: --task lora or qlora)",
            )
        )
    if mean_seq_len is not None and packed is not False:
        problems.append(("--mean-seq-len", "applies to unpacked batches: add --unpacked"))
    if problems:
        raise LoadError([Issue(flag, None, None, (), text) for flag, text in problems])


def _applies(
    task: Task,
    training: dict[str, object],
    adapters: dict[str, object],
    serving: dict[str, object],
    gradients: dict[str, object],
) -> None:
    """Flags given that the task does not use are bad input (each named), not ignored:
    training flags with --task serve, adapter flags but with lora or qlora, serving flags
    but with serve, optimizer flags with eval (no gradients)."""
    problems = []
    wrong: list[tuple[dict[str, object], bool, str]] = [
        (training, task is Task.serve, "applies to training, not --task serve"),
        (gradients, task is Task.eval, "applies to training with an optimizer, not --task eval"),
        (adapters, task not in (Task.lora, Task.qlora), "applies to --task lora or qlora"),
        (serving, task is not Task.serve, "applies to --task serve"),
    ]
    for flags, refused, why in wrong:
        if refused:
            problems += [(flag, why) for flag, value in flags.items() if value is not None]
    if problems:
        raise LoadError([Issue(flag, None, None, (), text) for flag, text in problems])


def _everywhere(rows: list[dict[str, Any]]) -> dict[int, str]:
    """Counts no card can run, for one reason that does not depend on the card (the model's
    heads do not split over them): said once under the table, not in a row per card."""
    reasons: dict[int, set[str]] = {}
    for r in rows:
        reasons.setdefault(r["cards"], set()).add(r.get("reason", ""))
    return {
        count: next(iter(found))
        for count, found in reasons.items()
        if len(found) == 1 and "" not in found and len({r["card"] for r in rows}) > 1
    }


def _table(query: FitQuery, rows: list[dict[str, Any]], currency: str) -> Table:
    serve = query.task == "serve"
    title = f"{query.model.name} {query.task} {query.precision}: " + (
        f"concurrency {query.serve.concurrency} × {query.serve.context_tokens} tokens"
        if serve
        else f"micro-batch {query.micro_batch} × {query.seq_len} tokens"
    )
    table = Table(title=title, title_justify="left")
    columns = ["card", "n", "fits", "GiB/card", "usable", "headroom", "main term"]
    columns += (
        [
            "max conc",
            f"tok/s/req @{query.serve.concurrency}",
            f"tok/s/replica @{query.serve.concurrency}",
            "offer",
            f"{currency}/h",
        ]
        if serve
        else ["tok/s", "h/Btok", "offer", f"{currency}/Btok"]
    )
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("card", "offer", "main term") else "right"
        )
    for r in rows:
        if "reason" in r:
            table.add_row(
                r["card"],
                str(r["cards"]),
                "[red]no[/]",
                *["-"] * 3,
                r["reason"],
                *["-"] * (len(columns) - 7),
            )
            continue
        terms = r["breakdown_gib"]
        main = max(terms, key=terms.get)
        low = "~" if r["low_confidence"] else ""
        band = r.get("memory_per_card_gib_band")
        cells = [
            r["card"],
            str(r["cards"]),
            VERDICTS[r.get("verdict", "fits" if r["fits"] else "no")],
            f"{r['memory_per_card_gib']:.1f}{low}" + (f" ±{band['fraction']:.0%}" if band else ""),
            f"{r['usable_gib']:.1f}",
            f"{r['headroom_gib']:.1f}",
            f"{main} {terms[main]:.1f}",
        ]
        if serve:
            most = r["max_concurrency_per_replica"]
            # a replica that holds fewer requests than asked runs at what it holds: said so;
            # one that holds none has no speed to show
            at = f" @{most}" if 0 < most < query.serve.concurrency else ""
            cells += [
                str(most),
                _banded(r, "tokens_per_s_per_request", "{:.0f}") + at if most else "-",
                _banded(r, "tokens_per_s_per_replica", "{:.0f}") + at if most else "-",
                r.get("offer", "-"),
                f"{r['hourly_price']:,.2f}" if "hourly_price" in r else "-",
            ]
        else:
            cells += [
                _banded(r, "tokens_per_s", "{:,.0f}"),
                f"{r['hours_per_billion_tokens']:,.1f}",
                r.get("offer", "-"),
                f"{r['cost']:,}" if "cost" in r else "-",
            ]
        table.add_row(*cells)
    if any(r.get("memory_margin") for r in rows):
        table.caption = (
            "headroom: usable less the memory planned under the memory margin (GiB/card is the "
            "estimate; a negative margin shrinks its estimated terms, never the exact ones)"
        )
        table.caption_justify = "left"
    return table


def _banded(row: dict[str, Any], name: str, form: str) -> str:
    band = row.get(f"{name}_band")
    return form.format(row[name]) + (f" ±{band['fraction']:.0%}" if band else "")


# What each figure of the table is computed from (its formula's inputs are the assumptions
# listed above the basis), keyed by the row field that carries its band.
BASIS = {
    "memory_per_card_gib": (
        "GiB/card",
        "the sum of the memory terms (weights, KV cache or activations, gradients and "
        "optimizer states, workspace); each term's formula: --explain",
    ),
    "tokens_per_s": (
        "tok/s",
        "cards computing (1 with --pipeline) × the card's dense peak × MFU ÷ the model "
        "FLOPs per token (6P or 4P + attention); MFU = the compute's share of the peak × "
        "the scaling efficiency over the cards and the network between nodes, as the "
        "tokens/s shown imply it per card computing",
    ),
    "tokens_per_s_per_request": (
        "tok/s/req",
        "1 ÷ the decode step time at the concurrency asked: the longer of the bytes a step "
        "reads (weights, or the active experts', plus the batch's KV cache) ÷ the card's "
        "bandwidth × the engine's efficiency, and the step's FLOPs ÷ the card's peak",
    ),
    "tokens_per_s_per_replica": (
        "tok/s/replica",
        "the concurrency asked ÷ the same step time (every request in flight gains a token "
        "per step), at most the requests the KV cache holds",
    ),
}


def _basis(console: Any, rows: list[dict[str, Any]]) -> None:
    """Each figure's basis and its band: the published figures it was checked against."""
    estimated = [r for r in rows if "reason" not in r]
    if not estimated:
        return
    console.print("[bold]Basis[/] of each figure, and its band:")
    for name, (column, basis) in BASIS.items():
        if name not in estimated[0]:
            continue
        band = next((r[f"{name}_band"] for r in estimated if r.get(f"{name}_band")), None)
        evidence = (
            f"±{band['fraction']:.0%}: 90th percentile of |error| over {band['figures']} "
            f"published {band['kind']} figures no constant was tuned on"
            + (
                " (each against what it counts: allocated, reserved or the whole)"
                if band["kind"].startswith("memory")
                else ""
            )
            + f"; the truth has lain up to {band['lower_fraction']:.0%} below"
            if band
            else f"no band: fewer than {MIN_CASES} published figures of this kind"
        )
        console.print(f"  • {column}: {basis}. {evidence}.", markup=False)


def _notes(console: Any, rows: list[dict[str, Any]]) -> None:
    """Assumptions every row shares, once; row-specific ones only where low confidence
    (all are in --json)."""
    estimated = [r for r in rows if "assumptions" in r]
    shared = [
        t
        for t in (estimated[0]["assumptions"] if estimated else [])
        if all(t in r["assumptions"] for r in estimated)
    ]
    specific = {t for r in estimated for t in r["assumptions"]} - set(shared)
    if shared:
        console.print("[bold]Assumptions[/] (override any with a flag):")
        for text in shared:
            console.print(f"  • {text}", markup=False)
    low = sorted({t for r in estimated for t in r["low_confidence"]})
    if low:
        console.print("[bold]~ rows rest on low-confidence card figures:[/]")
        for text in low:
            console.print(f"  • {text}", markup=False)
    if specific:
        console.print(
            f"  ({len(specific)} more assumptions differ by row — KV and weights per "
            "card, scaling efficiency, sharding: see --json)"
        )
    disagreements = [(r, r["seed_rule"]) for r in rows if "seed_rule" in r]
    if not any("reason" not in r for r in rows):
        console.print("[bold red]No card and count here can run it;[/] see the reasons above.")
    if disagreements:
        console.print("[bold]Where gpuplan disagrees with the seeds' rule of thumb:[/]")
        for r, text in disagreements:
            console.print(f"  • {r['card']} × {r['cards']}: {text}", markup=False)


def _moe_note(method: str) -> str:
    """How much published evidence a mixture-of-experts training estimate rests on."""
    kind = f"memory:{method}:moe"
    n = BANDS.get(kind, (0.0, 0))[1]
    if n >= MIN_CASES:
        return f"mixture of experts: the band is {kind}'s own, from {n} evaluation figures"
    return (
        f"mixture of experts: {n} evaluation figure{'s' if n != 1 else ''} of {kind} (fewer "
        f"than {MIN_CASES}): the band shown is the dense method's; the expert terms rest on "
        "few published peaks"
    )


def _bands(console: Any, rows: list[dict[str, Any]]) -> None:
    """What a marginal verdict means (where the ± comes from: `_basis`)."""
    band = next(
        (r["memory_per_card_gib_band"] for r in rows if r.get("memory_per_card_gib_band")), None
    )
    if band is None:
        return
    console.print(
        "'marginal': it fits, but would not if the estimate were its band too low; or it "
        "overfills the card, but its low end fits (the estimated terms shrunk by the lower "
        "band, the exact ones kept whole): estimates of this kind have run up to "
        f"{band['lower_fraction']:.0%} high."
        + (
            ""
            if any(r.get("memory_margin") for r in rows)
            else " Plan with --memory-margin band to require the band, or -band to plan at "
            "its low end."
        ),
        markup=False,
    )


def _explain(console: Any, query: FitQuery, rows: list[dict[str, Any]]) -> None:
    """Each memory term's formula with the numbers put in, once per distinct breakdown."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if "formulas" in r:
            groups.setdefault("\n".join(r["formulas"].values()), []).append(r)
    for same in groups.values():
        r = same[0]
        counts = ", ".join(sorted({str(s["cards"]) for s in same}, key=int))
        cards = ", ".join(sorted({s["card"] for s in same}))
        console.print(f"[bold]Memory per card on {counts} card(s)[/] of {cards}:")
        for term, formula in r["formulas"].items():
            console.print(f"  {term:<12} {formula}", markup=False)
        console.print(f"  {'total':<12} {r['memory_per_card_gib']:.2f} GiB", markup=False)
        console.print(
            f"  {'allocated':<12} {r['allocated_per_card_gib']:.2f} GiB: the total less "
            "overhead (what no tensor holds)",
            markup=False,
        )
        if r["cached_per_card_gib"]:
            console.print(
                f"  {'cached':<12} {r['cached_per_card_gib']:.2f} GiB: freed blocks the "
                "allocator keeps while the card has room and returns under pressure (not "
                f"in the total; nvidia-smi would show about "
                f"{r['memory_per_card_gib'] + r['cached_per_card_gib']:.2f} GiB)",
                markup=False,
            )
    console.print(
        "To check a term, run the same recipe for a step and compare "
        "torch.cuda.max_memory_allocated() / 2**30 with 'allocated' above; "
        "torch.cuda.max_memory_reserved() also holds the cached blocks, nvidia-smi the CUDA "
        "context too.",
        markup=False,
    )
