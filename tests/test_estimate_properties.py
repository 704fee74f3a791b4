"""Invariants of the estimates, over random shapes and knobs (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from planner.domain.recipes import RECIPES, recipe_knobs
from planner.estimate.memory import ServeSetup, TrainSetup, serve_memory, train_memory
from planner.estimate.speed import scaling_efficiency, spot_factor, train_speed
from tests.measurements import CARDS, model

MODELS = st.sampled_from(["llama-2-7b", "llama-3.1-8b", "qwen2.5-14b", "mixtral-8x7b"])
CARD_IDS = st.sampled_from(sorted(CARDS))
METHODS = st.sampled_from(["full", "lora", "qlora", "eval"])
RECIPE = st.sampled_from([None, *RECIPES])
WIDTHS = ["int4", "int8", "bf16", "fp32"]  # increasing bytes per parameter


def setup(method: str, recipe: str | None, seq: int, batch: int, precision: str = "bf16"):  # type: ignore[no-untyped-def]
    return TrainSetup(method, recipe_knobs(method, recipe), precision, seq, batch)


@given(
    MODELS, CARD_IDS, METHODS, RECIPE, st.integers(64, 8192), st.integers(1, 8), st.integers(1, 8)
)
def test_train_memory_monotone_in_batch_and_sequence(name, card_id, method, recipe, seq, batch, n):  # type: ignore[no-untyped-def]
    m, c = model(name), CARDS[card_id]
    base = train_memory(m, c, n, setup(method, recipe, seq, batch)).total
    assert train_memory(m, c, n, setup(method, recipe, seq, batch + 1)).total >= base
    assert train_memory(m, c, n, setup(method, recipe, seq + 128, batch)).total >= base


@given(MODELS, CARD_IDS, METHODS, RECIPE, st.sampled_from([1, 2, 4, 8, 16]))
def test_more_shards_never_raise_memory_per_card(name, card_id, method, recipe, n):  # type: ignore[no-untyped-def]
    m, c = model(name), CARDS[card_id]
    s = setup(method, recipe, 2048, 1)
    # NCCL buffers appear once a job spans cards; compare from two cards up.
    if n >= 2:
        assert train_memory(m, c, 2 * n, s).total <= train_memory(m, c, n, s).total


@given(MODELS, st.integers(0, 2), st.integers(1, 64), st.sampled_from([1, 2, 4, 8]))
def test_serve_memory_monotone_in_bytes_per_parameter(name, i, concurrency, n):  # type: ignore[no-untyped-def]
    m, c = model(name), CARDS["h200-141g"]
    low, high = WIDTHS[i], WIDTHS[i + 1]
    small, _ = serve_memory(m, c, n, ServeSetup(precision=low, concurrency=concurrency))
    large, _ = serve_memory(m, c, n, ServeSetup(precision=high, concurrency=concurrency))
    assert large.total > small.total
    more, _ = serve_memory(m, c, n, ServeSetup(precision=low, concurrency=concurrency + 1))
    assert more.total > small.total


@given(
    MODELS,
    CARD_IDS,
    METHODS,
    RECIPE,
    st.integers(1, 64),
    st.sampled_from([1, 2, 4, 8]),
    st.one_of(st.none(), st.floats(10, 3200)),
)
def test_scaling_efficiency_in_unit_interval(name, card_id, method, recipe, n, per_node, gbps):  # type: ignore[no-untyped-def]
    from planner.domain.catalog import Network

    network = Network(gbps=gbps) if gbps else None
    m, c, s = model(name), CARDS[card_id], setup(method, recipe, 2048, 1)
    efficiency, _ = scaling_efficiency(m, c, n, s, per_node, network)
    assert 0 < efficiency <= 1
    if n == 1:
        assert efficiency == 1


@given(MODELS, CARD_IDS, METHODS, RECIPE, st.integers(1, 7))
def test_more_cards_in_a_node_never_scale_better(name, card_id, method, recipe, n):  # type: ignore[no-untyped-def]
    """Within a node a ring moves (n − 1)/n of the volume per card: never less with more
    cards, so the share of linear speed-up kept never grows, and n cards never run faster
    than n times one."""
    m, c, s = model(name), CARDS[card_id], setup(method, recipe, 2048, 1)
    assert scaling_efficiency(m, c, n + 1, s)[0] <= scaling_efficiency(m, c, n, s)[0] + 1e-12
    one = train_speed(m, c, 1, s).tokens_per_s
    assert train_speed(m, c, n, s).tokens_per_s <= n * one * (1 + 1e-9)


@given(st.floats(0, 2), st.integers(1, 240), st.integers(0, 60))
def test_spot_factor_in_unit_interval_and_falls_with_preemptions(rate, interval, restart):  # type: ignore[no-untyped-def]
    factor = spot_factor(rate, interval, restart)
    assert 0 < factor <= 1
    assert spot_factor(rate + 0.1, interval, restart) < factor
