"""The reputation circuit breaker: a bad list must not burn the sending account.

Bounce and complaint rates are measured over a sliding window of receipts; crossing a
project's threshold pauses the campaign and records why.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class WindowCounts:
    sent: int  # deliveries of the campaign accepted by the provider in the window
    bounced: int
    complained: int
    delivered: int = 0

    @property
    def judged(self) -> int:
        """The denominator: messages whose fate is known. Receipts lag sends, so dividing
        by sends would understate a bad list early on; a provider that reports no
        deliveries at all leaves sends as the only measure."""
        if self.delivered:
            return self.delivered + self.bounced + self.complained
        return self.sent


@dataclass(frozen=True)
class BreakerVerdict:
    trip: bool
    reason: str = ""
    metric: str = ""
    rate: float = 0.0


def breaker_evaluate(
    counts: WindowCounts, *, bounce_threshold: Decimal, complaint_threshold: Decimal, min_sample: int
) -> BreakerVerdict:
    judged = counts.judged
    if judged < min_sample:
        return BreakerVerdict(False)
    bounce_rate = counts.bounced / judged
    complaint_rate = counts.complained / judged
    if bounce_rate > float(bounce_threshold):
        return BreakerVerdict(
            True,
            f"Bounce rate {bounce_rate:.2%} over the last {judged} messages crossed the "
            f"{float(bounce_threshold):.2%} threshold.",
            "bounce",
            bounce_rate,
        )
    if complaint_rate > float(complaint_threshold):
        return BreakerVerdict(
            True,
            f"Complaint rate {complaint_rate:.3%} over the last {judged} messages crossed the "
            f"{float(complaint_threshold):.3%} threshold.",
            "complaint",
            complaint_rate,
        )
    return BreakerVerdict(False)
