"""One rule at a time: tiny scenarios (one or two workloads, one or two offers, a few days)
whose optimum is worked out by hand in the comment above each, solved and checked.

Each is a differential guard as much as a unit test: the same scenarios, solved by the
code before a change and after it, must give the same status and total (a change of total
is a change of rule, or a bug). Prices are CNY per unit-hour unless said; `job(h)` is h
hours of work on one a100-80g (tests/planning.py); one a100-80g replica of llama-3.1-8b
carries 100 requests in flight, two cards 220; four a100-80g carry 86 requests of
llama-3.1-70b, eight 276.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tests.planning import job, offer, reserve, service, solved

BERLIN = {"timezone": "Europe/Berlin"}
NEW_YORK = {"timezone": "America/New_York"}
# local days of 25 and 23 real hours
BERLIN_25 = {**BERLIN, "start": "2026-10-25"}
BERLIN_23 = {**BERLIN, "start": "2026-03-29"}
NEW_YORK_25 = {**NEW_YORK, "start": "2026-11-01"}
NEW_YORK_23 = {**NEW_YORK, "start": "2026-03-08"}

# Replicas per hour from 09:00, then none: 1, 2, 2, 1 / 1, 2, 1, 1, 1 / 1, 0, 1 / 1 at 09:00
# and at 15:00 only.
R1221 = {"00-09": 0, "09-10": 50, "10-12": 150, "12-13": 50, "13-24": 0}
R12111 = {"00-09": 0, "09-10": 50, "10-11": 150, "11-14": 50, "14-24": 0}
DIP = {"00-09": 0, "09-10": 50, "10-11": 0, "11-12": 50, "12-24": 0}
FAR = {"00-09": 0, "09-10": 50, "10-15": 0, "15-16": 50, "16-24": 0}


def hourly(price: float = 10, **billing: Any) -> dict[str, Any]:
    return {"hourly": {"price": price, **billing}}


def a100(setup: int = 0, **modes: Any) -> dict[str, Any]:
    """Offer `o` of single a100-80g cards; `modes` as `hourly(...)` or `daily={...}`."""
    return {**offer("o", **modes), "setup_minutes": setup}


def machine(cards: int = 8, **modes: Any) -> dict[str, Any]:
    """Offer `m` of units of `cards` a100-80g cards (a machine when 8)."""
    return {**offer("m", **modes), "unit_cards": cards}


def chat(curve: Any, cap: int | None = 1, day: str = "2026-07-01", **fields: Any) -> dict[str, Any]:
    """llama-3.1-8b at `curve` requests in flight for one day, no replica where it is 0."""
    end = {"2026-07-01": "2026-07-02", "2026-10-25": "2026-10-26", "2026-03-29": "2026-03-30"}
    end |= {"2026-11-01": "2026-11-02", "2026-03-08": "2026-03-09"}
    extra = {} if cap is None else {"max_cards_per_replica": cap}
    return service(concurrency=curve, min_replicas=0, start=day, end=end[day], **extra, **fields)


def big(curve: Any, cap: int) -> dict[str, Any]:
    return {**chat(curve, cap), "name": "big", "model": "llama-3.1-70b"}


def desk(hours: str = "09:00-12:00", cards: int = 1, day: str = "2026-07-01", **f: Any) -> Any:
    """`cards` a100-80g reserved in `hours` of one local day from `day`."""
    following = {"2026-10-25": "2026-10-26", "2026-03-29": "2026-03-30"}
    following |= {"2026-11-01": "2026-11-02", "2026-03-08": "2026-03-09"}
    return reserve("desk", cards, hours, start=day, end=following.get(day, "2026-07-02"), **f)


def window(lo: int, hi: int, level: int) -> dict[str, int]:
    """`level` requests in flight in [lo, hi), none elsewhere."""
    return {f"00-{lo:02d}": 0, f"{lo:02d}-{hi:02d}": level, f"{hi:02d}-24": 0}


def case(name: str, offers: Any, workloads: Any, total: str, days: int = 1, **where: Any) -> Any:
    return pytest.param(offers, workloads, days, where, total, id=name)


DISK = {"disk_price_per_gb_month": 72}  # 0.1 per GB-hour of 720 h a month
SPOT = {"preemptions_per_hour": 0.05, "restart_minutes": 10}

CASES = [
    # --- hourly billing of a train job (rule 4): ceil(max(held, min) / step) x step
    case("train-hourly", [a100(**hourly())], [job("j", 5)], "50.00"),  # 5 h x 10
    case("train-min-8", [a100(**hourly(min_hours=8))], [job("j", 5)], "80.00"),  # max(5, 8)
    case("train-step-2", [a100(**hourly(increment_hours=2))], [job("j", 5)], "60.00"),  # 3 x 2 h
    # max(2, 3) = 3 h, in 2 h steps: 4 h
    case(
        "train-min-3-step-2",
        [a100(**hourly(min_hours=3, increment_hours=2))],
        [job("j", 2)],
        "40.00",
    ),
    # 5 h = 6.67 steps of 0.75 h: 7 steps, 5.25 h
    case("train-step-0.75", [a100(**hourly(increment_hours=0.75))], [job("j", 5)], "52.50"),
    # max(1, 2) = 2 h = 2.67 steps: 3 steps, 2.25 h
    case(
        "train-min-2-step-0.75",
        [a100(**hourly(min_hours=2, increment_hours=0.75))],
        [job("j", 1)],
        "22.50",
    ),
    case(
        "train-step-1.5", [a100(**hourly(increment_hours=1.5))], [job("j", 5)], "60.00"
    ),  # 4 steps
    case("train-min-2.5", [a100(**hourly(min_hours=2.5))], [job("j", 2)], "30.00"),  # ceil(2.5)
    # setup 30 min: ceil(5 + 0.5) = 6 h held
    case("train-setup", [a100(30, **hourly())], [{**job("j", 5), "setup_minutes": 30}], "60.00"),
    # setup 1 h + 2 h = 3 h held, billed at the 4 h minimum
    case(
        "train-setup-min-4",
        [a100(60, **hourly(min_hours=4))],
        [{**job("j", 2), "setup_minutes": 60}],
        "40.00",
    ),
    # --- daily windows (rule 3): each day's run a rental of its own
    case("window", [a100(**hourly())], [job("j", 20, daily_hours="08:00-22:00")], "200.00", 3),
    # from 08:00, 14 + 6 h would bill 14 + 8; from 12:00, 10 + 10 h: 200
    case(
        "window-min-8",
        [a100(**hourly(min_hours=8))],
        [job("j", 20, daily_hours="08:00-22:00")],
        "200.00",
        3,
    ),
    # 21 h in two runs: one of them odd, billed 1 h more: 22 h
    case(
        "window-step-2",
        [a100(**hourly(increment_hours=2))],
        [job("j", 21, daily_hours="08:00-22:00")],
        "220.00",
        3,
    ),
    # two runs a + b = 20: a = 0 (mod 3) leaves b = 2 (mod 3), 0.25 h rounded up: 20.25 h
    case(
        "window-step-0.75",
        [a100(**hourly(increment_hours=0.75))],
        [job("j", 20, daily_hours="08:00-22:00")],
        "202.50",
        3,
    ),
    # setup 1 h each day: 1 + 13 h, then 1 + 7 h: 22 h
    case(
        "window-setup",
        [a100(60, **hourly())],
        [{**job("j", 20, daily_hours="08:00-22:00"), "setup_minutes": 60}],
        "220.00",
        3,
    ),
    # 20:00-04:00: 8 h, then 2 h
    case(
        "window-midnight",
        [a100(**hourly())],
        [job("j", 10, daily_hours="20:00-04:00")],
        "100.00",
        3,
    ),
    # two daily packages at 80 cover both days' runs
    case(
        "window-package",
        [a100(daily={"price": 80})],
        [job("j", 20, daily_hours="08:00-22:00")],
        "160.00",
        3,
    ),
    # one run of 10 h: no minimum or step applies
    case(
        "window-min-4-step-2",
        [a100(**hourly(min_hours=4, increment_hours=2))],
        [job("j", 10, daily_hours="08:00-22:00")],
        "100.00",
        3,
    ),
    # storage over the job's whole span: 08:00 day 1 to 14:00 day 2 whatever the start,
    # 30 h x 10 GB x 0.1 = 30, plus 200
    case(
        "window-storage",
        [{**a100(**hourly()), **DISK}],
        [job("j", 20, daily_hours="08:00-22:00", disk_gb=10)],
        "230.00",
        3,
    ),
    # --- packages (rule 5)
    case("daily", [a100(**hourly(), daily={"price": 100})], [job("j", 30)], "200.00", 3),  # vs 300
    case("weekly", [a100(**hourly(), weekly={"price": 900})], [job("j", 100)], "900.00", 7),
    case(
        "monthly",
        [a100(**hourly(), monthly={"price": 5000})],
        [reserve("desk", 1, "00:00-24:00", days=30)],
        "5000.00",  # against 30 x 24 x 10 = 7,200 hourly
        30,
    ),
    # --- serving and reserved cards (rule 6)
    case("serve", [a100(**hourly())], [chat(window(9, 12, 50))], "30.00"),
    case("serve-min-4", [a100(**hourly(min_hours=4))], [chat(window(9, 12, 50))], "40.00"),
    # the older rental ends first: 09-12 and 10-13, 3 h each, above the 2 h minimum
    case("serve-min-2-rise", [a100(**hourly(min_hours=2))], [chat(R1221)], "60.00"),
    # two rentals of at least 4 h
    case("serve-min-4-rise", [a100(**hourly(min_hours=4))], [chat(R1221)], "80.00"),
    # one rental kept through the 1 h dip (3 h) beats two at the 3 h minimum (6 h)
    case("serve-min-3-dip", [a100(**hourly(min_hours=3))], [chat(DIP)], "30.00"),
    # kept 09-16 (7 h) beats two rentals at the 4 h minimum (8 h)
    case("serve-min-4-far", [a100(**hourly(min_hours=4))], [chat(FAR)], "70.00"),
    # 2 h steps: the newer rental ends first, 09-13 and 10-12
    case("serve-step-2", [a100(**hourly(increment_hours=2))], [chat(R1221)], "60.00"),
    # 2 h steps: the older ends first, 09-11 and 10-14
    case("serve-step-2-older", [a100(**hourly(increment_hours=2))], [chat(R12111)], "60.00"),
    case(
        "serve-min-4-step-2",
        [a100(**hourly(min_hours=4, increment_hours=2))],
        [chat(R1221)],
        "80.00",
    ),
    # setup 1 h held before serving: 08-12 and 09-13, 4 h each, over the 2 h minimum
    case("serve-setup-min-2", [a100(60, **hourly(min_hours=2))], [chat(R1221)], "80.00"),
    # setup 1 h, minimum 3 h: kept 08-12 through the dip
    case("serve-setup-min-3-dip", [a100(60, **hourly(min_hours=3))], [chat(DIP)], "40.00"),
    case("serve-setup", [a100(60, **hourly())], [chat(window(9, 12, 50))], "40.00"),  # 08-12
    # --- max_cards_per_replica: 201 requests need 3 one-card replicas (100 each) or one of two
    # cards (201)
    case("cap-1", [a100(**hourly())], [chat(window(9, 12, 201), cap=1)], "90.00"),
    case("cap-2", [a100(**hourly())], [chat(window(9, 12, 201), cap=2)], "60.00"),
    case("no-cap", [a100(**hourly())], [chat(window(9, 12, 201), cap=None)], "60.00"),
    case(
        "cap-2-step-2",
        [a100(**hourly(increment_hours=2))],
        [chat(window(9, 12, 201), cap=2)],
        "80.00",
    ),
    case(
        "cap-1-step-2",
        [a100(**hourly(increment_hours=2))],
        [chat(window(9, 12, 201), cap=1)],
        "120.00",
    ),
    case("70b-cap-4", [a100(**hourly())], [big(window(9, 12, 50), 4)], "120.00"),  # 4 cards, 3 h
    case("70b-cap-2", [a100(**hourly())], [big(window(9, 12, 50), 2)], "infeasible"),
    # 4 units x 4 h at the minimum
    case("70b-cap-4-min-4", [a100(**hourly(min_hours=4))], [big(window(9, 11, 50), 4)], "160.00"),
    # rented 8-card units: each replica a whole unit, 2 x 3 h x 80; one 2-card replica: 240
    case("machine-cap-1", [machine(**hourly(80))], [chat(window(9, 12, 150), cap=1)], "480.00"),
    case("machine-cap-2", [machine(**hourly(80))], [chat(window(9, 12, 150), cap=2)], "240.00"),
    # held machines: two 4-card replicas on one, four on two
    case(
        "70b-machine-day", [machine(daily={"price": 500})], [big(window(9, 12, 150), 4)], "500.00"
    ),
    case(
        "70b-machines-day", [machine(daily={"price": 500})], [big(window(9, 12, 300), 4)], "1000.00"
    ),
    # a serve with one-card replicas and a windowed job on one held machine
    case(
        "machine-cap-1-window",
        [machine(daily={"price": 500})],
        [chat(window(9, 12, 150), cap=1), job("j", 4, daily_hours="08:00-22:00")],
        "500.00",
    ),
    # 2 hourly rentals above a daily package's one replica: 200 + 2 x 3 h x 10
    case(
        "package-and-peak",
        [machine(1, **hourly(), daily={"price": 200})],
        [chat({"00-09": 100, "09-12": 210, "12-24": 100}, cap=1)],
        "260.00",
    ),
    # --- min_hold_hours
    case("hold-3", [a100(**hourly())], [chat(R1221, min_hold_hours=3)], "60.00"),  # 09-12, 10-13
    case("hold-4", [a100(**hourly())], [chat(R1221, min_hold_hours=4)], "80.00"),  # 09-13, 10-14
    # per 2 h with setup 1 h: 08-12 and 09-13, each serving 3 h
    case(
        "hold-3-step-2-setup",
        [a100(60, **hourly(increment_hours=2))],
        [chat(R1221, min_hold_hours=3)],
        "80.00",
    ),
    # --- reserve
    case("reserve-2-cards", [a100(**hourly())], [desk("09:00-17:00", cards=2)], "160.00"),
    case(
        "reserve-min-3-step-2",
        [a100(**hourly(min_hours=3, increment_hours=2))],
        [desk("09:00-10:00")],
        "40.00",  # max(1, 3) = 3 h, 2 steps
    ),
    case("reserve-step-0.75", [a100(**hourly(increment_hours=0.75))], [desk()], "30.00"),  # 4 steps
    case(
        "reserve-step-0.75-2h",
        [a100(**hourly(increment_hours=0.75))],
        [desk("09:00-11:00")],
        "22.50",
    ),
    # 4 h in 1.5 h steps: 4.5 h
    case(
        "reserve-step-1.5-min-3",
        [a100(**hourly(min_hours=3, increment_hours=1.5))],
        [desk("09:00-13:00")],
        "45.00",
    ),
    # a fractional minimum: 2.5 h for 1 h
    case(
        "reserve-min-2.5",
        [a100(**hourly(min_hours=2.5, increment_hours=0.5))],
        [desk("09:00-10:00")],
        "25.00",
    ),
    # --- daylight saving: real hours
    case(
        "dst-25-reserve",
        [a100(**hourly())],
        [desk("00:00-24:00", day="2026-10-25")],
        "250.00",
        **BERLIN_25,
    ),
    case(
        "dst-23-reserve",
        [a100(**hourly())],
        [desk("00:00-24:00", day="2026-03-29")],
        "230.00",
        **BERLIN_23,
    ),
    case(
        "dst-25-serve-ny", [a100(**hourly())], [chat(50, day="2026-11-01")], "250.00", **NEW_YORK_25
    ),
    case(
        "dst-23-serve-ny", [a100(**hourly())], [chat(50, day="2026-03-08")], "230.00", **NEW_YORK_23
    ),
    # a daily package of 240 covers the 25 h day; the 23 h day is cheaper hourly
    case(
        "dst-25-package",
        [a100(**hourly(), daily={"price": 240})],
        [desk("00:00-24:00", day="2026-10-25")],
        "240.00",
        **BERLIN_25,
    ),
    case(
        "dst-23-package",
        [a100(**hourly(), daily={"price": 240})],
        [desk("00:00-24:00", day="2026-03-29")],
        "230.00",
        **BERLIN_23,
    ),
    # 25 h and 23 h held, per 2 h: 26 and 24 h
    case(
        "dst-25-step-2",
        [a100(**hourly(increment_hours=2))],
        [desk("00:00-24:00", day="2026-10-25")],
        "260.00",
        **BERLIN_25,
    ),
    case(
        "dst-23-step-2-ny",
        [a100(**hourly(increment_hours=2))],
        [desk("00:00-24:00", day="2026-03-08")],
        "240.00",
        **NEW_YORK_23,
    ),
    # 25 h = 33.3 steps of 0.75 h: 34 steps, 25.5 h; 23 h: 31 steps, 23.25 h
    case(
        "dst-25-step-0.75",
        [a100(**hourly(increment_hours=0.75))],
        [desk("00:00-24:00", day="2026-10-25")],
        "255.00",
        **BERLIN_25,
    ),
    case(
        "dst-23-step-0.75-ny",
        [a100(**hourly(increment_hours=0.75))],
        [desk("00:00-24:00", day="2026-03-08")],
        "232.50",
        **NEW_YORK_23,
    ),
    # 01:00-03:00 on the autumn change day is 3 real hours: per 2 h, 4 h
    case(
        "dst-25-repeated-hour",
        [a100(**hourly(increment_hours=2))],
        [desk("01:00-03:00", day="2026-10-25")],
        "40.00",
        **BERLIN_25,
    ),
    # 01:00-04:00 on the spring change day is 2 real hours: the 3 h minimum
    case(
        "dst-23-missing-hour",
        [a100(**hourly(min_hours=3))],
        [chat({"00-01": 0, "01-04": 50, "04-24": 0}, day="2026-03-29")],
        "30.00",
        **BERLIN_23,
    ),
    # 00:00-06:00 on the change day is 7 or 5 real hours: a job of that much work
    case(
        "dst-25-window",
        [a100(**hourly())],
        [job("j", 7, daily_hours="00:00-06:00", earliest_start="2026-10-25")],
        "70.00",
        3,
        **BERLIN_25,
    ),
    case(
        "dst-23-window-ny",
        [a100(**hourly())],
        [job("j", 5, daily_hours="00:00-06:00", earliest_start="2026-03-08")],
        "50.00",
        3,
        **NEW_YORK_23,
    ),
    # the 7 h run at the 8 h minimum; split over two days it would bill 8 + 8
    case(
        "dst-25-window-min-8",
        [a100(**hourly(min_hours=8))],
        [job("j", 7, daily_hours="00:00-06:00", earliest_start="2026-10-25")],
        "80.00",
        3,
        **BERLIN_25,
    ),
    # a weekly package of 1,500 covers 169 real hours (1,690 hourly)
    case(
        "dst-25-weekly",
        [a100(**hourly(), weekly={"price": 1500})],
        [reserve("desk", 1, "00:00-24:00", start="2026-10-25", end="2026-11-01")],
        "1500.00",
        7,
        **BERLIN_25,
    ),
    # --- storage (rule 9): 10 GB at 0.1 per GB-hour = 1 per held hour and disk
    case("storage-train", [{**a100(**hourly()), **DISK}], [job("j", 5, disk_gb=10)], "55.00"),
    case(
        "storage-serve",
        [{**a100(**hourly()), **DISK}],
        [chat(window(9, 12, 50), disk_gb=10)],
        "33.00",
    ),
    case("storage-reserve", [{**a100(**hourly()), **DISK}], [desk(cards=2, disk_gb=10)], "66.00"),
    # held hours only: 3 h of disk, 4 h billed per 2 h
    case(
        "storage-step-2",
        [{**a100(**hourly(increment_hours=2)), **DISK}],
        [desk(disk_gb=10)],
        "43.00",
    ),
    # --- stock (rule 7)
    case(
        "stock-one-after-another",
        [a100(**hourly(stock=1))],
        [job("a", 5), job("b", 5, deadline="2026-07-01T10:00")],
        "100.00",
    ),
    # one replica on `a` (stock 1), the other on the dearer `b`: 30 + 45
    case(
        "stock-spill",
        [offer("a", hourly={"price": 10, "stock": 1}), offer("b", hourly={"price": 15})],
        [chat(window(9, 12, 150))],
        "75.00",
    ),
    case("stock-short", [a100(**hourly(stock=1))], [desk(cards=2)], "infeasible"),
    # --- commitments (rule 8): paid in full, used like any other rental
    case(
        "commitment-hourly",
        [a100(**hourly())],
        [job("j", 5)],
        "100.00",  # 10 h committed; the job runs on them
        commitments=[
            {
                "offer": "o",
                "mode": "hourly",
                "units": 1,
                "start": "2026-07-01T00:00",
                "end": "2026-07-01T10:00",
            }
        ],
    ),
    case(
        "commitment-daily",
        [a100(**hourly(), daily={"price": 100})],
        [job("j", 5)],
        "100.00",
        commitments=[{"offer": "o", "mode": "daily", "units": 1, "start": "2026-07-01"}],
    ),
    # 2 committed units carry two replicas; a third is rented: 60 + 30
    case(
        "commitment-and-rental",
        [a100(**hourly())],
        [chat(window(9, 12, 250))],
        "90.00",
        commitments=[
            {
                "offer": "o",
                "mode": "hourly",
                "units": 2,
                "start": "2026-07-01T09:00",
                "end": "2026-07-01T12:00",
            }
        ],
    ),
    # --- spot: 30 min checkpoints, 10 min restarts, 0.05 preemptions an hour: 10 h of work
    # take 10 x (1 + 0.05 x 25/60) = 10.21 h, held 11 h at 5
    case(
        "spot",
        [a100(**hourly(), spot={"price": 5, **SPOT})],
        [job("j", 10, checkpoint_every="30m")],
        "55.00",
    ),
    case(
        "spot-min-12",
        [a100(**hourly(), spot={"price": 5, "min_hours": 12, "preemptions_per_hour": 0})],
        [job("j", 10, checkpoint_every="30m")],
        "60.00",
    ),
    # serving never runs on spot: hourly at 20
    case(
        "spot-not-for-serving",
        [a100(**hourly(20), spot={"price": 5})],
        [chat(window(9, 12, 50))],
        "60.00",
    ),
]


@pytest.mark.parametrize(("offers", "workloads", "days", "where", "total"), CASES)
def test_the_hand_worked_optimum(
    make_scenario: Any,
    offers: list[dict[str, Any]],
    workloads: list[dict[str, Any]],
    days: int,
    where: dict[str, Any],
    total: str,
) -> None:
    result = solved(make_scenario(offers, workloads, days, **where))
    if total == "infeasible":
        assert result.status == "infeasible" and result.plan is None
        return
    assert result.plan is not None, result.reasons
    assert result.inconsistency is None
    assert result.status == "optimal"
    assert result.plan.total_cost == Decimal(total)
