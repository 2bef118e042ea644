"""How the delivery engine tells an origin (journey step, campaign…) about outcomes.

Origins register a listener for their kind; the dispatcher calls it, in batches, inside
the transaction that records final states. This keeps imports pointing down: delivery
never imports the apps that send through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

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
