"""LLM architecture cards: the facts memory and speed estimates need, from config.json."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, ValidationError, model_validator

from planner.domain.catalog import Frozen
from planner.domain.values import Slug

PositiveInt = Annotated[int, Field(ge=1)]


def _whole(value: Any) -> Any:
    """Parameter counts are often written 6.74e9: accept a float that is a whole number."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class MoE(Frozen):
    """Mixture of experts: every expert sits in memory, only `experts_per_token` run."""

    experts: PositiveInt
    experts_per_token: PositiveInt
    expert_intermediate: PositiveInt  # FFN width of one expert
    shared_experts: Annotated[int, Field(ge=0)] = 0
    active_params: PositiveInt  # parameters used per token

    @model_validator(mode="before")
    @classmethod
    def _counts(cls, data: Any) -> Any:
        if isinstance(data, dict) and "active_params" in data:
            data = {**data, "active_params": _whole(data["active_params"])}
        return data

    @model_validator(mode="after")
    def _top_k(self) -> MoE:
        if self.experts_per_token > self.experts:
            raise ValueError(
                f"experts_per_token ({self.experts_per_token}) exceeds experts ({self.experts})"
            )
        return self


class ModelCard(Frozen):
    """A decoder-only transformer (Llama/Qwen/Mistral family), dense or MoE."""

    name: Slug
    hf_id: str = ""
    source: str = ""
    params: PositiveInt  # all parameters, embeddings included
    layers: PositiveInt
    hidden: PositiveInt
    intermediate: PositiveInt  # dense FFN width (MoE models: see moe.expert_intermediate)
    heads: PositiveInt
    kv_heads: PositiveInt
    head_dim: PositiveInt | None = None  # default hidden ÷ heads
    vocab: PositiveInt
    tied_embeddings: bool = False
    qkv_bias: bool = False
    max_context: PositiveInt | None = None
    moe: MoE | None = None

    @model_validator(mode="before")
    @classmethod
    def _counts(cls, data: Any) -> Any:
        if isinstance(data, dict) and "params" in data:
            data = {**data, "params": _whole(data["params"])}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ModelCard:
        if self.heads % self.kv_heads:
            raise ValueError(
                f"heads ({self.heads}) must be a multiple of kv_heads ({self.kv_heads})"
            )
        if self.head_dim is None and self.hidden % self.heads:
            raise ValueError(
                f"hidden ({self.hidden}) is not a multiple of heads ({self.heads}); give head_dim"
            )
        if self.moe is not None and self.moe.active_params > self.params:
            raise ValueError("moe.active_params exceeds params")
        return self

    def past_context(self, tokens: int, what: str) -> str | None:
        """A warning where `tokens` (`what`: a sequence or a request) pass the model's
        trained context (its max_position_embeddings); None within it or where unknown."""
        if self.max_context is None or tokens <= self.max_context:
            return None
        return (
            f"{what} of {tokens:,} tokens is past {self.name}'s context of "
            f"{self.max_context:,} (max_position_embeddings): at that length its positions "
            "must be extended (RoPE scaling or a long-context variant), which the estimates "
            "assume works"
        )

    @property
    def dim_per_head(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def active_params(self) -> int:
        """Parameters used per token: all of them for a dense model."""
        return self.moe.active_params if self.moe else self.params

    @property
    def embedding_params(self) -> int:
        """Input embedding and LM head (once if tied); they stay 16-bit in quantised models."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    def architecture_params(self) -> int:
        """Parameter count implied by the architecture (a cross-check of `params`)."""
        q = self.heads * self.dim_per_head
        kv = self.kv_heads * self.dim_per_head
        attention = self.hidden * q + 2 * self.hidden * kv + q * self.hidden
        if self.qkv_bias:
            attention += q + 2 * kv
        if self.moe is None:
            ffn = 3 * self.hidden * self.intermediate
        else:
            experts = self.moe.experts + self.moe.shared_experts
            ffn = experts * 3 * self.hidden * self.moe.expert_intermediate
            ffn += self.hidden * self.moe.experts  # router
        norms = 2 * self.hidden
        return self.layers * (attention + ffn + norms) + self.embedding_params + self.hidden


# Hugging Face config.json keys, in the order they are tried.
_HF_KEYS: dict[str, tuple[str, ...]] = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "intermediate": ("intermediate_size", "ffn_dim", "n_inner"),
    "heads": ("num_attention_heads", "n_head"),
    "vocab": ("vocab_size",),
}


def card_from_hf_config(config: dict[str, Any], name: str, source: str) -> ModelCard:
    """A model card from a Hugging Face config.json; the parameter count is computed.

    Assumes a Llama-style block (SwiGLU FFN, RMSNorm); `tie_word_embeddings` defaults to false
    (Llama, Mistral, Qwen2 defaults). Raises ValueError naming a missing key.
    """
    fields: dict[str, Any] = {"name": name, "source": source}
    for field, keys in _HF_KEYS.items():
        found = next((config[k] for k in keys if k in config), None)
        if found is None:
            raise ValueError(f"config.json has no {' / '.join(keys)}")
        fields[field] = found
    fields["kv_heads"] = config.get("num_key_value_heads") or fields["heads"]
    if "num_key_value_heads" not in config:
        fields["source"] += " (no num_key_value_heads: full multi-head attention assumed)"
    fields["head_dim"] = config.get("head_dim")
    fields["tied_embeddings"] = bool(config.get("tie_word_embeddings", False))
    fields["qkv_bias"] = bool(config.get("attention_bias", config.get("model_type") == "qwen2"))
    fields["max_context"] = config.get("max_position_embeddings")
    fields["hf_id"] = str(config.get("_name_or_path", ""))
    experts = config.get("num_local_experts") or config.get("num_experts")
    if experts:
        fields["moe"] = {
            "experts": experts,
            "experts_per_token": config.get("num_experts_per_tok", 2),
            "expert_intermediate": config.get("moe_intermediate_size", fields["intermediate"]),
            "shared_experts": config.get("n_shared_experts", 0) or 0,
            "active_params": 1,  # replaced below once the card can count
        }
    fields["params"] = 1
    try:
        draft = ModelCard.model_validate(fields)
    except ValidationError as exc:
        hf_names = {field: names[0] for field, names in _HF_KEYS.items()} | {
            "kv_heads": "num_key_value_heads",
            "head_dim": "head_dim",
        }
        problems = "; ".join(
            f"{hf_names.get(str(e['loc'][0]), e['loc'][0]) if e['loc'] else 'config'}: "
            f"{e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors(include_url=False)
        )
        raise ValueError(problems) from None
    total = draft.architecture_params()
    update: dict[str, Any] = {"params": total}
    if draft.moe is not None:
        moe = draft.moe
        idle = (moe.experts - moe.experts_per_token) * 3 * draft.hidden * moe.expert_intermediate
        update["moe"] = moe.model_copy(update={"active_params": total - draft.layers * idle})
    return draft.model_copy(update=update)
