"""Subscriber writes: identify (upsert + anonymous merge), update, preferences, erase."""

# SQL here is assembled only from fixed fragments; every value travels as a parameter.
from __future__ import annotations

from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone as dj_timezone

from apps.core.errors import ApplicationError
from apps.projects.models import Project
from apps.subscribers.merge import subscriber_erase_hooks, subscriber_merge
from apps.subscribers.models import Channel, ChannelPreference, Subscriber
from apps.subscribers.services.segments import segments_refresh_for
from apps.subscribers.validation import ensure_contact

_UPSERT = """
INSERT INTO subscribers_subscriber
    (project_id, {column}, email, phone, timezone, locale, attributes, created_at, updated_at)
VALUES (%s, %s, '', '', '', '', '{{}}', now(), now())
ON CONFLICT (project_id, {column}) WHERE {column} IS NOT NULL DO {action}
RETURNING id, (xmax = 0) AS inserted
"""


def _check_id(value: str | None, field: str) -> None:
    if value is None:
        return
    if not isinstance(value, str) or not value.strip() or len(value) > 255:
        raise ApplicationError(f"{field} must be a non-empty string of at most 255 characters.", field=field)


def _upsert(project_id: int, column: str, value: str, *, lock: bool) -> tuple[int | None, bool]:
    # ON CONFLICT DO UPDATE takes the row lock: a concurrent identify for the same id
    # waits here until we commit, then sees our row instead of inserting a second one.
    action = "UPDATE SET updated_at = EXCLUDED.updated_at" if lock else "NOTHING"
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT.format(column=column, action=action), [project_id, value])
        row = cursor.fetchone()
    return (row[0], row[1]) if row else (None, False)


@transaction.atomic
def subscriber_identify(
    *,
    project: Project,
    external_id: str | None,
    anonymous_id: str | None = None,
    email: str | None = None,
    phone: str | None = None,
    timezone: str | None = None,
    locale: str | None = None,
    attributes: dict[str, Any] | None = None,
    source: str = "api",
) -> Subscriber:
    """Create or update a subscriber; with both ids, merge the anonymous one in.

    Idempotent: repeating the call changes nothing more, and concurrent calls with the
    same ids serialise on the unique indexes, so exactly one subscriber results.
    """
    _check_id(external_id, "external_id")
    _check_id(anonymous_id, "anonymous_id")
    if not external_id and not anonymous_id:
        raise ApplicationError("Send an external_id, an anonymous_id, or both.", code="missing_id", field="external_id")
    ensure_contact(email=email, phone=phone, timezone=timezone, locale=locale)
    if attributes is not None and not isinstance(attributes, dict):
        raise ApplicationError("attributes must be an object.", field="attributes")

    if external_id:
        subscriber_id, created = _upsert(project.pk, "external_id", external_id, lock=True)
        subscriber = Subscriber.objects.select_for_update().get(pk=subscriber_id)
        if anonymous_id:
            _attach_anonymous(subscriber, anonymous_id)
    else:
        subscriber, created = _anonymous(project.pk, anonymous_id or "")

    changed = _apply(subscriber, email=email, phone=phone, timezone=timezone, locale=locale, attributes=attributes)
    if changed:
        subscriber.save()
    if created:
        # "none of" segments match a subscriber with no tags yet.
        segments_refresh_for(project_id=project.pk, subscriber_ids=[subscriber.pk])
    return subscriber


def _anonymous(project_id: int, anonymous_id: str) -> tuple[Subscriber, bool]:
    subscriber_id, created = _upsert(project_id, "anonymous_id", anonymous_id, lock=False)
    if created:
        return Subscriber.objects.select_for_update().get(pk=subscriber_id), True
    row = Subscriber.objects.get(project_id=project_id, anonymous_id=anonymous_id)
    # Lock only the row we will write: an alias resolves to its survivor.
    target_id = row.merged_into_id or row.pk
    return Subscriber.objects.select_for_update().get(pk=target_id), False


def _attach_anonymous(target: Subscriber, anonymous_id: str) -> None:
    if target.anonymous_id == anonymous_id:
        return
    if target.anonymous_id is None:
        try:
            with transaction.atomic():
                Subscriber.objects.filter(pk=target.pk).update(anonymous_id=anonymous_id)
            target.anonymous_id = anonymous_id
            return
        except IntegrityError:
            pass  # the anonymous id already has its own subscriber: merge it below
    else:
        with connection.cursor() as cursor:
            # A second anonymous id for the same person becomes an alias row.
            cursor.execute(
                "INSERT INTO subscribers_subscriber (project_id, anonymous_id, merged_into_id, email, phone,"
                " timezone, locale, attributes, created_at, updated_at)"
                " VALUES (%s, %s, %s, '', '', '', '', '{}', now(), now())"
                " ON CONFLICT (project_id, anonymous_id) WHERE anonymous_id IS NOT NULL DO NOTHING RETURNING id",
                [target.project_id, anonymous_id, target.pk],
            )
            if cursor.fetchone():
                return
    source = Subscriber.objects.select_for_update().get(project_id=target.project_id, anonymous_id=anonymous_id)
    if source.pk == target.pk or source.merged_into_id is not None or source.external_id is not None:
        # Already merged (a repeat or a lost race), or the id belongs to another
        # identified person: never steal their data.
        return
    subscriber_merge(source=source, target=target)
    target.refresh_from_db()


def _apply(subscriber: Subscriber, *, attributes: dict[str, Any] | None, **fields: str | None) -> bool:
    changed = False
    for name, value in fields.items():
        if value is not None and getattr(subscriber, name) != value:
            setattr(subscriber, name, value)
            changed = True
    if attributes:
        merged = {**subscriber.attributes, **attributes}
        merged = {k: v for k, v in merged.items() if v is not None}
        if merged != subscriber.attributes:
            subscriber.attributes = merged
            changed = True
    return changed


@transaction.atomic
def subscriber_update(
    *,
    project: Project,
    subscriber: Subscriber,
    email: str | None = None,
    phone: str | None = None,
    timezone: str | None = None,
    locale: str | None = None,
    attributes: dict[str, Any] | None = None,
    preferences: list[dict[str, Any]] | None = None,
) -> Subscriber:
    """PATCH semantics: given fields replace, attribute keys merge (null deletes a key)."""
    ensure_contact(email=email, phone=phone, timezone=timezone, locale=locale)
    if attributes is not None and not isinstance(attributes, dict):
        raise ApplicationError("attributes must be an object.", field="attributes")
    subscriber = Subscriber.objects.select_for_update().for_project(project).get(pk=subscriber.pk)
    for index, pref in enumerate(preferences or []):
        _check_preference(pref, f"preferences[{index}]")
    if _apply(subscriber, email=email, phone=phone, timezone=timezone, locale=locale, attributes=attributes):
        subscriber.save()
    for pref in preferences or []:
        preference_set(
            project=project,
            subscriber=subscriber,
            channel=pref["channel"],
            category=pref.get("category", ""),
            opted_out=pref["opted_out"],
        )
    return subscriber


def _check_preference(pref: Any, field: str) -> None:
    if not isinstance(pref, dict) or pref.get("channel") not in Channel.values:
        raise ApplicationError(f"channel must be one of {', '.join(Channel.values)}.", field=f"{field}.channel")
    if not isinstance(pref.get("opted_out"), bool):
        raise ApplicationError("opted_out must be true or false.", field=f"{field}.opted_out")
    category = pref.get("category", "")
    if not isinstance(category, str) or len(category) > 64:
        raise ApplicationError("category must be a string of at most 64 characters.", field=f"{field}.category")


@transaction.atomic
def preference_set(
    *, project: Project, subscriber: Subscriber, channel: str, category: str = "", opted_out: bool
) -> ChannelPreference:
    _check_preference({"channel": channel, "category": category, "opted_out": opted_out}, "preference")
    pref, _ = ChannelPreference.objects.update_or_create(
        project=project, subscriber=subscriber, channel=channel, category=category, defaults={"opted_out": opted_out}
    )
    return pref


@transaction.atomic
def subscriber_erase(*, project: Project, subscriber: Subscriber) -> None:
    """Forget the person; keep the row (and so anonymous delivery counts) as a husk."""
    subscriber = Subscriber.objects.select_for_update().for_project(project).get(pk=subscriber.pk)
    subscriber.devices.all().delete()
    subscriber.subscriber_tags.all().delete()
    subscriber.tag_events.all().delete()
    subscriber.preferences.all().delete()
    subscriber.segment_memberships.all().delete()
    Subscriber.objects.for_project(project).filter(merged_into=subscriber).update(anonymous_id=None)
    subscriber.external_id = subscriber.anonymous_id = None
    subscriber.email = subscriber.phone = subscriber.timezone = subscriber.locale = ""
    subscriber.attributes = {}
    subscriber.erased_at = dj_timezone.now()
    subscriber.save()
    for _name, hook in subscriber_erase_hooks.items():
        hook(project.pk, subscriber.pk)
