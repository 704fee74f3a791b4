"""Model cards: every model name the docs list exists and its architecture adds up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planner.domain.errors import Issue, LoadError
from planner.domain.load import load_model, model_names
from tests.conftest import LLAMA31_8B_CONFIG

PRODUCT_NAMES = [
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "qwen2.5-72b",
    "mistral-7b",
    "mixtral-8x7b",
]


def nowhere(path: Any, message: str) -> Issue:
    return Issue("test", None, None, (), message)


def test_every_product_name_is_shipped_and_one_more_moe() -> None:
    assert set(PRODUCT_NAMES) <= set(model_names())
    moe = [n for n in model_names() if load_model(n, None, nowhere).moe is not None]
    assert len(moe) >= 2 and "mixtral-8x7b" in moe


@pytest.mark.parametrize("name", sorted(set(PRODUCT_NAMES) | {"mixtral-8x22b", "qwen3-30b-a3b"}))
def test_stated_parameters_match_the_architecture(name: str) -> None:
    card = load_model(name, None, nowhere)
    assert card.name == name
    assert abs(card.architecture_params() - card.params) / card.params < 1e-3
    assert card.heads % card.kv_heads == 0


def test_known_kv_facts() -> None:
    # docs/estimates.md: KV per token Llama-3-8B 128 KiB, Llama-2-7B (MHA) 512 KiB at 16 bit.
    def kv_bytes(name: str) -> int:
        card = load_model(name, None, nowhere)
        return 2 * card.layers * card.kv_heads * card.dim_per_head * 2

    assert kv_bytes("llama-3.1-8b") == 128 * 1024
    assert kv_bytes("llama-2-7b") == 512 * 1024


def test_hf_config_json_loads_to_the_same_architecture(tmp_path: Path) -> None:
    config = LLAMA31_8B_CONFIG
    path = tmp_path / "Llama-3.1-8B" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(config))
    card = load_model("Llama-3.1-8B/config.json", tmp_path, nowhere)
    shipped = load_model("llama-3.1-8b", None, nowhere)
    assert card.params == shipped.params
    assert card.name == "llama-3.1-8b"


def test_hf_moe_config_counts_active_parameters(tmp_path: Path) -> None:
    config = {
        "model_type": "mixtral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 32000,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    card = load_model(str(tmp_path / "config.json"), None, nowhere)
    shipped = load_model("mixtral-8x7b", None, nowhere)
    assert card.moe is not None and shipped.moe is not None
    assert (card.params, card.moe.active_params) == (shipped.params, shipped.moe.active_params)


def test_bad_config_values_are_named_by_their_config_keys(tmp_path: Path) -> None:
    config = {
        "hidden_size": 8,
        "intermediate_size": 8,
        "num_hidden_layers": -4,
        "num_attention_heads": 2,
        "vocab_size": "big",
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(LoadError) as caught:
        load_model(str(tmp_path), None, nowhere)  # a checkout folder: its config.json
    message = str(caught.value)
    assert "num_hidden_layers: Input should be greater than or equal to 1" in message
    assert "vocab_size:" in message and "pydantic" not in message


def test_config_without_required_keys_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 8}))
    with pytest.raises(LoadError, match=r"config\.json has no num_hidden_layers"):
        load_model("config.json", tmp_path, nowhere)
