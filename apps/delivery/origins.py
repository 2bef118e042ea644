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
    state: str  # sent | delivered | failed | dead | suppressed | cancelled
    reason: str = ""


OriginListener = Callable[[Sequence[FinalOutcome]], None]
origin_listeners: Registry[OriginListener] = Registry("origin listener")


# An origin may add to each rendered message before it is sent (campaigns add their
# RFC 8058 List-Unsubscribe headers, signed per recipient). The dispatcher calls this once
# per batch with (row, content) pairs; rows carry project_id, origin_kind, origin_id and
# destination. A decorator returns the content to send for one row.
ContentDecorator = Callable[[Any, dict[str, Any]], dict[str, Any]]
origin_content_decorators: Registry[ContentDecorator] = Registry("origin content decorator")


def origin_contents_decorate(ready: list[tuple[Any, dict[str, Any]]]) -> list[tuple[Any, dict[str, Any]]]:
    out = []
    for row, content in ready:
        if row.origin_kind in origin_content_decorators:
            content = origin_content_decorators.get(row.origin_kind)(row, content)
        out.append((row, content))
    return out
