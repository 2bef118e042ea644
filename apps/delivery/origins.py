"""How the delivery engine tells an origin (journey step, campaign…) about outcomes.

Origins register a listener for their kind; the dispatcher calls it, in batches, inside
the transaction that records final states. This keeps imports pointing down: delivery
never imports the apps that send through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from apps.core.registry import Registry


@dataclass(frozen=True)
class FinalOutcome:
    delivery_id: int
    project_id: int
    origin_kind: str
    origin_id: str
    # Delivery.State values: sent | failed (= dead letter) | suppressed | opted_out | cancelled
    # from the dispatcher and cancel; delivered | bounced | complained from receipts.
    state: str
    reason: str = ""


OriginListener = Callable[[Sequence[FinalOutcome]], None]
origin_listeners: Registry[OriginListener] = Registry("origin listener")


# An origin may add to each rendered message before it is sent (campaigns add their
# RFC 8058 List-Unsubscribe headers, signed per recipient). The dispatcher calls it for
# each rendered message with (row, content); rows carry project_id, origin_kind, origin_id
# and destination. A decorator returns the content to send for one row; one that raises
# fails that row only.
ContentDecorator = Callable[[Any, dict[str, Any]], dict[str, Any]]
origin_content_decorators: Registry[ContentDecorator] = Registry("origin content decorator")


def origin_content_decorator(origin_kind: str) -> ContentDecorator | None:
    """The decorator ``origin_kind`` registered, if any (looked up once per kind and batch)."""
    return origin_content_decorators.get(origin_kind) if origin_kind in origin_content_decorators else None


# An origin may hold back claimed rows it does not want sent now (a paused campaign's rows
# that were re-queued by a batch in flight when it paused). Called once per claimed group;
# returns {delivery id: (state, due_at, reason)} for the rows to put back instead of sending.
HoldCheck = Callable[[Sequence[Any]], dict[int, tuple[str, Any, str]]]
origin_hold_checks: Registry[HoldCheck] = Registry("origin hold check")


def origin_claims_screen(rows: Sequence[Any]) -> dict[int, tuple[str, Any, str]]:
    held: dict[int, tuple[str, Any, str]] = {}
    kinds = {row.origin_kind for row in rows}
    for kind in kinds:
        if kind in origin_hold_checks:
            held.update(origin_hold_checks.get(kind)([r for r in rows if r.origin_kind == kind]))
    return held


# An origin may give its rows a token bucket of their own, reserved in addition to the
# connector's and the provider account's (a campaign's ceiling and AIMD target). Called
# per row of a claimed group; returns the bucket's key, or None for no bucket of its own.
RateBucket = Callable[[Any], str | None]
origin_rate_buckets: Registry[RateBucket] = Registry("origin rate bucket")


def origin_rate_bucket(row: Any) -> str | None:
    if row.origin_kind in origin_rate_buckets:
        return origin_rate_buckets.get(row.origin_kind)(row)
    return None


# Origins whose pages show each message exactly as it was sent (a journey's path) ask for
# its content to be kept. The others do not pay for a copy nobody reads: compressing a
# million campaign messages costs the bulk lane about a fifth of its worker time.
origin_sent_content_keepers: Registry[bool] = Registry("origin that keeps sent content")


def origin_keeps_sent_content(origin_kind: str) -> bool:
    return origin_kind in origin_sent_content_keepers
