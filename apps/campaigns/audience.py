"""A campaign's audience as SQL over subscriber ids, so fan-out never loads rows into Python.

``audience_sql`` returns a SELECT of subscriber ids for one id range; the delivery
service wraps it in one ``INSERT … SELECT`` per chunk.
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from apps.campaigns.models import AudienceKind, Campaign
from apps.subscribers.models import SegmentMembership, Subscriber, SubscriberTag, Tag

SUBSCRIBERS = Subscriber._meta.db_table
SEGMENT_MEMBERS = SegmentMembership._meta.db_table
SUBSCRIBER_TAGS = SubscriberTag._meta.db_table
TAGS = Tag._meta.db_table

# The address column each channel sends to; subscribers without one are not recipients.
DESTINATION_COLUMN = {"email": "email", "sms": "phone", "whatsapp": "phone"}


def audience_sql(campaign: Campaign, *, lo: int | None = None, hi: int | None = None) -> tuple[str, list[Any]]:
    """SELECT s.id of every current recipient (optionally within ``lo <= id < hi``)."""
    where = ["s.project_id = %s", "s.merged_into_id IS NULL", "s.erased_at IS NULL"]
    params: list[Any] = [campaign.project_id]
    column = DESTINATION_COLUMN.get(campaign.channel)
    if column:
        where.append(f"s.{column} <> ''")
    if lo is not None:
        where.append("s.id >= %s")
        params.append(lo)
    if hi is not None:
        where.append("s.id < %s")
        params.append(hi)
    kind = campaign.audience_kind
    if kind == AudienceKind.SEGMENT:
        where.append(f"EXISTS (SELECT 1 FROM {SEGMENT_MEMBERS} m WHERE m.subscriber_id = s.id AND m.segment_id = %s)")  # noqa: S608
        params.append(campaign.audience_segment_id)
    elif kind == AudienceKind.TAG:
        where.append(
            f"EXISTS (SELECT 1 FROM {SUBSCRIBER_TAGS} st JOIN {TAGS} t ON t.id = st.tag_id "  # noqa: S608
            "WHERE st.subscriber_id = s.id AND t.project_id = %s AND t.name = %s)"
        )
        params += [campaign.project_id, campaign.audience_tag]
    elif kind == AudienceKind.LIST:
        where.append("s.external_id = ANY(%s)")
        params.append([str(x) for x in campaign.audience_list])
    return f"SELECT s.id FROM {SUBSCRIBERS} s WHERE " + " AND ".join(where), params  # noqa: S608


def audience_bounds(campaign: Campaign) -> tuple[int, int, int]:
    """(count, min id, max id) of the audience right now: one aggregate query."""
    sql, params = audience_sql(campaign)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), coalesce(min(id), 0), coalesce(max(id), 0) FROM ({sql}) a", params)  # noqa: S608
        count, low, high = cursor.fetchone()
    return int(count), int(low), int(high)


def chunk_ranges(low: int, high: int, size: int) -> list[tuple[int, int]]:
    """Half-open id ranges covering ``low..high`` inclusive."""
    if high < low:
        return []
    return [(start, min(start + size, high + 1)) for start in range(low, high + 1, size)]
