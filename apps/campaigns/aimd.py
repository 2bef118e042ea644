"""AIMD rate control: find the rate a provider account really grants.

Like TCP congestion control: while sends are clean the target grows by a fixed step; a
throttling answer (429, SES 454, quota) cuts it by a factor. The decision is a pure
function; ``aimd_step`` applies it to one provider account's shared token bucket.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AimdParams:
    min_rate: float
    max_rate: float
    increase_step: float
    decrease_factor: float
    # Throttled share of answers tolerated before cutting: one stray 429 in thousands of
    # sends is noise, not a ceiling.
    throttle_tolerance: float = 0.01


@dataclass(frozen=True)
class AimdDecision:
    target_rate: float
    action: str  # increase | decrease | hold


def aimd_next(target_rate: float, *, ok: int, throttled: int, params: AimdParams) -> AimdDecision:
    """The next target rate after a control interval that saw ``ok`` accepted sends and
    ``throttled`` throttling answers."""
    total = ok + throttled
    if total and throttled / total > params.throttle_tolerance:
        return AimdDecision(max(params.min_rate, target_rate * params.decrease_factor), "decrease")
    if ok:
        # Only grow when sends are actually flowing; an idle account keeps its rate
        # instead of drifting to the ceiling and bursting when work arrives.
        return AimdDecision(min(params.max_rate, target_rate + params.increase_step), "increase")
    return AimdDecision(min(max(target_rate, params.min_rate), params.max_rate), "hold")
