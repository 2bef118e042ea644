"""Putting deliveries on the ledger: one request at a time or a whole audience in one statement."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.core.errors import ApplicationError, NotFound
from apps.delivery.models import Connector, Delivery, Lane, TemplateVersion
from apps.delivery.origins import FinalOutcome
from apps.delivery.services.common import events_write, origins_notify
from apps.delivery.wake import release_at_on_commit, wake_on_commit
from apps.projects.models import Project
from apps.subscribers.models import Channel, Subscriber

CHANNELS = {c.value for c in Channel}
LANES = {lane.value for lane in Lane}


@dataclass
class DeliveryRequest:
    channel: str
    destination: str
    lane: str
    delivery_key: str
    origin_kind: str
    origin_id: str
    template_version_id: int | None = None
    content: dict[str, Any] | None = None  # pre-rendered alternative to a template version
    context: dict[str, Any] = field(default_factory=dict)
    subscriber_id: int | None = None
    due_at: datetime | None = None
    connector_id: int | None = None
    attempt_budget: int | None = None
    category: str = ""


def attempt_budget_default(channel: str) -> int:
    budgets = getattr(settings, "TIDINGS_DELIVERY_ATTEMPT_BUDGETS", {})
    return int(budgets.get(channel, getattr(settings, "TIDINGS_DELIVERY_ATTEMPT_BUDGET", 5)))


def _validate(project: Project, requests: list[DeliveryRequest]) -> None:
    for index, request in enumerate(requests):
        where = f"requests[{index}]"
        if request.channel not in CHANNELS:
            raise ApplicationError(f"Unknown channel {request.channel!r}.", code="invalid_channel", field=where)
        if request.lane not in LANES:
            raise ApplicationError(f"Unknown lane {request.lane!r}.", code="invalid_lane", field=where)
        if not request.destination:
            raise ApplicationError("A destination is required.", code="invalid_destination", field=where)
        if not request.delivery_key or len(request.delivery_key) > 255:
            raise ApplicationError("A delivery key of 1-255 characters is required.", code="invalid_key", field=where)
        if (request.template_version_id is None) == (request.content is None):
            raise ApplicationError(
                "Give exactly one of a template version or pre-rendered content.", code="invalid_content", field=where
            )
    version_ids = {r.template_version_id for r in requests if r.template_version_id is not None}
    if version_ids:
        versions = {
            v.pk: v for v in TemplateVersion.objects.for_project(project).filter(pk__in=version_ids).only("content")
        }
        for request in requests:
            if request.template_version_id is None:
                continue
            version = versions.get(request.template_version_id)
            if version is None:
                raise NotFound("Template version not found.", code="template_version_not_found")
            if request.channel not in version.content:
                raise ApplicationError(
                    f"The template version has no {request.channel} content.", code="template_lacks_channel"
                )
    connector_ids = {r.connector_id for r in requests if r.connector_id is not None}
    if connector_ids and Connector.objects.for_project(project).filter(pk__in=connector_ids).count() != len(
        connector_ids
    ):
        raise NotFound("Connector not found.", code="connector_not_found")
    subscriber_ids = {r.subscriber_id for r in requests if r.subscriber_id is not None}
    if subscriber_ids and Subscriber.objects.for_project(project).filter(pk__in=subscriber_ids).count() != len(
        subscriber_ids
    ):
        raise NotFound("Subscriber not found.", code="subscriber_not_found")


INSERT_SQL = """
WITH ins AS (
    INSERT INTO delivery_delivery (
        project_id, channel, destination, subscriber_id, origin_kind, origin_id, template_version_id,
        content, context, lane, state, state_reason, category, due_at, attempts, attempt_budget,
        delivery_key, connector_id, provider_reference, last_error, created_at, updated_at)
    SELECT %(project)s, r.channel, r.destination, r.subscriber_id, r.origin_kind, r.origin_id, r.version_id,
        r.content, COALESCE(r.context, '{}'::jsonb), r.lane, r.state, '', r.category, r.due_at, 0, r.budget,
        r.delivery_key, r.connector_id, '', '', %(now)s, %(now)s
    -- The batch travels as one JSON document: binding many arrays element by element is slower.
    FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(channel text, destination text, subscriber_id bigint,
        origin_kind text, origin_id text, version_id bigint, content jsonb, context jsonb, lane text,
        state text, category text, due_at timestamptz, budget int, delivery_key text, connector_id bigint)
    ON CONFLICT (project_id, delivery_key) DO NOTHING
    RETURNING id, delivery_key, channel, state, due_at
), ev AS (
    INSERT INTO delivery_deliveryevent (project_id, delivery_id, channel, state, reason, at)
    SELECT %(project)s, id, channel, state,
        CASE WHEN state = 'scheduled' THEN 'due ' || to_char(due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
             ELSE '' END,
        %(now)s
    FROM ins
)
SELECT id, delivery_key, state FROM ins
"""


@transaction.atomic
def deliveries_enqueue(*, project: Project, requests: list[DeliveryRequest]) -> list[int]:
    """Store deliveries (idempotent on the delivery key) and wake their lanes on commit.

    Returns the ids of all requested deliveries, new and already existing, in request order.
    """
    if not requests:
        return []
    _validate(project, requests)
    now = timezone.now()
    unique: dict[str, DeliveryRequest] = {}
    for request in requests:
        unique.setdefault(request.delivery_key, request)
    rows = list(unique.values())

    def due(r: DeliveryRequest) -> datetime:
        return r.due_at if r.due_at is not None else now

    row_dicts = [
        {
            "channel": r.channel,
            "destination": r.destination,
            "subscriber_id": r.subscriber_id,
            "origin_kind": r.origin_kind,
            "origin_id": str(r.origin_id),
            "version_id": r.template_version_id,
            "content": r.content,
            "context": r.context or {},
            "lane": r.lane,
            "state": "scheduled" if due(r) > now else "queued",
            "category": r.category or "",
            "due_at": due(r).isoformat(),
            "budget": r.attempt_budget or attempt_budget_default(r.channel),
            "delivery_key": r.delivery_key,
            "connector_id": r.connector_id,
        }
        for r in rows
    ]
    params = {"project": project.pk, "now": now, "rows": json.dumps(row_dicts, default=str)}
    with connection.cursor() as cursor:
        cursor.execute(INSERT_SQL, params)
        inserted = cursor.fetchall()
    ids = {key: pk for pk, key, _ in inserted}
    missing = [key for key in unique if key not in ids]
    if missing:
        existing = (
            Delivery.objects.for_project(project).filter(delivery_key__in=missing).values_list("delivery_key", "id")
        )
        ids.update(dict(existing))
    wake_on_commit({unique[key].lane for _, key, state in inserted if state == "queued"})
    scheduled = [due(unique[key]) for _, key, state in inserted if state == "scheduled"]
    if scheduled:
        release_at_on_commit((min(scheduled) - now).total_seconds())
    return [ids[r.delivery_key] for r in requests]


# Where a subscriber's address lives for each channel a whole audience can be sent to.
_DESTINATION_SQL = {
    "email": ("s.email", "s.email <> ''", "%(prefix)s || ':' || s.id", ""),
    "sms": ("s.phone", "s.phone <> ''", "%(prefix)s || ':' || s.id", ""),
    "whatsapp": ("s.phone", "s.phone <> ''", "%(prefix)s || ':' || s.id", ""),
    # Push goes to every active device: one delivery per device token.
    "push": (
        "dv.token",
        "dv.active",
        "%(prefix)s || ':' || s.id || ':' || dv.id",
        "JOIN subscribers_device dv ON dv.subscriber_id = s.id AND dv.project_id = s.project_id",
    ),
}

FANOUT_SQL = """
WITH ids(id) AS MATERIALIZED ({ids_sql}),
ins AS (
    INSERT INTO delivery_delivery (
        project_id, channel, destination, subscriber_id, origin_kind, origin_id, template_version_id,
        content, context, lane, state, state_reason, category, due_at, attempts, attempt_budget,
        delivery_key, connector_id, provider_reference, last_error, created_at, updated_at)
    SELECT s.project_id, %(channel)s, {destination}, s.id, %(origin_kind)s, %(origin_id)s, %(version_id)s,
        NULL, '{{}}'::jsonb, %(lane)s, %(state)s, '', %(category)s, %(due_at)s, 0, %(budget)s,
        {key}, %(connector_id)s, '', '', %(now)s, %(now)s
    -- The id list drives (primary-key lookups), so a plan made on stale statistics after a
    -- bulk import cannot turn into a nested loop over the whole subscriber table.
    FROM ids JOIN subscribers_subscriber s ON s.id = ids.id {join}
    WHERE s.project_id = %(project)s AND s.erased_at IS NULL AND s.merged_into_id IS NULL AND {has_destination}
    ORDER BY s.id
    ON CONFLICT (project_id, delivery_key) DO NOTHING
    RETURNING id, channel, state
), ev AS (
    INSERT INTO delivery_deliveryevent (project_id, delivery_id, channel, state, reason, at)
    SELECT %(project)s, id, channel, state, '', %(now)s FROM ins
)
SELECT count(*) FROM ins
"""


@transaction.atomic
def deliveries_enqueue_for_subscribers(
    *,
    project: Project,
    subscriber_ids_sql: str,
    params: list[Any],
    channel: str,
    lane: str,
    origin_kind: str,
    origin_id: str,
    template_version_id: int,
    key_prefix: str,
    connector_id: int | None = None,
    category: str = "",
    due_at: datetime | None = None,
) -> int:
    """One INSERT ... SELECT for a whole chunk of an audience; returns how many rows it created.

    ``subscriber_ids_sql`` selects subscriber ids with ``%s`` placeholders filled from
    ``params``. Subscribers without an address for the channel are skipped; running the same
    chunk twice creates nothing new (the key is ``{key_prefix}:{subscriber_id}``).
    """
    if channel not in _DESTINATION_SQL:
        raise ApplicationError(
            f"Audiences can be sent {', '.join(sorted(_DESTINATION_SQL))}, not {channel}.", code="invalid_channel"
        )
    if lane not in LANES:
        raise ApplicationError(f"Unknown lane {lane!r}.", code="invalid_lane")
    _validate(
        project,
        [
            DeliveryRequest(
                channel=channel,
                destination="-",
                lane=lane,
                delivery_key="-",
                origin_kind=origin_kind,
                origin_id=origin_id,
                template_version_id=template_version_id,
                connector_id=connector_id,
            )
        ],
    )
    destination, has_destination, key, join = _DESTINATION_SQL[channel]
    now = timezone.now()
    due = due_at or now
    named = {
        "project": project.pk,
        "channel": channel,
        "origin_kind": origin_kind,
        "origin_id": str(origin_id),
        "version_id": template_version_id,
        "lane": lane,
        "state": "scheduled" if due > now else "queued",
        "category": category,
        "due_at": due,
        "budget": attempt_budget_default(channel),
        "prefix": key_prefix,
        "connector_id": connector_id,
        "now": now,
    }
    # The caller's positional %s placeholders become named ones so both kinds can mix.
    ids_sql = subscriber_ids_sql
    for index, value in enumerate(params):
        ids_sql = ids_sql.replace("%s", f"%(p{index})s", 1)
        named[f"p{index}"] = value
    sql = FANOUT_SQL.format(
        destination=destination, has_destination=has_destination, key=key, join=join, ids_sql=ids_sql
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, named)
        (created,) = cursor.fetchone()
    if created and named["state"] == "queued":
        wake_on_commit([lane])
    elif created:
        release_at_on_commit((due - now).total_seconds())
    return int(created)


CANCEL_SQL = """
UPDATE delivery_delivery SET state = 'cancelled', state_reason = 'cancelled by origin',
    claimed_until = NULL, updated_at = %s
WHERE project_id = %s AND origin_kind = %s AND origin_id = ANY(%s)
  AND state IN ('scheduled', 'queued', 'retrying')
RETURNING id, channel, origin_id
"""


@transaction.atomic
def deliveries_cancel(*, project: Project, origin_kind: str, origin_ids: list[str]) -> int:
    """Cancel the deliveries of these origins that have not been claimed yet."""
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            CANCEL_SQL,
            [
                now,
                project.pk,
                origin_kind,
                [str(o) for o in origin_ids],
            ],
        )
        rows = cursor.fetchall()
    events_write((project.pk, pk, channel, "cancelled", "cancelled by origin", now) for pk, channel, _ in rows)
    origins_notify(
        [
            FinalOutcome(pk, project.pk, origin_kind, origin_id, "cancelled", "cancelled by origin")
            for pk, _, origin_id in rows
        ]
    )
    return len(rows)
