"""Everything a batch needs before the provider call, loaded in a few set-based queries."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from django.db import connection

from apps.core.dbcompat import int_array
from apps.core.errors import NotFound
from apps.delivery.channels.base import ChannelAdapter, ConnectorConfig, adapters
from apps.delivery.dispatch.claim import Claimed
from apps.delivery.models import TemplateVersion
from apps.delivery.ratelimit import Buckets, buckets_for
from apps.delivery.services.connectors import connector_resolve
from apps.delivery.services.suppression import address_normalise

CACHE_SECONDS = 10.0


# Id lists bind as one array literal (``int_array``).
SUBSCRIBERS_SQL = (
    "SELECT id, external_id, email, phone, locale, timezone, attributes"
    " FROM subscribers_subscriber WHERE id = ANY(%s::bigint[])"
)
SUPPRESSED_SQL = (
    "SELECT address FROM delivery_suppression WHERE project_id = %s AND channel = %s"
    " AND address = ANY(string_to_array(%s, E'\\n'))"
)
OPTED_OUT_SQL = (
    "SELECT subscriber_id, category FROM subscribers_channelpreference"
    " WHERE project_id = %s AND channel = %s AND opted_out AND subscriber_id = ANY(%s::bigint[])"
)


class _Expiring:
    def __init__(self, seconds: float, size: int = 1024) -> None:
        self.seconds, self.size = seconds, size
        self.items: dict[Any, tuple[float, Any]] = {}

    def get(self, key: Any) -> Any:
        hit = self.items.get(key)
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
        return None

    def put(self, key: Any, value: Any) -> None:
        if len(self.items) >= self.size:
            self.items.clear()
        self.items[key] = (time.monotonic() + self.seconds, value)


class Sender:
    """A resolved connector with its adapter and buckets, reused across batches."""

    def __init__(self, config: ConnectorConfig) -> None:
        self.config = config
        self.adapter: ChannelAdapter = adapters.get(f"{config.channel}:{config.provider}")(config)
        self.buckets: Buckets = buckets_for(config)


_senders = _Expiring(CACHE_SECONDS)
# Published versions never change; the layout they point at may, hence a short life.
_versions = _Expiring(60.0, size=512)


# What a send on (project, channel) depends on: which connector is the default, which is
# failing over, and each one's provider, credentials and settings. Health counters are
# left out: they change with every batch.
CONNECTORS_FINGERPRINT_SQL = (
    "SELECT md5(string_agg(concat_ws('|', id, provider, is_default, status, secondary_id,"
    " md5(credentials_encrypted), settings::text), ',' ORDER BY id))"
    " FROM delivery_connector WHERE project_id = %s AND channel = %s"
)


def _connectors_fingerprint(project_id: int, channel: str) -> str | None:
    with connection.cursor() as cursor:
        cursor.execute(CONNECTORS_FINGERPRINT_SQL, [project_id, channel])
        return cursor.fetchone()[0]


def sender_for(project_id: int, channel: str, connector_id: int | None) -> Sender | NotFound:
    """The cached sender while the project's connectors for ``channel`` are unchanged.

    A connector edited in the console (new credentials, settings, another default) or
    switched to its secondary by another worker applies from the next batch on: one
    cheap query per group and batch checks the fingerprint instead of trusting the cache
    for its whole life.
    """
    key = (project_id, channel, connector_id)
    fingerprint = _connectors_fingerprint(project_id, channel)
    cached = _senders.get(key)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    try:
        sender: Sender | NotFound = Sender(connector_resolve(project_id, channel, connector_id))
    except NotFound as exc:
        sender = exc
    _senders.put(key, (fingerprint, sender))
    return sender


def versions_load(ids: Iterable[int]) -> dict[int, TemplateVersion]:
    wanted = set(ids)
    found = {pk: v for pk in wanted if (v := _versions.get(pk)) is not None}
    missing = wanted - set(found)
    if missing:
        for version in TemplateVersion.objects.filter(pk__in=missing).select_related("layout"):
            _versions.put(version.pk, version)
            found[version.pk] = version
    return found


def subscribers_load(ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    ids = list({i for i in ids if i is not None})
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            SUBSCRIBERS_SQL,
            [int_array(ids)],
        )
        rows = cursor.fetchall()
    return {
        r[0]: {
            "id": r[0],
            "external_id": r[1],
            "email": r[2],
            "phone": r[3],
            "locale": r[4],
            "timezone": r[5],
            "attributes": json.loads(r[6]) if isinstance(r[6], str) else (r[6] or {}),
        }
        for r in rows
    }


def suppressed_addresses(project_id: int, channel: str, rows: list[Claimed]) -> set[str]:
    addresses = list({address_normalise(channel, r.destination) for r in rows})
    # One newline-joined string binds far faster than a list; addresses hold no newline.
    bound = "\n".join(a for a in addresses if "\n" not in a)
    with connection.cursor() as cursor:
        cursor.execute(
            SUPPRESSED_SQL,
            [project_id, channel, bound],
        )
        return {r[0] for r in cursor.fetchall()}


def opted_out(project_id: int, channel: str, rows: list[Claimed]) -> dict[int, set[str]]:
    """subscriber id → categories opted out of on this channel ("" is the whole channel)."""
    ids = list({r.subscriber_id for r in rows if r.subscriber_id is not None})
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            OPTED_OUT_SQL,
            [project_id, channel, int_array(ids)],
        )
        out: dict[int, set[str]] = {}
        for subscriber_id, category in cursor.fetchall():
            out.setdefault(subscriber_id, set()).add(category)
        return out
