"""A plan's placements, to keep where keeping them costs nothing.

`plan whatif` re-solves a variant proven optimal with its base plan as the first tie level
(before rule 12's (docs/rules.md)): among the variant's plans of the optimal cost, the fewest
train workloads off their base card, count, offer, mode and start hour, and the fewest
replicas on a config (card, count, offer, mode) its workload did not use at that hour in the
base. What the diff then shows moved, moved because of the change.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from planner.domain.plan import Plan
from planner.domain.timeaxis import TimeAxis, TimeAxisError

# card, cards, offer, mode: a placement as a person reads it
Place = tuple[str, int, str, str]


@dataclass(frozen=True)
class Reference:
    train: dict[str, tuple[Place, int]]  # workload → its place and start hour
    # workload → (from hour, to hour, place) for each run of replicas
    replica: dict[str, tuple[tuple[int, int, Place], ...]]

    @staticmethod
    def of(plan: Plan, axis: TimeAxis) -> Reference:
        """The placements of `plan`, in hours of `axis` (the variant's: a workload whose
        base start falls off the variant's horizon has no start to keep)."""

        def hour(when: dt.datetime) -> int | None:
            try:
                return axis.hour(when)
            except TimeAxisError:  # off the variant's hour grid: nothing there to keep
                return None

        train = {}
        for t in plan.train:
            start = hour(t.start)
            if start is not None and 0 <= start < axis.hours:
                train[t.workload] = ((t.card, t.cards, t.offer, t.mode), start)
        replica = {}
        for r in plan.replica:
            runs = []
            for u in r.uses:
                a, b = hour(u.start), hour(u.end)
                if a is not None and b is not None:
                    runs.append((a, b, (u.card, u.cards, u.offer, u.mode)))
            replica[r.workload] = tuple(runs)
        return Reference(train, replica)

    def replica_places(self, workload: str, hour: int) -> set[Place]:
        """The configs `workload` ran replicas on at `hour` in the reference plan."""
        return {place for a, b, place in self.replica.get(workload, ()) if a <= hour < b}
