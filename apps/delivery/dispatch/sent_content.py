"""The content of each sent message, kept as it went out: compressed by the worker, copied in
with the batch's record."""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from apps.delivery.dispatch.outcome import RowResult

log = logging.getLogger(__name__)

SENT_CONTENT_COLUMNS = "project_id, delivery_id, created_at, content"


def sent_content_pack(content: dict[str, Any]) -> bytes | None:
    """The content handed to the adapter, as compact JSON under zlib. Done in the worker
    before the recording transaction opens, so the transaction only copies bytes."""
    try:
        # Level 1: rendered HTML is repetitive enough that it gets most of level 6's ratio
        # for about half the worker's time, and this runs once per message.
        return zlib.compress(json.dumps(content, separators=(",", ":"), default=str).encode(), 1)
    except Exception:
        # The provider has accepted the message: a copy we cannot make must not turn that
        # send into a failure (and a resend). The message goes without its snapshot.
        log.warning("sent content could not be kept", exc_info=True)
        return None


def sent_content_unpack(data: bytes | memoryview) -> dict[str, Any]:
    return json.loads(zlib.decompress(bytes(data)))


def sent_content_copy(cursor: Any, kept: Iterable[RowResult], now: datetime) -> None:
    """One COPY for the whole batch, inside the record's transaction: a snapshot exists
    exactly when its delivery was recorded as sent."""
    # The COPY text is built in one join, as the attempts' is, rather than adapting every
    # value through write_row on the worker's hot path. Bytea goes as hex (``\\x``).
    at = now.isoformat()
    lines = "".join(
        f"{int(r.row.project_id)}\t{int(r.row.id)}\t{at}\t\\\\x{r.sent_content.hex()}\n"
        for r in kept
        if r.sent_content is not None
    )
    if not lines:
        return
    with cursor.cursor.copy(f"COPY delivery_sentcontent ({SENT_CONTENT_COLUMNS}) FROM STDIN") as copy:
        copy.write(lines)
