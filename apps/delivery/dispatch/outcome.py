"""What happened to one claimed delivery in this batch, before it is recorded."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import InterfaceError, OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from apps.delivery.dispatch.claim import Claimed


@dataclass(slots=True)
class RowResult:
    row: Claimed
    state: str  # sent | retrying | failed | suppressed | opted_out | queued (deferred by the rate gate)
    reason: str = ""
    due_at: datetime | None = None
    attempted: bool = False
    outcome: str = ""  # the Attempt's outcome when attempted
    code: str = ""
    message: str = ""
    reference: str = ""
    latency_ms: int | None = None
    throttled: bool = False
    snapshot: dict[str, Any] | None = None
    connector_id: int | None = None
    account: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    response: dict[str, Any] | None = None
    # The compressed content as sent, for an accepted send (apps.delivery.dispatch.sent_content).
    sent_content: bytes | None = None

    @property
    def attempts_after(self) -> int:
        return self.row.attempts + 1 if self.attempted else self.row.attempts


# The database or Redis out of reach: nothing to do with any one message. These are never
# charged to a row; its batch is put back to go again once they answer.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    RedisConnectionError,
    RedisTimeoutError,
)
