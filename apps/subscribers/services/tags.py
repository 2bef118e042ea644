"""Tag changes, one subscriber or thousands at once, each recorded as a TagEvent.

Everything is set-based (a handful of statements whatever the batch size) and ends by
refreshing the segment membership of the subscribers that actually changed, inside the
same transaction.
"""

# SQL here is assembled only from fixed fragments; every value travels as a parameter.
from __future__ import annotations

from django.db import connection, transaction

from apps.core.errors import ApplicationError, NotFound
from apps.projects.models import Project
from apps.subscribers.models import Subscriber, TagEvent
from apps.subscribers.services.segments import segments_refresh_for
from apps.subscribers.validation import ensure_tags

_ADD = """
WITH pairs AS (SELECT * FROM unnest(%s::bigint[], %s::text[]) AS p(sid, name)),
ins AS (
    INSERT INTO subscribers_subscribertag (project_id, subscriber_id, tag_id, created_at)
    SELECT %s, p.sid, t.id, now() FROM pairs p JOIN subscribers_tag t ON t.project_id = %s AND t.name = p.name
    ON CONFLICT (subscriber_id, tag_id) DO NOTHING
    RETURNING subscriber_id, tag_id
)
INSERT INTO subscribers_tagevent (project_id, subscriber_id, tag_name, action, source, source_ref, created_at)
SELECT %s, ins.subscriber_id, t.name, 'added', %s, %s, now() FROM ins JOIN subscribers_tag t ON t.id = ins.tag_id
RETURNING subscriber_id, tag_name
"""

_REMOVE = """
WITH pairs AS (SELECT * FROM unnest(%s::bigint[], %s::text[]) AS p(sid, name)),
del AS (
    DELETE FROM subscribers_subscribertag st USING pairs p, subscribers_tag t
    WHERE t.project_id = %s AND t.name = p.name AND st.tag_id = t.id AND st.subscriber_id = p.sid
    RETURNING st.subscriber_id, t.name
)
INSERT INTO subscribers_tagevent (project_id, subscriber_id, tag_name, action, source, source_ref, created_at)
SELECT %s, del.subscriber_id, del.name, 'removed', %s, %s, now() FROM del
RETURNING subscriber_id, tag_name
"""


def _check_changes(changes: list[tuple[int, list[str], list[str]]]) -> None:
    for index, (_sid, add, remove) in enumerate(changes):
        field = f"changes[{index}]" if len(changes) > 1 else ""
        ensure_tags(add, field=f"{field}.add".lstrip("."))
        ensure_tags(remove, field=f"{field}.remove".lstrip("."))
        both = sorted(set(add) & set(remove))
        if both:
            raise ApplicationError(
                f"Tag {both[0]!r} is both added and removed in one change.",
                code="contradictory_tag_change",
                field=f"{field}.add".lstrip("."),
            )


@transaction.atomic
def tags_change_bulk(
    *, project: Project, changes: list[tuple[int, list[str], list[str]]], source: str, source_ref: str = ""
) -> int:
    """Apply (subscriber_id, add, remove) changes; returns how many tag links changed."""
    if source not in TagEvent.Source.values:
        raise ApplicationError(f"Unknown tag source {source!r}.", code="invalid_source", field="source")
    _check_changes(changes)
    ids = sorted({sid for sid, _a, _r in changes})
    if not ids:
        return 0
    changed = _change(project.pk, ids, changes, source, source_ref)
    if changed:
        segments_refresh_for(
            project_id=project.pk,
            subscriber_ids={sid for sid, _n in changed},
            changed_tags={name for _s, name in changed},
        )
    return len(changed)


def _change(
    project_id: int, ids: list[int], changes: list[tuple[int, list[str], list[str]]], source: str, source_ref: str
) -> list[tuple[int, str]]:
    with connection.cursor() as cursor:
        # Locking in id order serialises concurrent changes to one subscriber (so the
        # segment refresh sees the final tag set) without deadlocking batches.
        cursor.execute(
            "SELECT id FROM subscribers_subscriber WHERE project_id = %s AND id = ANY(%s)"
            " AND merged_into_id IS NULL AND erased_at IS NULL ORDER BY id FOR UPDATE",
            [project_id, ids],
        )
        found = {row[0] for row in cursor.fetchall()}
        missing = [sid for sid in ids if sid not in found]
        if missing:
            raise NotFound(f"Subscriber {missing[0]} does not exist in this project.", field="subscriber")

        add_sids, add_names, rm_sids, rm_names = [], [], [], []
        for sid, add, remove in changes:
            for name in dict.fromkeys(add):
                add_sids.append(sid)
                add_names.append(name)
            for name in dict.fromkeys(remove):
                rm_sids.append(sid)
                rm_names.append(name)
        changed: list[tuple[int, str]] = []
        if add_names:
            cursor.execute(
                "INSERT INTO subscribers_tag (project_id, name, created_at)"
                " SELECT %s, n, now() FROM (SELECT DISTINCT unnest(%s::text[]) AS n ORDER BY n) names"
                " ON CONFLICT (project_id, name) DO NOTHING",
                [project_id, add_names],
            )
            cursor.execute(_ADD, [add_sids, add_names, project_id, project_id, project_id, source, source_ref])
            changed += cursor.fetchall()
        if rm_names:
            cursor.execute(_REMOVE, [rm_sids, rm_names, project_id, project_id, source, source_ref])
            changed += cursor.fetchall()
    return changed


@transaction.atomic
def subscriber_tags_change(
    *, project: Project, subscriber: Subscriber, add: list[str], remove: list[str], source: str, source_ref: str = ""
) -> set[str]:
    """Add and remove tags on one subscriber; returns the tag names it has afterwards."""
    from apps.subscribers.selectors import subscriber_tag_names

    if subscriber.project_id != project.pk:
        raise NotFound("Subscriber not found.", field="subscriber")
    tags_change_bulk(project=project, changes=[(subscriber.pk, add, remove)], source=source, source_ref=source_ref)
    return subscriber_tag_names(project, [subscriber.pk]).get(subscriber.pk, set())
