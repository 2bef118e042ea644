"""Writes of the publish API: accept a notification (intent + outbox, one transaction).

Everything that can be refused is checked before the transaction opens, so a refused
request leaves nothing behind and an accepted one costs two INSERTs and a COMMIT.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from apps.core.dbcompat import prepared_cursor
from apps.core.errors import ApplicationError
from apps.notifications.destinations import DestinationError, check_reaches, parse_recipient
from apps.notifications.models import Notification, Priority
from apps.notifications.rendering_check import strict_check
from apps.notifications.template_refs import ResolvedTemplate, template_resolve
from apps.notifications.wakeups import relay_wake_after_commit
from apps.projects.models import Project
from apps.subscribers.models import Subscriber

# A send_at a little in the past is clock skew between caller and us, not a mistake.
SEND_AT_SKEW = timedelta(minutes=5)
SEND_AT_HORIZON = timedelta(days=366)


def template_for_channels(*, project: Project, template: str, channels: list[str]) -> ResolvedTemplate:
    resolved = template_resolve(project.pk, template)
    lacking = [channel for channel in channels if channel not in resolved.channels]
    if lacking:
        has = ", ".join(sorted(resolved.channels)) or "no channel"
        raise ApplicationError(
            f"Template {resolved.key}@{resolved.number} has no {', '.join(lacking)} content (it has {has}).",
            code="template_lacks_channel",
            field="channels",
        )
    return resolved


def send_at_check(send_at: datetime | None, *, now: datetime | None = None) -> datetime | None:
    if send_at is None:
        return None
    now = now or timezone.now()
    if send_at < now - SEND_AT_SKEW:
        raise ApplicationError(
            f"send_at {send_at.isoformat()} is in the past; omit it to send now.", code="send_at_past", field="send_at"
        )
    if send_at > now + SEND_AT_HORIZON:
        raise ApplicationError(
            "send_at is more than a year ahead; schedule closer to the date.", code="send_at_too_far", field="send_at"
        )
    return send_at if send_at > now else None


def recipients_parse(
    *, project: Project, to: list[Any], channels: list[str], field: str = "to", check_subscribers: bool = True
) -> list[dict]:
    """Normalised, de-duplicated recipients; every external id must name a subscriber
    (checked here, or by the caller's own statement when ``check_subscribers`` is off)."""
    recipients: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    positions: dict[str, int] = {}
    for index, item in enumerate(to):
        try:
            recipient = parse_recipient(item)
            check_reaches(recipient, channels)
        except DestinationError as exc:
            raise ApplicationError(str(exc), code=exc.code, field=f"{field}[{index}]") from None
        ((kind, value),) = recipient.items()
        if (kind, value) in seen:
            continue
        seen.add((kind, value))
        recipients.append(recipient)
        if kind == "subscriber":
            positions.setdefault(value, index)
    if positions and check_subscribers:
        subscribers_check(project=project, positions=positions, field=field)
    return recipients


def subscribers_check(*, project: Project, positions: dict[str, int], field: str = "to") -> None:
    """Raise naming the first external id (by its position in ``field``) with no subscriber."""
    if positions:
        known = set(
            Subscriber.objects.for_project(project)
            .filter(external_id__in=list(positions), erased_at__isnull=True)
            .values_list("external_id", flat=True)
        )
        missing = [external_id for external_id in positions if external_id not in known]
        if missing:
            raise ApplicationError(
                f"There is no subscriber with external id {missing[0]!r} in this project.",
                code="unknown_subscriber",
                field=f"{field}[{positions[missing[0]]}]",
            )


def notification_publish(
    *,
    project: Project,
    template: str,
    to: list[Any],
    channels: list[str],
    priority: str = Priority.NORMAL,
    data: dict[str, Any] | None = None,
    send_at: datetime | None = None,
) -> Notification:
    data = data or {}
    resolved = template_for_channels(project=project, template=template, channels=channels)
    recipients = recipients_parse(project=project, to=to, channels=channels, check_subscribers=False)
    send_at = send_at_check(send_at)
    if resolved.strict:
        strict_check(resolved, channels=channels, data=data)

    notification = Notification(
        project=project,
        template_key=resolved.key,
        template_version_id=resolved.version_id,
        template_number=resolved.number,
        channels=channels,
        recipients=recipients,
        priority=priority,
        data=data,
        send_at=send_at,
    )
    external_ids = [r["subscriber"] for r in recipients if "subscriber" in r]
    if not notification_store(notification, external_ids=external_ids):
        # Nothing was stored: say which external id is unknown (the check runs again, so a
        # subscriber created in between simply lets the second attempt through).
        subscribers_check(project=project, positions={e: _position(to, e) for e in external_ids})
        if not notification_store(notification, external_ids=external_ids):
            raise ApplicationError("A subscriber was erased while publishing; retry.", code="unknown_subscriber")
    return notification


def _position(to: list[Any], external_id: str) -> int:
    for index, item in enumerate(to):
        if item == external_id or (isinstance(item, dict) and item.get("subscriber") == external_id):
            return index
    return 0


# The intent and its outbox event in ONE statement: a single statement is its own
# transaction, so the pair is atomic with one round trip instead of four (BEGIN, two
# INSERTs, COMMIT) and without two ORM saves on the hottest path of the API. The same
# statement checks that every external id names a live subscriber (unique per project,
# so the count is exact; "IS NOT NULL" lets a generic plan use that partial unique index)
# and stores nothing otherwise.
_STORE_SQL = """
WITH known AS (
    SELECT count(*) = %(expected)s AS ok FROM subscribers_subscriber
    WHERE project_id = %(project)s AND external_id = ANY(%(external_ids)s::text[]) AND external_id IS NOT NULL
        AND erased_at IS NULL
), n AS (
    INSERT INTO notifications_notification (
        project_id, template_key, template_version_id, template_number, channels, recipients, priority,
        data, send_at, state, routing, created_at, routed_at)
    SELECT %(project)s, %(key)s, %(version)s, %(number)s, %(channels)s::jsonb, %(recipients)s::jsonb,
        %(priority)s, %(data)s::jsonb, %(send_at)s, 'accepted', '{}'::jsonb, %(now)s, NULL
    FROM known WHERE known.ok
    RETURNING id
)
INSERT INTO notifications_outboxevent (project_id, notification_id, lane, created_at, relayed_at, relay_attempts,
    last_error)
SELECT %(project)s, n.id, %(priority)s, %(now)s, NULL, 0, '' FROM n
RETURNING notification_id
"""


def notification_store(notification: Notification, *, external_ids: list[str] | None = None) -> bool:
    """Store ``notification`` with its outbox event atomically and wake the router on commit.

    False (and nothing stored) when an external id in ``external_ids`` names no subscriber.
    """
    external_ids = list(dict.fromkeys(external_ids or []))
    notification.created_at = timezone.now()
    params = {
        "expected": len(external_ids),
        "external_ids": external_ids,
        "project": notification.project_id,
        "key": notification.template_key,
        "version": notification.template_version_id,
        "number": notification.template_number,
        "channels": json.dumps(notification.channels),
        "recipients": json.dumps(notification.recipients),
        "priority": notification.priority,
        "data": json.dumps(notification.data, cls=DjangoJSONEncoder),
        "send_at": notification.send_at,
        "now": notification.created_at,
    }
    with prepared_cursor() as cursor:
        # In autocommit the statement commits by itself; inside a caller's atomic block it
        # joins that transaction, and on_commit waits for it either way. Prepared: Postgres
        # plans it once per connection (the plan cost as much as running it).
        cursor.execute(_STORE_SQL, params)
        row = cursor.fetchone()
    if row is None:
        return False
    notification.pk = row[0]
    notification._state.adding = False
    project_id, lane = notification.project_id, notification.priority
    transaction.on_commit(lambda: relay_wake_after_commit(project_id=project_id, lane=lane))
    return True
