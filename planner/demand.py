"""Serving demand per hour: the concurrency curve (or arrivals by Little's law), monthly
growth and month scales, over the horizon. The first step of planning `serve` workloads.
"""

from __future__ import annotations

import datetime as dt
import math

from planner.domain.scenario import Scenario
from planner.domain.values import instant_datetime
from planner.domain.workload import ServeWorkload

ROUNDING_SLACK = 1e-9  # 48.000000001 requests in flight is 48, not 49


def seconds_per_request(workload: ServeWorkload) -> float:
    """How long one request holds its slot: its output at the minimum decode speed (Little's
    law; prefill time is not counted)."""
    assert workload.output_tokens is not None
    return workload.output_tokens / workload.min_tokens_per_s


def demand_at(workload: ServeWorkload, when: dt.datetime) -> int:
    """Requests in flight in the hour starting at naive local wall-clock time `when` (0
    outside start..end; `hourly_demand` decides that on the time axis)."""
    if not instant_datetime(workload.start) <= when < instant_datetime(workload.end):
        return 0
    if workload.concurrency is not None:
        level = workload.concurrency.at(when.weekday(), when.hour)
    else:
        assert workload.requests_per_s is not None
        level = workload.requests_per_s.at(when.weekday(), when.hour)
        level *= seconds_per_request(workload)
    first = instant_datetime(workload.start)
    months = (when.year - first.year) * 12 + when.month - first.month
    level *= workload.demand_share  # a request class's share of its workload's curve
    level *= (1 + workload.growth_per_month) ** months
    level *= workload.month_scale.get(f"{when:%Y-%m}", 1.0)
    return math.ceil(level - ROUNDING_SLACK)


def hourly_demand(scenario: Scenario, workload: ServeWorkload) -> list[int]:
    """Demand for every real hour of the horizon, hour 0 first: the curve read at the local
    wall-clock time of each hour (the repeated hour of a fall-back change reads the curve
    twice; a spring-forward gap's hour is never read)."""
    axis = scenario.axis
    first, last = axis.hour_of_local(workload.start), axis.hour_of_local(workload.end)
    return [
        demand_at(workload, axis.local(h)) if first <= h < last else 0 for h in range(axis.hours)
    ]
