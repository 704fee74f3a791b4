"""One vocabulary of cost terms (docs/rules.md, rules 9-10), used by the objective, the
solution's pricing, the checker's breakdown, the reports and the plan JSON."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from fractions import Fraction


class CostTerm(StrEnum):
    """What money is paid for (PAID) and what it bought but did not use (REPORTED)."""

    HOURLY = "hourly"  # hourly rentals: billed unit-hours × price
    SPOT = "spot"  # spot rentals, billed like hourly
    PACKAGE = "package"  # daily/weekly/monthly packages bought by the plan
    COMMITMENT = "commitment"  # rentals fixed in advance
    STORAGE = "storage"  # disk per GB-month of 720 h
    ROUND_UP = "round_up"  # billed − held unit-hours of hourly and spot rentals
    IDLE = "idle"  # held package (and committed) card-hours no workload uses
    SETUP = "setup"  # card-hours spent on image and weight downloads
    SCALING_LOSS = "scaling_loss"  # card-hours lost to multi-card scaling efficiency
    SPOT_REWORK = "spot_rework"  # card-hours expected to be redone after preemptions
    BEYOND_HORIZON = "beyond_horizon"  # package card-hours after the horizon end


PAID = (CostTerm.HOURLY, CostTerm.SPOT, CostTerm.PACKAGE, CostTerm.COMMITMENT, CostTerm.STORAGE)
REPORTED = (
    CostTerm.ROUND_UP,
    CostTerm.IDLE,
    CostTerm.SETUP,
    CostTerm.SCALING_LOSS,
    CostTerm.SPOT_REWORK,
    CostTerm.BEYOND_HORIZON,
)
# Reported terms that also carry what they cost.
PRICED = (CostTerm.ROUND_UP, CostTerm.IDLE)
# The unit each reported term is counted in.
REPORTED_UNIT = {
    CostTerm.ROUND_UP: "unit-hours",
    CostTerm.IDLE: "card-hours",
    CostTerm.SETUP: "card-hours",
    CostTerm.SCALING_LOSS: "card-hours",
    CostTerm.SPOT_REWORK: "card-hours",
    CostTerm.BEYOND_HORIZON: "card-hours",
}


def reported_amount(hours: Fraction) -> Decimal:
    """A reported amount of unit- or card-hours, rounded once, half-even, to 0.01 h."""
    exact = hours * 100
    quotient, remainder = divmod(exact.numerator, exact.denominator)
    if 2 * remainder > exact.denominator or (2 * remainder == exact.denominator and quotient % 2):
        quotient += 1
    return Decimal(quotient).scaleb(-2).quantize(Decimal("0.01"))
