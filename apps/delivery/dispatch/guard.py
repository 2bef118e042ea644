"""Keeping one broken message from taking its batch down.

Inside a group, every message is rendered, decorated and classified under its own guard
(``process``). What still escapes a group (a hook that runs once for the whole group, a
bug) sends the group again one message at a time, so only the message that makes it fail
is charged; recording falls back the same way. The database or Redis out of reach is no
message's fault: the group is put back as it was, to go again shortly.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone

from apps.core.errors import exception_reason
from apps.delivery.dispatch.claim import Claimed
from apps.delivery.dispatch.outcome import TRANSIENT_ERRORS, RowResult
from apps.delivery.dispatch.process import process_group
from apps.delivery.dispatch.record import record_results

log = logging.getLogger(__name__)

TRANSIENT_RETRY_SECONDS = 5.0


def _broken(row: Claimed, exc: Exception) -> RowResult:
    return RowResult(
        row,
        "failed",
        reason=f"dispatch failed: {exception_reason(exc)}",
        code="dispatch_error",
        snapshot={"template_version_id": row.template_version_id, "context": row.context, "content": row.content},
    )


def _put_back(rows: list[Claimed], exc: Exception) -> list[RowResult]:
    # Not tried, so no attempt is spent and the crash count stays as it is.
    due = timezone.now() + timedelta(seconds=TRANSIENT_RETRY_SECONDS)
    return [RowResult(row, "queued", reason=f"deferred: {exception_reason(exc)}", due_at=due) for row in rows]


def group_process(project_id: int, channel: str, connector_id: int | None, rows: list[Claimed]) -> list[RowResult]:
    """``process_group``, with a failure of the whole group narrowed down to its messages."""
    try:
        return process_group(project_id, channel, connector_id, rows)
    except TRANSIENT_ERRORS as exc:
        log.warning("dispatch of %d deliveries of project %s put back: %s", len(rows), project_id, exc)
        return _put_back(rows, exc)
    except Exception as exc:
        if len(rows) == 1:
            log.exception("delivery %s of project %s failed to dispatch", rows[0].id, project_id)
            return [_broken(rows[0], exc)]
        log.exception("a group of %d deliveries of project %s failed; one at a time now", len(rows), project_id)
    results: list[RowResult] = []
    for row in rows:
        results += group_process(project_id, channel, connector_id, [row])
    return results


def _plain(result: RowResult) -> RowResult:
    """The same verdict without the free-form parts (provider text, snapshot, response)
    that are what a database may refuse."""

    def clean(text: str) -> str:
        return text.replace("\x00", "")

    return RowResult(
        result.row,
        result.state,
        reason=clean(result.reason),
        due_at=result.due_at,
        attempted=result.attempted,
        outcome=result.outcome,
        code=clean(result.code),
        reference=clean(result.reference),
        latency_ms=result.latency_ms,
        throttled=result.throttled,
        connector_id=result.connector_id,
        account=result.account,
        extra=dict(result.extra),
    )


def batch_record(token: int, results: list[RowResult]) -> list[RowResult]:
    """``record_results``; when the batch cannot be recorded, each row is, on its own."""
    try:
        return record_results(token, results, timezone.now())
    except TRANSIENT_ERRORS:
        raise  # nothing can be written; the claim runs out and the sweeper takes the rows back
    except Exception:
        if len(results) == 1:
            raise
        log.exception("recording a batch of %d results failed; one at a time now", len(results))
    kept: list[RowResult] = []
    for result in results:
        try:
            kept += record_results(token, [result], timezone.now())
        except TRANSIENT_ERRORS:
            raise
        except Exception as exc:
            log.exception("delivery %s: its result could not be recorded", result.row.id)
            plain = _plain(result)
            if plain.state != "sent":
                plain.state, plain.due_at = "failed", None
                plain.reason = f"recording failed: {exception_reason(exc)}"
            kept += record_results(token, [plain], timezone.now())
    return kept
