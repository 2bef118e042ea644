"""One group of a claimed batch (same project, channel, connector): screen, gate, render, send."""

from __future__ import annotations

import logging
import random
import time
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from apps.core.dbcompat import COPY_NULL
from apps.core.errors import NotFound, exception_reason
from apps.delivery import ratelimit
from apps.delivery.channels.base import OutboundMessage, Outcome, SendResult
from apps.delivery.dispatch.claim import Claimed
from apps.delivery.dispatch.outcome import TRANSIENT_ERRORS, RowResult
from apps.delivery.dispatch.prepare import (
    Sender,
    opted_out,
    sender_for,
    subscribers_load,
    suppressed_addresses,
    versions_load,
)
from apps.delivery.dispatch.sent_content import sent_content_pack
from apps.delivery.origins import (
    ContentDecorator,
    origin_claims_screen,
    origin_content_decorator,
    origin_keeps_sent_content,
    origin_rate_bucket,
)
from apps.delivery.rendering import TemplateError, render_context, renderer
from apps.delivery.services.suppression import address_normalise

log = logging.getLogger(__name__)

ATTEMPT_COLUMNS = "project_id, delivery_id, number, connector_id, started_at, outcome, provider_code, provider_message"


def backoff_seconds(channel: str, attempts: int, retry_after: float | None = None) -> float:
    """min(base · 2^attempt + jitter, cap), never sooner than the provider asked."""
    policy = {**settings.TIDINGS_RETRY_POLICY.get("default", {}), **settings.TIDINGS_RETRY_POLICY.get(channel, {})}
    base, cap = float(policy["base_seconds"]), float(policy["cap_seconds"])
    delay = min(base * (2 ** max(attempts - 1, 0)) + random.uniform(0, base), cap)
    return max(delay, retry_after or 0.0)


def _screen(project_id: int, channel: str, rows: list[Claimed]) -> tuple[list[Claimed], list[RowResult]]:
    suppressed = suppressed_addresses(project_id, channel, rows)
    opt_outs = opted_out(project_id, channel, rows)
    keep: list[Claimed] = []
    ended: list[RowResult] = []
    for row in rows:
        if suppressed and address_normalise(channel, row.destination) in suppressed:
            ended.append(RowResult(row, "suppressed", reason=f"{row.destination} is on the suppression list"))
            continue
        categories = opt_outs.get(row.subscriber_id) if row.subscriber_id is not None else None
        if categories and ("" in categories or (row.category and row.category in categories)):
            which = "" if "" in categories else f" category {row.category}"
            ended.append(RowResult(row, "opted_out", reason=f"subscriber opted out of {channel}{which}"))
            continue
        keep.append(row)
    return keep, ended


def _gate(sender: Sender, rows: list[Claimed], now: datetime) -> tuple[list[Claimed], list[RowResult]]:
    # Rows whose origin keeps a bucket of its own (a campaign) take from it as well as from
    # the connector's and account's; everything else takes from those two alone.
    by_bucket: dict[str | None, list[Claimed]] = {}
    for row in rows:
        by_bucket.setdefault(origin_rate_bucket(row), []).append(row)
    passed: list[Claimed] = []
    deferred: list[RowResult] = []
    for key, group in by_bucket.items():
        buckets = sender.buckets if key is None else sender.buckets.plus(key)
        granted, wait, rate = ratelimit.reserve(buckets, len(group))
        passed += group[:granted]
        spacing = 1 / rate if rate > 0 else 0.0
        for position, row in enumerate(group[granted:]):
            # Spread the rest over the time the bucket needs, instead of a herd at one instant.
            due = now + timedelta(seconds=max(wait, spacing) + position * spacing)
            deferred.append(RowResult(row, "queued", reason="rate limited", due_at=due))
    return passed, deferred


def _render(rows: list[Claimed], channel: str) -> tuple[list[tuple[Claimed, dict[str, Any]]], list[RowResult]]:
    versions = versions_load(r.template_version_id for r in rows if r.template_version_id is not None)
    people = subscribers_load(r.subscriber_id for r in rows if r.template_version_id is not None)
    ready: list[tuple[Claimed, dict[str, Any]]] = []
    failed: list[RowResult] = []
    # One compiled-template lookup per version per batch, not one per message.
    renderers: dict[int, Any] = {}
    decorators: dict[str, ContentDecorator | None] = {}
    for row in rows:
        # Whatever breaks here is this message's failure: a batch spans projects, and one
        # message's data must not hold back (or crash) the others'.
        try:
            if row.template_version_id is None:
                content = row.content or {}
            else:
                render_one = renderers.get(row.template_version_id)
                if render_one is None:
                    version = versions[row.template_version_id]
                    render_one = renderers[row.template_version_id] = renderer(version, channel=channel)
                content = render_one(render_context(people.get(row.subscriber_id), row.context))
            if row.origin_kind not in decorators:
                decorators[row.origin_kind] = origin_content_decorator(row.origin_kind)
            decorate = decorators[row.origin_kind]
            ready.append((row, decorate(row, content) if decorate is not None else content))
        except TemplateError as exc:
            failed.append(_unrenderable(row, exc.message, exc.code))
        except TRANSIENT_ERRORS:
            raise
        except Exception as exc:
            log.warning("delivery %s could not be prepared", row.id, exc_info=True)
            failed.append(_unrenderable(row, f"render failed: {exception_reason(exc)}", "render_error"))
    return ready, failed


def _unrenderable(row: Claimed, reason: str, code: str) -> RowResult:
    snapshot = {"template_version_id": row.template_version_id, "context": row.context}
    if row.template_version_id is None:
        snapshot["content"] = row.content
    return RowResult(row, "failed", reason=reason, code=code, snapshot=snapshot)


def _attempts_write(sender: Sender, rows: list[Claimed], now: datetime) -> None:
    # Committed before the provider is called: a crash mid-send leaves the evidence.
    connector = COPY_NULL if sender.config.connector_id is None else int(sender.config.connector_id)
    tail = f"\t{connector}\t{now.isoformat()}\t\t\t\n"
    lines = "".join(f"{int(row.project_id)}\t{int(row.id)}\t{int(row.attempts) + 1}{tail}" for row in rows)
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY delivery_attempt ({ATTEMPT_COLUMNS}) FROM STDIN") as copy,
    ):
        copy.write(lines)


def _classify(row: Claimed, content: dict[str, Any], result: SendResult, latency_ms: int, now: datetime) -> RowResult:
    base = {
        "attempted": True,
        "outcome": str(result.outcome),
        "code": result.code[:64],
        "message": result.message[:2000].replace("\x00", ""),  # Postgres text holds no NUL
        "latency_ms": latency_ms,
        "throttled": result.throttled,
        "response": dict(result.details) if result.details else None,
    }
    if result.outcome == Outcome.ACCEPTED:
        kept = sent_content_pack(content) if origin_keeps_sent_content(row.origin_kind) else None
        return RowResult(row, "sent", reference=result.provider_reference[:255], sent_content=kept, **base)
    attempts = row.attempts + 1
    error = f"{result.code}: {result.message}".strip(": ")
    snapshot = {"destination": row.destination, "content": content}
    if result.outcome == Outcome.PERMANENT:
        return RowResult(row, "failed", reason=f"permanent: {error}", snapshot=snapshot, **base)
    budget = row.attempt_budget
    if result.throttled:
        budget = min(budget + 1, 100)  # throttling is rate control, not a failing message
    if attempts >= budget:
        return RowResult(row, "failed", reason=f"exhausted {attempts} attempts: {error}", snapshot=snapshot, **base)
    due = now + timedelta(seconds=backoff_seconds(row.channel, attempts, result.retry_after))
    result_row = RowResult(row, "retrying", reason=error, due_at=due, **base)
    result_row.extra["budget"] = budget
    return result_row


def _message(row: Claimed, content: dict[str, Any]) -> OutboundMessage:
    return OutboundMessage(
        delivery_id=row.id,
        delivery_key=row.delivery_key,
        channel=row.channel,
        destination=row.destination,
        content=content,
        metadata={"project_id": row.project_id, "origin_kind": row.origin_kind, "origin_id": row.origin_id},
    )


def _answers(sender: Sender, messages: list[OutboundMessage]) -> list[SendResult] | Exception:
    try:
        results = sender.adapter.send_batch(messages)
        if len(results) != len(messages):
            raise RuntimeError(f"adapter answered {len(results)} results for {len(messages)} messages")
        return results
    except Exception as exc:  # noqa: BLE001 - handed to the caller, which logs it and decides
        return exc


def _send_chunk(sender: Sender, messages: list[OutboundMessage]) -> list[SendResult]:
    answers = _answers(sender, messages)
    if not isinstance(answers, Exception):
        return answers
    log.error("adapter %s failed a batch of %d", sender.config.provider, len(messages), exc_info=answers)
    return _bisect(sender, messages, answers)


def _bisect(sender: Sender, messages: list[OutboundMessage], failure: Exception) -> list[SendResult]:
    """Find the message the adapter cannot take by halving the batch that failed, so the
    others are not retried (and finally dead-lettered) with it. When both halves fail
    too, it is the provider or the network, not one message: all of them retry, after
    three calls rather than one per message."""
    if len(messages) == 1:
        return [SendResult.retryable("adapter_error", exception_reason(failure))]
    middle = len(messages) // 2
    halves = (messages[:middle], messages[middle:])
    answers = [_answers(sender, half) for half in halves]
    if all(isinstance(a, Exception) for a in answers):
        return [SendResult.retryable("adapter_error", exception_reason(failure))] * len(messages)
    out: list[SendResult] = []
    for half, answer in zip(halves, answers, strict=True):
        out += _bisect(sender, half, answer) if isinstance(answer, Exception) else answer
    return out


def _send(sender: Sender, ready: list[tuple[Claimed, dict[str, Any]]], now: datetime) -> list[RowResult]:
    out: list[RowResult] = []
    size = max(1, sender.adapter.max_batch_size)
    for start in range(0, len(ready), size):
        chunk = ready[start : start + size]
        began = time.monotonic()
        results = _send_chunk(sender, [_message(row, content) for row, content in chunk])
        latency = int((time.monotonic() - began) * 1000)
        for (row, content), result in zip(chunk, results, strict=True):
            try:
                out.append(_classify(row, content, result, latency, now))
            except Exception as exc:
                # An answer we cannot read: this message's failure, recorded with its attempt.
                log.warning("delivery %s: unreadable provider answer", row.id, exc_info=True)
                reason = f"permanent: unreadable provider answer: {exception_reason(exc)}"
                out.append(
                    RowResult(
                        row,
                        "failed",
                        reason=reason,
                        attempted=True,
                        outcome="permanent",
                        code="answer_unreadable",
                        message=reason,
                        latency_ms=latency,
                        snapshot={"destination": row.destination, "content": content},
                    )
                )
    return out


def process_group(project_id: int, channel: str, connector_id: int | None, rows: list[Claimed]) -> list[RowResult]:
    now = timezone.now()
    sender = sender_for(project_id, channel, connector_id)
    if isinstance(sender, NotFound):
        return [RowResult(r, "failed", reason=f"permanent: {sender.message}", code=sender.code) for r in rows]
    held = origin_claims_screen(rows)
    results = [RowResult(r, held[r.id][0], due_at=held[r.id][1], reason=held[r.id][2]) for r in rows if r.id in held]
    rows, ended = _screen(project_id, channel, [r for r in rows if r.id not in held])
    results += ended
    if rows:
        rows, deferred = _gate(sender, rows, now)
        results += deferred
    if rows:
        ready, failed = _render(rows, channel)
        results += failed
        if ready:
            _attempts_write(sender, [row for row, _ in ready], now)
            results += _send(sender, ready, now)
    for result in results:
        result.connector_id = sender.config.connector_id
        result.account = sender.buckets.account
    return results
