"""The suppression list: addresses a project must never send to again on a channel."""

from __future__ import annotations

from django.db import connection, transaction
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.delivery.models import Suppression
from apps.projects.models import Project

REASONS = {r.value for r in Suppression.Reason}


def address_normalise(channel: str, address: str) -> str:
    # Mailbox domains are case-insensitive and providers report addresses lower-cased.
    address = address.strip()
    return address.lower() if channel == "email" else address


@transaction.atomic
def suppressions_add_bulk(*, project_id: int, entries: list[tuple[str, str, str]], source: str = "") -> int:
    """Add (channel, address, reason) entries; existing ones are kept as they are."""
    if not entries:
        return 0
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO delivery_suppression (project_id, channel, address, reason, source, created_at)
            SELECT %s, c, a, r, %s, %s FROM unnest(%s::text[], %s::text[], %s::text[]) AS e(c, a, r)
            ON CONFLICT (project_id, channel, address) DO NOTHING
            """,
            [
                project_id,
                source[:255],
                now,
                [c for c, _, _ in entries],
                [address_normalise(c, a) for c, a, _ in entries],
                [r for _, _, r in entries],
            ],
        )
        return cursor.rowcount


def suppression_add(*, project: Project, channel: str, address: str, reason: str, source: str = "") -> bool:
    """Suppress an address; True when it was not suppressed before (idempotent)."""
    if reason not in REASONS:
        raise ApplicationError(f"Unknown suppression reason {reason!r}.", code="invalid_reason", field="reason")
    if not address.strip():
        raise ApplicationError("An address is required.", code="invalid_address", field="address")
    return suppressions_add_bulk(project_id=project.pk, entries=[(channel, address, reason)], source=source) == 1


@transaction.atomic
def suppression_remove(*, project: Project, channel: str, address: str) -> bool:
    deleted, _ = (
        Suppression.objects.for_project(project)
        .filter(channel=channel, address=address_normalise(channel, address))
        .delete()
    )
    return deleted > 0
