"""`plan probe memory`: run the workload for real and read its peak, beside the estimate.

The model is built in-process from a model card's shape with random weights (nothing is
downloaded), or loaded from local weights; `layers` shrinks it to a few layers of the same
shape (a tiny model a CPU can run), and the estimate is made for the same shrunk card.
On CUDA the peak is torch.cuda.max_memory_allocated (and reserved); on the CPU it is the
high-water mark of the tensors PyTorch's profiler saw allocated, which has no CUDA context
or allocator cache: indicative, for checking the code path and the terms, not a card.

QLoRA (CUDA only, bitsandbytes) quantises every linear layer but the LM head to NF4 with
double quantisation and bf16 compute, as the QLoRA recipe does; embeddings, norms and the
LM head stay in the model's dtype and the adapters train in bf16 (the recipe's).
On CUDA each step is timed: tokens per second of the steps after the first (a warm-up), and
for serving the generated tokens per second of the whole generate call, prefill included,
after an untimed two-token warm-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from planner.domain.catalog import CardType
from planner.domain.model_card import ModelCard
from planner.domain.recipes import TrainKnobs, recipe_knobs
from planner.estimate.core import GIB, MemoryEstimate
from planner.estimate.memory import ServeSetup, TrainSetup, serve_memory, train_memory

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
TARGETS = {
    "qv": ["q_proj", "v_proj"],
    "attn": ["q_proj", "k_proj", "v_proj", "o_proj"],
    "all": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
}


class ProbeError(Exception):
    """The probe cannot run this (missing package, unsupported task): bad input, exit 1."""


class NoDevice(ProbeError):
    """The accelerator asked for is not on this machine: exit 3."""


@dataclass(frozen=True)
class ProbeShape:
    task: str  # serve | full | lora | qlora
    precision: str = "bf16"
    batch: int = 1
    seq_len: int = 512
    new_tokens: int = 16  # serve: tokens generated
    steps: int = 2  # training: optimizer steps
    lora_rank: int = 16
    lora_targets: str = "attn"
    checkpointing: bool = False
    layers: int | None = None  # keep only this many layers (same shape)


@dataclass(frozen=True)
class ProbeResult:
    device: str
    model: ModelCard  # as built (shrunk when `layers` is set)
    weights_gib: float  # measured after load (trainable adapters included for LoRA)
    peak_gib: float  # measured peak allocated during the run
    reserved_gib: float | None  # CUDA only: what the allocator held
    estimate: MemoryEstimate
    note: str
    batch: int = 1
    # CUDA only: training tokens/s after the warm-up step; serving: generated tokens/s
    tokens_per_s: float | None = None

    @property
    def estimated_allocated_gib(self) -> float:
        """The estimate of what max_memory_allocated counts (MemoryEstimate.allocated)."""
        return self.estimate.allocated / GIB


def shrink(model: ModelCard, layers: int | None) -> ModelCard:
    """The same shape with `layers` layers; params recomputed from the architecture."""
    if layers is None or layers >= model.layers:
        return model
    small = model.model_copy(update={"layers": layers, "name": f"{model.name}-{layers}l"})
    params = small.architecture_params()
    update: dict[str, Any] = {"params": params}
    if small.moe is not None:
        scale = params / model.params
        update["moe"] = small.moe.model_copy(
            update={"active_params": max(1, int(small.moe.active_params * scale))}
        )
    return small.model_copy(update=update)


def hf_config(model: ModelCard) -> Any:
    """A transformers config of the card's shape (Llama; Qwen2 with q,k,v biases; Mixtral)."""
    transformers = _module("transformers")

    common = dict(
        vocab_size=model.vocab,
        hidden_size=model.hidden,
        num_hidden_layers=model.layers,
        num_attention_heads=model.heads,
        num_key_value_heads=model.kv_heads,
        head_dim=model.dim_per_head,
        tie_word_embeddings=model.tied_embeddings,
        max_position_embeddings=min(model.max_context or 4096, 32768),
    )
    if model.moe is not None:
        return transformers.MixtralConfig(
            intermediate_size=model.moe.expert_intermediate,
            num_local_experts=model.moe.experts,
            num_experts_per_tok=model.moe.experts_per_token,
            **common,
        )
    if model.qkv_bias:
        return transformers.Qwen2Config(intermediate_size=model.intermediate, **common)
    return transformers.LlamaConfig(intermediate_size=model.intermediate, **common)


def estimate_for(model: ModelCard, card: CardType, shape: ProbeShape) -> MemoryEstimate:
    """gpuplan's estimate of the same run: HF generate, or a plain PyTorch training loop
    (AdamW on the parameters' own dtype, fp32 logits in the loss, no compile)."""
    if shape.task == "serve":
        setup = ServeSetup(
            precision=shape.precision,
            engine="hf",
            concurrency=shape.batch,
            context_tokens=shape.seq_len + shape.new_tokens,
        )
        return serve_memory(model, card, 1, setup)[0]
    return _train_estimate(model, card, shape)


def _train_estimate(model: ModelCard, card: CardType, shape: ProbeShape) -> MemoryEstimate:
    # torch's AdamW keeps m and v in each parameter's dtype: 16-bit for a full fine-tune of
    # 16-bit weights, fp32 for LoRA adapters (which the probe trains in fp32)
    full16 = shape.task == "full" and shape.precision != "fp32"
    own = TrainKnobs(
        optimizer="adamw-bf16" if full16 else "adamw",
        checkpointing=shape.checkpointing,
        chunked_loss=False,
        lora_rank=shape.lora_rank,
        lora_targets=shape.lora_targets,
        plain_loop=True,  # the probe's own loop: no trainer framework around it
    )
    knobs = recipe_knobs(shape.task, None, own)
    setup = TrainSetup(shape.task, knobs, shape.precision, shape.seq_len, shape.batch)
    return train_memory(model, card, 1, setup)


def run(
    model: ModelCard,
    card: CardType,
    shape: ProbeShape,
    device: str = "auto",
    weights: str | None = None,
    on_step: Callable[[str], None] | None = None,
    batches: tuple[int, ...] = (),
) -> list[ProbeResult]:
    """Build (or load) the model on `device` once, then run the task and measure at each
    batch size (default: the shape's)."""
    try:
        torch = _module("torch")
        transformers = _module("transformers")
    except ImportError:
        raise ProbeError(
            "the memory probe needs PyTorch and transformers: pip install 'gpuplan[probe]'"
        ) from None
    if shape.task not in ("serve", "full", "lora", "qlora"):
        raise ProbeError(f"--task {shape.task}: the probe runs serve, full, lora and qlora")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise NoDevice("--device cuda: PyTorch sees no CUDA device here")
    if shape.task == "qlora":
        if device != "cuda":
            raise NoDevice("--task qlora: bitsandbytes' 4-bit kernels need a CUDA device")
        if shape.precision != "bf16":
            raise ProbeError("--task qlora: the QLoRA recipe computes in bf16 (--precision bf16)")
        try:
            _module("bitsandbytes")
        except ImportError:
            raise ProbeError("a QLoRA probe needs bitsandbytes: pip install bitsandbytes") from None
    built = shrink(model, shape.layers)
    dtype = getattr(torch, DTYPES[shape.precision])
    say = on_step or (lambda _text: None)
    if device == "cpu" and shape.precision != "fp32" and shape.task != "serve":
        say(
            f"note: a {shape.precision} backward pass on a CPU without 16-bit instructions "
            "can take minutes per layer; --precision fp32 measures the same terms quickly"
        )
    meter = _CudaMeter() if device == "cuda" else _CpuMeter()
    torch.manual_seed(0)
    say("building the model" if weights is None else f"loading {weights}")
    if weights is None:  # built where it runs: a card initialises 8B parameters in seconds
        with torch.device(device):
            net = transformers.AutoModelForCausalLM.from_config(hf_config(built), dtype=dtype)
    else:
        net = transformers.AutoModelForCausalLM.from_pretrained(weights, dtype=dtype)
    net = net.to(device)
    if shape.task == "qlora":
        if built.moe is not None:
            _unfuse_experts(net)
        say("quantising the linear layers to NF4")
        _quantise(net)
    if shape.task in ("lora", "qlora"):
        net = _with_lora(net, shape)
    weights_gib = _tensor_bytes(net) / GIB
    note = (
        "CUDA max_memory_allocated"
        if device == "cuda"
        else "CPU: profiler high-water mark of tensors (no CUDA context, no allocator cache)"
    )
    results = []
    for batch in batches or (shape.batch,):
        at = replace(shape, batch=batch)
        tokens = torch.randint(0, built.vocab, (batch, at.seq_len), device=device)
        if at.task == "serve" and device == "cuda":  # kernels chosen, caches made: untimed
            with torch.no_grad():
                net.generate(tokens[:, :8], max_new_tokens=2, do_sample=False, pad_token_id=0)
        meter.reset()
        with meter.watch():
            if at.task == "serve":
                say(f"generating {at.new_tokens} tokens for {batch} prompt(s)")
                started = meter.clock()
                with torch.no_grad():
                    net.generate(
                        tokens,
                        attention_mask=torch.ones_like(tokens),
                        max_new_tokens=at.new_tokens,
                        min_new_tokens=at.new_tokens,
                        do_sample=False,
                        pad_token_id=0,
                    )
                elapsed = meter.clock() - started
                speed = batch * at.new_tokens / elapsed if device == "cuda" else None
            else:
                times = _train(net, tokens, at, say, meter.clock)
                timed = times[1:]  # the first step is a warm-up (kernel choice, allocator)
                speed = (
                    batch * at.seq_len * len(timed) / sum(timed)
                    if device == "cuda" and timed
                    else None
                )
        peak = max(meter.peak(), 0) / GIB + (weights_gib if device == "cpu" else 0.0)
        results.append(
            ProbeResult(
                device,
                built,
                weights_gib,
                peak,
                meter.reserved(),
                estimate_for(built, card, at),
                note,
                batch,
                speed,
            )
        )
    return results


def _module(name: str) -> Any:
    """An optional dependency, typed loosely (its stubs vary by version)."""
    import importlib

    return importlib.import_module(name)


def _with_lora(net: Any, shape: ProbeShape) -> Any:
    try:
        peft = _module("peft")
    except ImportError:
        raise ProbeError("a LoRA probe needs peft: pip install 'gpuplan[probe]'") from None
    config = peft.LoraConfig(
        r=shape.lora_rank,
        lora_alpha=2 * shape.lora_rank,
        target_modules=TARGETS[shape.lora_targets],
    )
    model = peft.get_peft_model(net, config)
    # adapters train in fp32 for LoRA, in bf16 for QLoRA (the recipes the estimate assumes)
    for p in model.parameters():
        if p.requires_grad:
            p.data = p.data.float() if shape.task == "lora" else p.data.bfloat16()
    return model


def _unfuse_experts(net: Any) -> None:
    """Each fused expert tensor (transformers 5 keeps a layer's experts as two 3D tensors)
    as three linear layers per expert, run by a loop over the experts the tokens were routed
    to: the layout of transformers 4's mixture-of-experts blocks, whose linear layers
    bitsandbytes quantises like any other (the 3D tensors it would leave in 16 bits)."""
    import torch

    class Expert(torch.nn.Module):  # type: ignore[misc, unused-ignore]  # untyped without torch
        def __init__(self, gate_up: Any, down: Any, act: Any) -> None:
            super().__init__()
            f, h = gate_up.shape[0] // 2, gate_up.shape[1]
            kw = {"bias": False, "device": gate_up.device, "dtype": gate_up.dtype}
            self.gate_proj = torch.nn.Linear(h, f, **kw)
            self.up_proj = torch.nn.Linear(h, f, **kw)
            self.down_proj = torch.nn.Linear(f, h, **kw)
            self.gate_proj.weight.data.copy_(gate_up[:f])
            self.up_proj.weight.data.copy_(gate_up[f:])
            self.down_proj.weight.data.copy_(down)
            self.act = act

        def forward(self, x: Any) -> Any:
            return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))

    class LoopedExperts(torch.nn.Module):  # type: ignore[misc, unused-ignore]
        def __init__(self, fused: Any) -> None:
            super().__init__()
            self.experts = torch.nn.ModuleList(
                Expert(fused.gate_up_proj.data[e], fused.down_proj.data[e], fused.act_fn)
                for e in range(fused.num_experts)
            )

        def forward(self, hidden: Any, top_k_index: Any, top_k_weights: Any) -> Any:
            out = torch.zeros_like(hidden)
            for e in top_k_index.unique().tolist():
                token, slot = torch.where(top_k_index == e)
                part = self.experts[e](hidden[token]) * top_k_weights[token, slot, None]
                out.index_add_(0, token, part.to(out.dtype))
            return out

    # hold the blocks only, so that each layer's fused tensors go as soon as it is replaced
    blocks = [m for m in net.modules() if hasattr(getattr(m, "experts", None), "gate_up_proj")]
    for block in blocks:
        block.experts = LoopedExperts(block.experts)
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _quantise(net: Any) -> None:
    """Every linear layer but the LM head to bitsandbytes NF4 (double quantisation, bf16
    compute), on the CUDA device the model is on: the QLoRA recipe's base."""
    import torch

    bnb = _module("bitsandbytes")
    # hold the parents only, so that each 16-bit layer goes as soon as it is replaced
    parents = [
        m for m in net.modules() if any(isinstance(c, torch.nn.Linear) for c in m.children())
    ]
    for parent in parents:
        for name, child in list(parent.named_children()):
            if not isinstance(child, torch.nn.Linear) or name == "lm_head":
                continue
            layer = bnb.nn.Linear4bit(
                child.in_features,
                child.out_features,
                bias=child.bias is not None,
                compute_dtype=torch.bfloat16,
                compress_statistics=True,
                quant_type="nf4",
                device="meta",
            )
            weight = bnb.nn.Params4bit(
                child.weight.data, requires_grad=False, compress_statistics=True, quant_type="nf4"
            )
            layer.weight = weight.to(child.weight.device)  # quantises on the way
            if child.bias is not None:
                layer.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
            setattr(parent, name, layer)
    torch.cuda.empty_cache()


def _train(
    net: Any,
    tokens: Any,
    shape: ProbeShape,
    say: Callable[[str], None],
    clock: Callable[[], float],
) -> list[float]:
    """Optimizer steps; the seconds each took."""
    import torch

    if shape.checkpointing:
        net.gradient_checkpointing_enable()
        if hasattr(net, "enable_input_require_grads"):
            net.enable_input_require_grads()
    net.train()
    trainable = [p for p in net.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-5, foreach=False)
    times = []
    for step in range(shape.steps):
        say(f"optimizer step {step + 1} of {shape.steps}")
        started = clock()
        loss = net(input_ids=tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(clock() - started)
    return times


def _tensor_bytes(net: Any) -> int:
    return sum(t.numel() * t.element_size() for t in [*net.parameters(), *net.buffers()])


class _CudaMeter:
    def __init__(self) -> None:
        import torch

        self.torch = torch

    def reset(self) -> None:
        self.torch.cuda.synchronize()
        self.torch.cuda.reset_peak_memory_stats()

    def watch(self) -> Any:
        import contextlib

        return contextlib.nullcontext()

    def peak(self) -> float:
        self.torch.cuda.synchronize()
        return float(self.torch.cuda.max_memory_allocated())

    def reserved(self) -> float | None:
        return float(self.torch.cuda.max_memory_reserved()) / GIB

    def clock(self) -> float:
        """Seconds, after the card has finished what it was given."""
        import time

        self.torch.cuda.synchronize()
        return time.perf_counter()


class _CpuMeter:
    """High-water mark of tensor memory allocated inside `watch()` (PyTorch's profiler)."""

    def __init__(self) -> None:
        self._peak = 0.0

    def reset(self) -> None:
        self._peak = 0.0

    def watch(self) -> Any:
        import contextlib

        from torch.profiler import ProfilerActivity, profile

        meter = self

        @contextlib.contextmanager
        def watching() -> Any:
            with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
                yield
            live = peak = 0
            for event in sorted(prof.events(), key=lambda e: e.time_range.start):
                live += event.self_cpu_memory_usage
                peak = max(peak, live)
            meter._peak = float(peak)

        return watching()

    def peak(self) -> float:
        return self._peak

    def reserved(self) -> float | None:
        return None

    def clock(self) -> float:
        import time

        return time.perf_counter()


def summary(result: ProbeResult) -> dict[str, Any]:
    e = result.estimate
    return {
        "device": result.device,
        "batch": result.batch,
        "model": result.model.name,
        "params": result.model.params,
        "measured": {
            "weights_gib": round(result.weights_gib, 3),
            "peak_allocated_gib": round(result.peak_gib, 3),
            "peak_reserved_gib": None
            if result.reserved_gib is None
            else round(result.reserved_gib, 3),
            "tokens_per_s": None if result.tokens_per_s is None else round(result.tokens_per_s, 1),
        },
        "estimate": {
            "weights_gib": round(e.breakdown["weights"] / GIB, 3),
            "allocated_gib": round(result.estimated_allocated_gib, 3),
            "total_gib": round(e.total / GIB, 3),
            "breakdown_gib": {k: round(v / GIB, 3) for k, v in e.breakdown.items()},
        },
        "error": round((result.estimated_allocated_gib - result.peak_gib) / result.peak_gib, 4)
        if result.peak_gib
        else None,
        "note": result.note,
    }


def with_layers(shape: ProbeShape, layers: int | None) -> ProbeShape:
    return replace(shape, layers=layers)
