"""Shorthand what-if flags (planner/whatif/shorthand.py): each flag's exact patch on a
hand-picked case, what applying it changes (and that nothing else changes), its errors, and
`combine` of several flags."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from planner.cli.variant import Change
from planner.domain.errors import LoadError
from planner.domain.load import load_scenario
from planner.domain.merge import deep_merge
from planner.domain.scenario import Scenario
from planner.domain.workload import Commitment, ServeWorkload
from planner.explain.conflict import patched
from planner.whatif.shorthand import (
    clipped,
    combine,
    commit,
    drop,
    price,
    scale_demand,
    set_value,
    shift,
    stock,
)
from tests.conftest import REPO, minimal_scenario

Q3 = REPO / "scenarios" / "q3.yaml"
Flag = Callable[[Scenario, str], dict[str, Any]]


@cache
def q3() -> Scenario:
    return load_scenario(Q3)


def over_file(path: Path, patch: dict[str, Any], folder: Path) -> Scenario:
    """The patch merged over the scenario *file* as written, then loaded (every check runs)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = folder / "variant.yaml"
    out.write_text(yaml.safe_dump(deep_merge(data, patch), sort_keys=False), encoding="utf-8")
    return load_scenario(out)


def prices(s: Scenario) -> dict[tuple[str, str], Decimal]:
    return {(o.id, m): b.price for o in s.offers.values() for m, b in o.modes.items()}


def without_prices(s: Scenario) -> list[dict[str, Any]]:
    """Every offer as data, prices left out: what a price flag must leave alone."""
    dumps = [o.model_dump() for o in s.offers.values()]
    for d in dumps:
        for mode in ("hourly", "daily", "weekly", "monthly", "spot"):
            if d[mode]:
                d[mode].pop("price")
    return dumps


def fails(flag: Flag, s: Scenario, text: str, *fragments: str) -> LoadError:
    with pytest.raises(LoadError) as caught:
        flag(s, text)
    (issue,) = caught.value.issues
    assert issue.file.endswith(text) and issue.file.startswith("--")
    for fragment in fragments:
        assert fragment in issue.message, issue.message
    return caught.value


def plain_data(patch: dict[str, Any]) -> dict[str, Any]:
    """Patches are JSON data: they survive a round trip unchanged."""
    assert json.loads(json.dumps(patch)) == patch
    return patch


# --- inline scenario --------------------------------------------------------------------------


@pytest.fixture
def tiny(write: Callable[..., Path]) -> Path:
    """minimal_scenario (horizon 2026-07-01 .. 08-01: ft 07-02..07-20, chat to the horizon
    end, devs) plus a train job with no window of its own after ft, and a commitment."""
    data = minimal_scenario()
    data["workloads"].append(
        {
            "name": "ft-eval",
            "kind": "train",
            "model": "llama-2-13b",
            "method": "eval",
            "tokens": 1.0e7,
            "after": ["ft"],
        }
    )
    data["commitments"] = [
        {"offer": "jz-h200", "mode": "monthly", "units": 2, "start": "2026-07-01", "count": 1}
    ]
    return write(data)


# --- price ------------------------------------------------------------------------------------


def test_price_glob_multiplies_every_spot_price_exactly(tmp_path: Path) -> None:
    s = q3()
    patch = plain_data(price(s, "*.spot=×1.3"))
    # 0.73 × 1.3 = 0.949; 0.79 × 1.3 = 1.027; 1.43 × 1.3 = 1.859; 1.79 × 1.3 = 2.327;
    # 3.58 × 1.3 = 4.654; 6.49 × 1.3 = 8.437; 3.10 × 1.3 = 4.03; 6.97 × 1.3 = 9.061
    assert patch == {
        "offers": [
            {"id": "jz-rtx3090", "spot": {"price": "0.949"}},
            {"id": "jz-rtx4090", "spot": {"price": "1.027"}},
            {"id": "jz-rtx4090-48g", "spot": {"price": "1.859"}},
            {"id": "jz-910b", "spot": {"price": "2.327"}},
            {"id": "jz-a800", "spot": {"price": "4.654"}},
            {"id": "jz-h100", "spot": {"price": "8.437"}},
            {"id": "jz-h20", "spot": {"price": "4.03"}},
            {"id": "jz-h200", "spot": {"price": "9.061"}},
        ]
    }
    assert price(s, "*.spot=x1.3") == patch  # x for ×
    for variant in (patched(s, patch), over_file(Q3, patch, tmp_path)):
        before, after = prices(s), prices(variant)
        changed = {k for k in before if before[k] != after[k]}
        assert changed == {(o["id"], "spot") for o in patch["offers"]}
        assert all(after[k] == before[k] * Decimal("1.3") for k in changed)
        assert without_prices(variant) == without_prices(s)
        assert variant.spec.workloads == s.spec.workloads


def test_price_sets_a_new_price_on_matching_offers_and_groups_modes() -> None:
    s = q3()
    assert plain_data(price(s, "jz-h*.hourly=20")) == {
        "offers": [
            {"id": "jz-h100", "hourly": {"price": "20"}},
            {"id": "jz-h20", "hourly": {"price": "20"}},
            {"id": "jz-h200", "hourly": {"price": "20"}},
        ]
    }
    # one entry per offer: 13.94 × 1.1 = 15.334; 10036 × 1.1 = 11039.6; 6.97 × 1.1 = 7.667
    patch = price(s, "jz-h200.*=×1.1")
    assert patch == {
        "offers": [
            {
                "id": "jz-h200",
                "hourly": {"price": "15.334"},
                "monthly": {"price": "11039.6"},
                "spot": {"price": "7.667"},
            }
        ]
    }
    h200 = patched(s, patch).offers["jz-h200"]
    assert (h200.billing("hourly").price, h200.billing("monthly").price) == (
        Decimal("15.334"),
        Decimal("11039.6"),
    )
    assert h200.billing("hourly").stock == 16  # only the price moved
    assert price(s, "jz-h200-machine.monthly=150000.50") == {
        "offers": [{"id": "jz-h200-machine", "monthly": {"price": "150000.5"}}]
    }


@cache
def _priced_modes() -> list[tuple[str, str]]:
    return sorted(prices(q3()))


@given(
    at=st.integers(min_value=0, max_value=len(_priced_modes()) - 1),
    factor=st.decimals(min_value=Decimal("0.0001"), max_value=Decimal(100), places=4),
)
def test_price_factor_is_exact(at: int, factor: Decimal) -> None:
    # catalog prices have at most 2 decimals, so old × f (f with ≤ 4) has at most 6
    s = q3()
    offer, mode = _priced_modes()[at]
    variant = patched(s, price(s, f"{offer}.{mode}=×{factor}"))
    old = s.offers[offer].billing(mode).price
    assert variant.offers[offer].billing(mode).price == old * factor


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("nv-*.hourly=×2", ["no offer matches 'nv-*'"]),
        ("jz-h2000.hourly=×2", ["no offer matches 'jz-h2000'", "did you mean jz-h200?"]),
        ("jz-h200.hourlly=×2", ["no billing mode matches 'hourlly'", "did you mean hourly?"]),
        ("jz-h200-machine.hourly=×2", ["sells hourly", "jz-h200-machine sells monthly"]),
        # every offer matches '*': four are named, and how many more there are
        ("*.weekly=×2", ["no offer matching '*' sells weekly", "jz-rtx3090 sells", "more)"]),
        ("jz-h200.hourly=×0", ["factor must be above 0"]),
        ("jz-h200.hourly=×-2", ["factor must be above 0"]),
        ("jz-h200.hourly=×abc", ["expected a factor such as ×1.3"]),
        ("jz-h200.hourly=*1.3", ["expected a price such as 20"]),
        ("jz-h200.hourly=-5", ["greater than or equal to 0"]),
        ("jz-h200.hourly", ["expected OFFER.MODE=×FACTOR"]),
        ("jz-h200=×2", ["expected OFFER.MODE before '='"]),
    ],
)
def test_price_errors(text: str, fragments: list[str]) -> None:
    error = fails(price, q3(), text, *fragments)
    assert error.issues[0].file == f"--price {text}"


def test_a_factor_rounds_the_new_price_to_what_a_price_holds() -> None:
    # 6.2 × 1.3333333 = 8.26666646: a price holds 6 decimal places, so 8.266666 (half-even),
    # as a currency conversion rounds; an imported price of 6 places × 1.3 is no longer
    # refused for the seventh
    patch = plain_data(price(q3(), "jz-h20.hourly=×1.3333333"))
    assert patch == {"offers": [{"id": "jz-h20", "hourly": {"price": "8.266666"}}]}


# --- stock ------------------------------------------------------------------------------------


def test_stock_sets_each_matched_mode() -> None:
    s = q3()
    patch = plain_data(stock(s, "jz-h200*.monthly=4"))
    assert patch == {
        "offers": [
            {"id": "jz-h200", "monthly": {"stock": 4}},
            {"id": "jz-h200-machine", "monthly": {"stock": 4}},
        ]
    }
    variant = patched(s, patch)
    for offer in s.offers.values():
        for mode, billing in offer.modes.items():
            new = variant.offers[offer.id].billing(mode)
            matched = offer.id in ("jz-h200", "jz-h200-machine") and mode == "monthly"
            assert new.stock == (4 if matched else billing.stock)
            assert new.price == billing.price


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("jz-h200.hourly=-1", "a stock must be at least 0 units, got -1"),
        ("jz-h200.hourly=lots", "expected a whole number of units"),
        ("jz-h200.hourly=20000", "10,000"),
        ("zz-*.hourly=4", "no offer matches 'zz-*'"),
    ],
)
def test_stock_errors(text: str, fragment: str) -> None:
    fails(stock, q3(), text, fragment)


# --- commit -----------------------------------------------------------------------------------


def test_commit_adds_a_priced_package_commitment(tmp_path: Path) -> None:
    s = q3()
    patch = plain_data(commit(s, "jz-h200=8:monthly@9000/2026-08-01x2"))
    assert patch == {
        "commitments": [
            {
                "name": "whatif-jz-h200-8-monthly-9000-2026-08-01x2",
                "offer": "jz-h200",
                "mode": "monthly",
                "units": 8,
                "start": "2026-08-01",
                "count": 2,
            }
        ],
        "offers": [{"id": "jz-h200", "monthly": {"price": "9000"}}],
    }
    for variant in (patched(s, patch), over_file(Q3, patch, tmp_path)):
        assert variant.spec.commitments == [
            Commitment(
                name="whatif-jz-h200-8-monthly-9000-2026-08-01x2",
                offer="jz-h200",
                mode="monthly",
                units=8,
                start=dt.date(2026, 8, 1),
                count=2,
            )
        ]
        before, after = prices(s), prices(variant)
        assert {k for k in before if before[k] != after[k]} == {("jz-h200", "monthly")}
        assert after["jz-h200", "monthly"] == 9000
        assert variant.spec.workloads == s.spec.workloads


def test_commit_keeps_the_base_commitments_and_defaults_to_the_horizon_start(
    tiny: Path, tmp_path: Path
) -> None:
    s = load_scenario(tiny)
    base = {"offer": "jz-h200", "mode": "monthly", "units": 2, "start": "2026-07-01", "count": 1}
    patch = plain_data(commit(s, "jz-a800=4:hourly"))
    new = {
        "name": "whatif-jz-a800-4-hourly",
        "offer": "jz-a800",
        "mode": "hourly",
        "units": 4,
        "start": "2026-07-01",
    }
    assert patch == {"commitments": [base, new]}
    variant = over_file(tiny, patch, tmp_path)
    assert variant.spec.commitments[0] == s.spec.commitments[0]
    assert variant.spec.commitments[1] == Commitment.model_validate(new)
    assert prices(variant) == prices(s)
    # an hourly commitment may start at an hour
    later = commit(s, "jz-a800=4:hourly/2026-07-10T08:00")["commitments"][1]
    assert later["start"] == "2026-07-10T08:00"
    assert patched(s, commit(s, "jz-a800=4:hourly/2026-07-10T08:00")).spec.commitments[
        1
    ].start == dt.datetime(2026, 7, 10, 8)


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("jz-h200=8:hourlyx2", ["xCOUNT counts packages", "hourly"]),
        ("jz-h200=8:spot/2026-08-01x2", ["xCOUNT counts packages"]),
        ("jz-h2000=8:monthly", ["unknown offer 'jz-h2000'", "did you mean jz-h200?"]),
        ("jz-h200=8:montly", ["unknown billing mode 'montly'", "did you mean monthly?"]),
        ("jz-h200-machine=1:hourly", ["does not sell hourly; it sells monthly"]),
        ("jz-h200=8", ["expected OFFER=UNITS:MODE"]),
        ("jz-h200=eight:monthly", ["expected OFFER=UNITS:MODE"]),
        ("jz-h200=0:monthly", ["UNITS (the units committed) must be at least 1, got 0"]),
        ("jz-h200=1:monthlyx0", ["xCOUNT (the packages in a row) must be at least 1, got 0"]),
        ("jz-h200=8:monthly/2027-01-01", ["outside the horizon"]),
        ("jz-h200=8:monthly/tomorrow", ["FROM", "expected an ISO date"]),
        ("jz-h200=8:monthly/2026-08-01T08:00", ["packages start at 00:00"]),
        ("jz-h200=8:monthly/2026-09-15x2", ["at or past the horizon end", "at most 1 fit"]),
        ("jz-h200=8:monthly@-3", ["@PRICE", "greater than or equal to 0"]),
    ],
)
def test_commit_errors(text: str, fragments: list[str]) -> None:
    fails(commit, q3(), text, *fragments)


def test_several_commits_all_survive_combine(tiny: Path, tmp_path: Path) -> None:
    s = load_scenario(tiny)
    one, two = commit(s, "jz-a800=4:hourly"), commit(s, "jz-h200=1:monthly@9000")
    both = plain_data(combine([one, two]))
    assert both["commitments"] == [*one["commitments"], two["commitments"][-1]]
    assert both["offers"] == [{"id": "jz-h200", "monthly": {"price": "9000"}}]
    assert len(over_file(tiny, both, tmp_path).spec.commitments) == 3
    # the same flag twice is the same commitment once
    assert combine([one, one]) == one
    # the inputs are left as they were
    assert len(one["commitments"]) == 2


# --- shift ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # ft: 07-02 .. 07-20, moved two weeks: its deadline, 08-03, is held at the horizon end
        ("ft=+14d", {"earliest_start": "2026-07-16", "deadline": "2026-08-01"}),
        # 07-02 - 2d is before the horizon (07-01): clipped to it
        ("ft=-2d", {"earliest_start": "2026-07-01", "deadline": "2026-07-18"}),
        # a date plus hours becomes a date and hour
        ("ft=+6h", {"earliest_start": "2026-07-02T06:00", "deadline": "2026-07-20T06:00"}),
        ("ft=+1d12h", {"earliest_start": "2026-07-03T12:00", "deadline": "2026-07-21T12:00"}),
        # ft-eval has no window: earliest_start from the horizon start; its deadline, the
        # horizon end, stays there
        ("ft-eval=+3d", {"earliest_start": "2026-07-04"}),
        ("ft-eval=-3d", {}),
        # chat runs to the horizon end and keeps running to it
        ("chat=+14d", {"start": "2026-07-15"}),
        ("devs=6h", {"start": "2026-07-01T06:00"}),
    ],
)
def test_shift_moves_the_window(tiny: Path, text: str, expected: dict[str, str]) -> None:
    s = load_scenario(tiny)
    name = text.partition("=")[0]
    patch = plain_data(shift(s, text))
    assert patch == {"workloads": [{"name": name, **expected}]}
    variant = patched(s, patch)
    moved = variant.workload(name)
    for field, value in expected.items():
        written = dt.datetime.fromisoformat(value)
        assert getattr(moved, field) in (written, written.date())
    # nothing else moved
    assert moved.model_dump(exclude=set(expected)) == s.workload(name).model_dump(
        exclude=set(expected)
    )
    assert [w for w in variant.spec.workloads if w.name != name] == [
        w for w in s.spec.workloads if w.name != name
    ]


def test_shift_over_the_file_loads(tiny: Path, tmp_path: Path) -> None:
    s = load_scenario(tiny)
    variant = over_file(tiny, shift(s, "ft=+6h"), tmp_path)
    ft = variant.workload("ft")
    assert (ft.earliest_start, ft.deadline) == (  # type: ignore[union-attr]
        dt.datetime(2026, 7, 2, 6),
        dt.datetime(2026, 7, 20, 6),
    )


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("ft=+12d", ""),  # moved whole: its deadline lands on the horizon end (08-01)
        ("ft=-2d", "earliest_start held at the horizon's start, 2026-07-01, not 2026-06-30"),
        ("ft=+14d", "deadline held at the horizon's end, 2026-08-01, not 2026-08-03"),
        # an end at the horizon's end stays there by rule, as documented: the window is
        # shorter, not only moved, and the note says so (a service's end, a job's deadline)
        (
            "chat=+14d",
            "end stays at the horizon's end, 2026-08-01, where it was: the window is 14 days "
            "shorter",
        ),
        (
            "ft-eval=+1d12h",
            "deadline stays at the horizon's end, 2026-08-01, where it was: the window is "
            "1 day 12 hours shorter",
        ),
        (
            "devs=+6h",
            "end stays at the horizon's end, 2026-08-01, where it was: the window is 6 hours "
            "shorter",
        ),
        # ft-eval's window is the whole horizon: moved earlier, nothing moves
        (
            "ft-eval=-3d",
            "nothing moves: earliest_start held at the horizon's start, 2026-07-01, not 2026-06-28",
        ),
    ],
)
def test_a_shift_says_what_it_held_at_the_horizon(tiny: Path, text: str, note: str) -> None:
    assert clipped(load_scenario(tiny), text) == note


def test_the_change_lines_carry_the_shift_note(tiny: Path) -> None:
    change = Change.of(None, shift=["ft=-2d"], price=["jz-h200.hourly=x2"])
    _, lines = change.applied(tiny, load_scenario(tiny))
    assert lines == [
        "--price jz-h200.hourly=x2",
        "--shift ft=-2d (earliest_start held at the horizon's start, 2026-07-01, not 2026-06-30)",
    ]


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("fft=+1d", ["unknown workload 'fft'", "did you mean ft?"]),
        ("chat=+31d", ["leaves it no time", "2026-08-01 .. 2026-08-01", "horizon ends"]),
        ("ft=-40d", ["leaves it no time", "(the horizon starts 2026-07-01)"]),
        ("ft=+30m", ["whole hours"]),
        ("ft=soon", ["whole hours"]),
        ("ft=+0d", ["a shift of +0d changes nothing"]),
        ("ft=0h", ["a shift of 0h changes nothing"]),
        ("ft+1d", ["expected WORKLOAD=+AMOUNT"]),
    ],
)
def test_shift_errors(tiny: Path, text: str, fragments: list[str]) -> None:
    fails(shift, load_scenario(tiny), text, *fragments)


# --- drop -------------------------------------------------------------------------------------


def test_drop_removes_the_workload_and_its_mentions_in_after(tmp_path: Path) -> None:
    s = q3()
    patch = plain_data(drop(s, "legal-13b-lora"))
    assert patch == {
        "workloads": [
            {"name": "legal-13b-lora", "delete": True},
            {"name": "legal-13b-eval", "after": []},
        ]
    }
    for variant in (patched(s, patch), over_file(Q3, patch, tmp_path)):
        names = [w.name for w in variant.spec.workloads]
        assert names == [w.name for w in s.spec.workloads if w.name != "legal-13b-lora"]
        assert variant.workload("legal-13b-eval").after == ()  # type: ignore[union-attr]
        assert variant.offers == s.offers


def test_two_drops_combine(write: Callable[..., Path], tmp_path: Path) -> None:
    data = minimal_scenario()
    ft = data["workloads"][0]
    data["workloads"] += [
        {**ft, "name": "a"},
        {**ft, "name": "b"},
        {**ft, "name": "c", "after": ["a", "b", "ft"]},
    ]
    path = write(data)
    s = load_scenario(path)
    # each drop is computed from the base, so each leaves the other in c's after; combined,
    # both go
    patch = plain_data(combine([drop(s, "a"), drop(s, "b")]))
    assert patch == {
        "workloads": [
            {"name": "a", "delete": True},
            {"name": "c", "after": ["ft"]},
            {"name": "b", "delete": True},
        ]
    }
    variant = over_file(path, patch, tmp_path)
    assert variant.workload("c").after == ("ft",)  # type: ignore[union-attr]
    # a change to a workload that is dropped later does not bring it back
    later = combine([set_value(s, "workloads.a.tokens=5.0e7"), drop(s, "a")])
    assert later["workloads"] == [
        {"name": "a", "delete": True},
        {"name": "c", "after": ["b", "ft"]},
    ]


def test_drop_errors(write: Callable[..., Path]) -> None:
    fails(drop, q3(), "legal-13b-lor", "unknown workload 'legal-13b-lor'", "did you mean")
    data = minimal_scenario()
    data["workloads"] = data["workloads"][:1]
    fails(drop, load_scenario(write(data)), "ft", "only workload")


# --- scale_demand -----------------------------------------------------------------------------


def levels(s: Scenario, name: str) -> tuple[tuple[float, ...], ...]:
    w = s.workload(name)
    assert isinstance(w, ServeWorkload)
    curve = w.concurrency or w.requests_per_s
    assert curve is not None
    return curve.levels


def test_scale_demand_of_one_service(tmp_path: Path) -> None:
    s = q3()
    patch = plain_data(scale_demand(s, "assistant-8b=2"))
    # the file writes {"00-09": 2, "09-19": 16, "19-24": 4}: × 2; the validated weekday
    # keys are nulled so the patch merges the same over the dump
    days = dict.fromkeys(("mon", "tue", "wed", "thu", "fri", "sat", "sun"))
    assert patch == {
        "workloads": [
            {
                "name": "assistant-8b",
                "concurrency": {"00-09": 4.0, "09-19": 32.0, "19-24": 8.0, **days},
            }
        ]
    }
    for variant in (patched(s, patch), over_file(Q3, patch, tmp_path)):
        assert levels(variant, "assistant-8b") == tuple(
            tuple(level * 2 for level in day) for day in levels(s, "assistant-8b")
        )
        assert variant.workload("assistant-8b").model_dump(exclude={"concurrency"}) == s.workload(
            "assistant-8b"
        ).model_dump(exclude={"concurrency"})
        others = [w for w in variant.spec.workloads if w.name != "assistant-8b"]
        assert others == [w for w in s.spec.workloads if w.name != "assistant-8b"]


def test_scale_demand_of_every_service(tmp_path: Path) -> None:
    s = q3()
    patch = plain_data(scale_demand(s, "1.5"))
    services = ["chat-70b", "assistant-8b", "legal-search-qwen32b"]
    assert [w["name"] for w in patch["workloads"]] == services
    # legal-search writes requests_per_s by weekday group: 0.6 × 1.5 = 0.9 (in floats)
    assert patch["workloads"][2]["requests_per_s"]["weekdays"]["08-20"] == 0.6 * 1.5
    for variant in (patched(s, patch), over_file(Q3, patch, tmp_path)):
        for name in services:
            assert levels(variant, name) == tuple(
                tuple(level * 1.5 for level in day) for day in levels(s, name)
            )
            new, old = variant.workload(name), s.workload(name)
            assert isinstance(new, ServeWorkload) and isinstance(old, ServeWorkload)
            assert new.min_replicas == old.min_replicas


def test_scale_demand_in_memory_scenario_without_a_file() -> None:
    s = q3().model_copy(update={"path": None})
    patch = scale_demand(s, "chat-70b=2")
    assert levels(patched(s, patch), "chat-70b") == tuple(
        tuple(level * 2 for level in day) for day in levels(s, "chat-70b")
    )


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("dev-boxes=2", ["dev-boxes is a reserve workload"]),
        ("legal-13b-lora=2", ["is a train workload"]),
        ("chat70b=2", ["unknown workload 'chat70b'", "did you mean chat-70b?"]),
        ("0", ["a factor above 0"]),
        ("-1", ["a factor above 0"]),
        ("lots", ["a factor above 0"]),
        ("inf", ["a factor above 0"]),
        ("chat-70b=1e308", ["not a finite number"]),
    ],
)
def test_scale_demand_errors(text: str, fragments: list[str]) -> None:
    fails(scale_demand, q3(), text, *fragments)


# --- set_value --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "workloads.chat-70b.min_replicas=2",
            {"workloads": [{"name": "chat-70b", "min_replicas": 2}]},
        ),
        (
            "offers.jz-h200.hourly.stock=32",
            {"offers": [{"id": "jz-h200", "hourly": {"stock": 32}}]},
        ),
        ("usable_memory_fraction=0.85", {"usable_memory_fraction": 0.85}),
        (
            "workloads.support-qwen7b-qlora.daily_hours=null",
            {"workloads": [{"name": "support-qwen7b-qlora", "daily_hours": None}]},
        ),
        ("horizon.end=2026-10-15", {"horizon": {"end": "2026-10-15"}}),
        (
            "workloads.legal-13b-eval.after=[]",
            {"workloads": [{"name": "legal-13b-eval", "after": []}]},
        ),
    ],
)
def test_set_value_patches(text: str, expected: dict[str, Any], tmp_path: Path) -> None:
    s = q3()
    patch = plain_data(set_value(s, text))
    assert patch == expected
    over_file(Q3, patch, tmp_path)  # the variant file loads


def test_set_value_effects() -> None:
    s = q3()
    chat = patched(s, set_value(s, "workloads.chat-70b.min_replicas=2")).workload("chat-70b")
    assert isinstance(chat, ServeWorkload) and chat.min_replicas == 2
    h200 = patched(s, set_value(s, "offers.jz-h200.hourly.stock=32")).offers["jz-h200"]
    assert h200.billing("hourly").stock == 32
    assert h200.billing("hourly").price == s.offers["jz-h200"].billing("hourly").price
    job = patched(s, set_value(s, "workloads.support-qwen7b-qlora.daily_hours=null"))
    assert job.workload("support-qwen7b-qlora").daily_hours is None  # type: ignore[union-attr]
    fraction = patched(s, set_value(s, "usable_memory_fraction=null"))
    assert fraction.spec.usable_memory_fraction == 0.90  # the default


def test_set_value_with_a_map_replaces_the_map(tmp_path: Path) -> None:
    s = q3()
    patch = set_value(s, 'workloads.chat-70b.concurrency={"00-12": 5, "12-24": 10}')
    curve = patch["workloads"][0]["concurrency"]
    assert {k: v for k, v in curve.items() if v is not None} == {"00-12": 5, "12-24": 10}
    assert {"weekdays", "weekend", "mon", "sun"} <= {k for k, v in curve.items() if v is None}
    day = (5.0,) * 12 + (10.0,) * 12
    for variant in (patched(s, patch), over_file(Q3, patch, tmp_path)):
        assert levels(variant, "chat-70b") == (day,) * 7


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("usable_memory_fractio=0.8", ["unknown field 'usable_memory_fractio'", "did you mean"]),
        ("workloads.chat70b.min_replicas=2", ["unknown workload 'chat70b'", "chat-70b"]),
        ("workloads.chat-70b.min_replica=2", ["no field 'min_replica'", "min_replicas"]),
        ("offers.jz-h2000.hourly.stock=3", ["unknown offer 'jz-h2000'", "jz-h200"]),
        ("workloads.chat-70b=2", ["expected workloads.NAME.FIELD=VALUE"]),
        ("workloads.chat-70b.min_replicas=[1", ["cannot read the value", "invalid YAML"]),
        ("workloads.chat-70b.min_replicas=!!python/object:os.system x", ["not allowed"]),
        ("min_replicas", ["expected PATH=VALUE"]),
    ],
)
def test_set_value_errors(text: str, fragments: list[str]) -> None:
    fails(set_value, q3(), text, *fragments)


# --- combine ----------------------------------------------------------------------------------


def test_combine_merges_flags_in_order_and_keeps_nulls(tmp_path: Path) -> None:
    s = q3()
    flags = [
        price(s, "jz-h200.hourly=×2"),  # 13.94 × 2 = 27.88
        price(s, "jz-h200.hourly=20"),  # the later wins
        stock(s, "jz-h200.hourly=32"),
        set_value(s, "workloads.support-qwen7b-qlora.daily_hours=null"),
        shift(s, "chat-70b=+14d"),
        drop(s, "legal-13b-lora"),
        commit(s, "jz-h200=8:monthly"),
    ]
    patch = plain_data(combine(flags))
    assert patch["offers"] == [{"id": "jz-h200", "hourly": {"price": "20", "stock": 32}}]
    assert patch["workloads"] == [
        {"name": "support-qwen7b-qlora", "daily_hours": None},
        {"name": "chat-70b", "start": "2026-07-29"},
        {"name": "legal-13b-lora", "delete": True},
        {"name": "legal-13b-eval", "after": []},
    ]
    for variant in (patched(s, patch), over_file(Q3, patch, tmp_path)):
        hourly = variant.offers["jz-h200"].billing("hourly")
        assert (hourly.price, hourly.stock) == (Decimal(20), 32)
        assert variant.workload("support-qwen7b-qlora").daily_hours is None  # type: ignore[union-attr]
        assert variant.workload("chat-70b").start == dt.date(2026, 7, 29)  # type: ignore[union-attr]
        assert "legal-13b-lora" not in [w.name for w in variant.spec.workloads]
        assert [c.name for c in variant.spec.commitments] == ["whatif-jz-h200-8-monthly"]
    assert combine([]) == {}


# --- a service with request classes -----------------------------------------------------------
# Flags name workloads as the file does: the service, whose classes the planner expands into
# workloads of their own (`assistant.chat`, ...). Each flag equals a patch written by hand.

SPLIT = REPO / "scenarios" / "classes-chat-long.yaml"  # classes take shares of one curve
NIGHT = REPO / "scenarios" / "classes-night-batch.yaml"  # each class brings its own curve


def by_flag(path: Path, flag: str, text: str, patches: tuple[Path, ...] = ()) -> Scenario:
    """The variant as `plan whatif` builds it: the patch files, then the flag."""
    base = load_scenario(path)
    return Change.of(list(patches), **{flag.replace("-", "_"): [text]}).apply(path, base)


def by_hand(path: Path, patch: dict[str, Any], tmp_path: Path) -> Scenario:
    return Change.of([write_patch(patch, tmp_path)]).apply(path, load_scenario(path))


def write_patch(patch: dict[str, Any], tmp_path: Path, name: str = "patch.yaml") -> Path:
    out = tmp_path / name
    out.write_text(yaml.safe_dump(patch, sort_keys=False), encoding="utf-8")
    return out


def night_classes(factor: float) -> list[dict[str, Any]]:
    data = yaml.safe_load(NIGHT.read_text(encoding="utf-8"))
    classes: list[dict[str, Any]] = data["workloads"][0]["classes"]
    for c in classes:
        c["concurrency"] = {k: v * factor for k, v in c["concurrency"].items()}
    return classes


@pytest.mark.parametrize(
    ("path", "flag", "text", "patch"),
    [
        (SPLIT, "scale-demand", "2", {"name": "assistant", "concurrency": 400}),
        (SPLIT, "scale-demand", "assistant=2", {"name": "assistant", "concurrency": 400}),
        (NIGHT, "scale-demand", "2", {"name": "assistant", "classes": night_classes(2)}),
        (NIGHT, "scale-demand", "assistant=0.5",
         {"name": "assistant", "classes": night_classes(0.5)}),
        (SPLIT, "shift", "assistant=+1h", {"name": "assistant", "start": "2026-10-01T01:00"}),
        (NIGHT, "shift", "assistant=+1d", {"name": "assistant", "start": "2026-10-02"}),
        (SPLIT, "set", "workloads.assistant.concurrency=300",
         {"name": "assistant", "concurrency": 300}),
        (NIGHT, "set", "workloads.assistant.min_replicas=1",
         {"name": "assistant", "min_replicas": 1}),
    ],
)  # fmt: skip
def test_a_flag_on_a_classed_service_equals_its_patch_file(
    path: Path, flag: str, text: str, patch: dict[str, Any], tmp_path: Path
) -> None:
    flagged = by_flag(path, flag, text)
    assert flagged.spec == by_hand(path, {"workloads": [patch]}, tmp_path).spec
    assert flagged.spec != load_scenario(path).spec
    assert [w.name for w in flagged.written_workloads()] == ["assistant"]


def class_levels(s: Scenario) -> dict[str, float]:
    """Each class's peak requests in flight: its curve times its share."""
    out = {}
    for w in s.spec.workloads:
        assert isinstance(w, ServeWorkload) and w.class_of == "assistant"
        out[w.name] = (w.concurrency or w.requests_per_s).peak * w.demand_share  # type: ignore[union-attr]
    return out


@pytest.mark.parametrize("path", [SPLIT, NIGHT])
def test_scaling_demand_scales_every_class_share_or_own_curve(path: Path) -> None:
    base, doubled = load_scenario(path), by_flag(path, "scale-demand", "2")
    assert class_levels(doubled) == {k: 2 * v for k, v in class_levels(base).items()}
    lengths = {"concurrency", "requests_per_s"}
    for old, new in zip(base.spec.workloads, doubled.spec.workloads, strict=True):
        assert old.model_dump(exclude=lengths) == new.model_dump(exclude=lengths)


def test_scaling_keeps_a_class_an_earlier_patch_changed(tmp_path: Path) -> None:
    # the file's classes are written again whole (a patch replaces a list): one a patch
    # changed before the flag is taken as changed, not as the file wrote it
    classes = night_classes(1)
    classes[1]["context_tokens"] = 8192
    earlier = write_patch({"workloads": [{"name": "assistant", "classes": classes}]}, tmp_path)
    variant = by_flag(NIGHT, "scale-demand", "2", (earlier,))
    batch = variant.workload("assistant.batch")
    assert isinstance(batch, ServeWorkload) and batch.context_tokens == 8192
    assert batch.concurrency is not None and batch.concurrency.peak == 200


def test_drop_of_a_classed_service_removes_every_class(write: Callable[..., Path]) -> None:
    data = yaml.safe_load(SPLIT.read_text(encoding="utf-8"))
    data["workloads"].append(
        {"name": "desk", "kind": "reserve", "card": "rtx4090", "cards": 1,
         "start": "2026-10-01", "end": "2026-10-02"}
    )  # fmt: skip
    path = write(data)
    s = load_scenario(path)
    assert drop(s, "assistant") == {"workloads": [{"name": "assistant", "delete": True}]}
    variant = by_flag(path, "drop", "assistant")
    assert [w.name for w in variant.spec.workloads] == ["desk"]
    fails(drop, load_scenario(SPLIT), "assistant", "only workload")


@pytest.mark.parametrize(
    ("flag", "text", "fragments"),
    [
        (drop, "assistant.chat", ["request class of assistant", "name the service"]),
        (shift, "assistant.long=+1h", ["request class of assistant"]),
        (scale_demand, "assistant.long=2", ["request class of assistant"]),
        (scale_demand, "assistent=2", ["unknown workload 'assistent'", "did you mean assistant?"]),
        (set_value, "workloads.assistant.chat.concurrency=3",
         ["chat is a request class", "classes"]),
    ],
)  # fmt: skip
def test_a_class_is_not_named_as_a_workload(flag: Flag, text: str, fragments: list[str]) -> None:
    fails(flag, load_scenario(SPLIT), text, *fragments)


def test_a_problem_a_flag_causes_in_the_scenarios_values_names_the_flag(tiny: Path) -> None:
    # tiny commits 2 jz-h200 monthly units; a stock of 1 makes that commitment too large:
    # the flag is the cause (it was blamed on the scenario file's commitment alone)
    with pytest.raises(LoadError) as caught:
        Change.of(None, stock=["jz-h200.monthly=1"]).apply(tiny, load_scenario(tiny))
    (issue,) = caught.value.issues
    assert issue.file == "--stock jz-h200.monthly=1" and issue.field == "commitments[0].units"
    assert "more than its monthly stock, 1" in issue.message
    assert f"(written at {tiny}:" in issue.message
    # a patch is named the same way
    patch = write_patch({"offers": [{"id": "jz-h200", "monthly": {"stock": 1}}]}, tiny.parent)
    with pytest.raises(LoadError) as caught:
        Change.of([patch]).apply(tiny, load_scenario(tiny))
    (issue,) = caught.value.issues
    assert issue.file == f"--patch {patch}" and f"(written at {tiny}:" in issue.message
