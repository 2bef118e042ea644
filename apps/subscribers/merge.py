"""Anonymous → identified merge, and the hooks other apps use to follow it.

Apps that keep rows per subscriber (delivery, workflows) register a hook in their
``AppConfig.ready()``::

    subscriber_merge_hooks.add("delivery", move_deliveries)

Each hook is called as ``hook(project_id, from_id, to_id)`` inside the merge transaction,
so the move is all-or-nothing with the merge itself. ``subscriber_erase_hooks`` works the
same way (``hook(project_id, subscriber_id)``) for the privacy erase.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection

from apps.core.registry import Registry
from apps.subscribers.models import Subscriber

MergeHook = Callable[[int, int, int], None]
EraseHook = Callable[[int, int], None]

subscriber_merge_hooks: Registry[MergeHook] = Registry("subscriber merge hook")
subscriber_erase_hooks: Registry[EraseHook] = Registry("subscriber erase hook")


def subscriber_merge(*, source: Subscriber, target: Subscriber) -> None:
    """Fold ``source`` (anonymous, locked) into ``target`` (identified, locked).

    The caller holds row locks on both and runs inside a transaction. Identified values
    win: only blanks on the target are filled from the source.
    """
    from apps.subscribers.services.segments import segments_refresh_for

    project_id, src, dst = target.project_id, source.pk, target.pk
    with connection.cursor() as cursor:
        cursor.execute("UPDATE subscribers_device SET subscriber_id = %s WHERE subscriber_id = %s", [dst, src])
        cursor.execute(
            "INSERT INTO subscribers_subscribertag (project_id, subscriber_id, tag_id, created_at)"
            " SELECT project_id, %s, tag_id, created_at FROM subscribers_subscribertag WHERE subscriber_id = %s"
            " ON CONFLICT (subscriber_id, tag_id) DO NOTHING",
            [dst, src],
        )
        cursor.execute("DELETE FROM subscribers_subscribertag WHERE subscriber_id = %s", [src])
        cursor.execute("UPDATE subscribers_tagevent SET subscriber_id = %s WHERE subscriber_id = %s", [dst, src])
        cursor.execute(
            "INSERT INTO subscribers_channelpreference (project_id, subscriber_id, channel, category, opted_out,"
            " updated_at) SELECT project_id, %s, channel, category, opted_out, updated_at"
            " FROM subscribers_channelpreference WHERE subscriber_id = %s"
            " ON CONFLICT (subscriber_id, channel, category) DO NOTHING",
            [dst, src],
        )
        cursor.execute("DELETE FROM subscribers_channelpreference WHERE subscriber_id = %s", [src])
        cursor.execute("DELETE FROM subscribers_segmentmembership WHERE subscriber_id = %s", [src])

    target.attributes = {**(source.attributes or {}), **(target.attributes or {})}
    for field in ("email", "phone", "timezone", "locale"):
        if not getattr(target, field) and getattr(source, field):
            setattr(target, field, getattr(source, field))
    target.save()

    # The anonymous row stays as an alias so later calls with its anonymous id resolve.
    source.merged_into = target
    source.attributes = {}
    source.email = source.phone = ""
    source.save()

    for _name, hook in subscriber_merge_hooks.items():
        hook(project_id, src, dst)
    segments_refresh_for(project_id=project_id, subscriber_ids=[dst])
