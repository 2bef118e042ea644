"""AIMD decisions and breaker verdicts as pure functions."""

from __future__ import annotations

from decimal import Decimal

from apps.campaigns.aimd import AimdParams, aimd_next
from apps.campaigns.breaker import WindowCounts, breaker_evaluate

PARAMS = AimdParams(min_rate=10, max_rate=1000, increase_step=50, decrease_factor=0.5)


def test_aimd_increases_additively_while_clean_up_to_the_ceiling() -> None:
    assert aimd_next(100, ok=500, throttled=0, params=PARAMS).target_rate == 150
    assert aimd_next(990, ok=500, throttled=0, params=PARAMS).target_rate == 1000


def test_aimd_halves_on_throttling_down_to_the_floor() -> None:
    decision = aimd_next(400, ok=80, throttled=20, params=PARAMS)
    assert (decision.action, decision.target_rate) == ("decrease", 200)
    assert aimd_next(15, ok=80, throttled=20, params=PARAMS).target_rate == 10


def test_aimd_ignores_a_stray_throttle_and_holds_when_idle() -> None:
    assert aimd_next(100, ok=1000, throttled=1, params=PARAMS).action == "increase"
    assert aimd_next(100, ok=0, throttled=0, params=PARAMS).action == "hold"


def test_breaker_trips_on_bounces_over_threshold_only_with_enough_sample() -> None:
    kwargs = {"bounce_threshold": Decimal("0.05"), "complaint_threshold": Decimal("0.001"), "min_sample": 200}
    assert not breaker_evaluate(WindowCounts(100, 50, 0), **kwargs).trip
    verdict = breaker_evaluate(WindowCounts(1000, 80, 0), **kwargs)
    assert verdict.trip and verdict.metric == "bounce" and "8.00%" in verdict.reason
    assert not breaker_evaluate(WindowCounts(1000, 40, 1), **kwargs).trip
    assert breaker_evaluate(WindowCounts(1000, 0, 2), **kwargs).metric == "complaint"


def test_breaker_judges_by_receipts_so_lagging_receipts_do_not_hide_a_bad_list() -> None:
    kwargs = {"bounce_threshold": Decimal("0.05"), "complaint_threshold": Decimal("0.001"), "min_sample": 200}
    # 1000 sent, only 400 receipts back yet: 32 bounces are 8% of what is known.
    assert breaker_evaluate(WindowCounts(1000, 32, 0, delivered=368), **kwargs).trip
