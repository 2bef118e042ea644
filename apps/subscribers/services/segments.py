"""Segments: CRUD, full recompute on rule changes, incremental refresh on tag changes.

Consistency: the refresh runs in the same transaction as the tag change that caused it,
so once a tag change commits (and the API call returns), membership already reflects it.
Tag changes take FOR SHARE on the project's segments and rule edits take FOR UPDATE, so a
recompute never interleaves with an incremental refresh that read the old rules.
"""

# The SQL below is assembled only from fixed fragments (rules.compile_rules); every tag
# name travels as a parameter.
# ruff: noqa: S608
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.core.errors import ApplicationError, Conflict
from apps.projects.models import Project
from apps.subscribers.models import Segment
from apps.subscribers.rules import compile_rules, rule_tag_names, rules_match, validate_rules

_LIVE = "s.merged_into_id IS NULL AND s.erased_at IS NULL"


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise ApplicationError("name must be a non-empty string of at most 200 characters.", field="name")
    return name.strip()


@transaction.atomic
def segment_create(*, project: Project, name: str, rules: dict[str, Any]) -> Segment:
    name = _check_name(name)
    validate_rules(rules)
    try:
        with transaction.atomic():
            segment = Segment.objects.create(project=project, name=name, rules=rules)
    except IntegrityError:
        raise Conflict(f"A segment named {name!r} already exists.", code="segment_name_taken", field="name") from None
    segment_recompute(segment=segment)
    return segment


@transaction.atomic
def segment_update(
    *, project: Project, segment: Segment, name: str | None = None, rules: dict[str, Any] | None = None
) -> Segment:
    segment = Segment.objects.select_for_update().for_project(project).get(pk=segment.pk)
    if name is not None:
        segment.name = _check_name(name)
    rules_changed = rules is not None and rules != segment.rules
    if rules is not None:
        validate_rules(rules)
        segment.rules = rules
    try:
        with transaction.atomic():
            segment.save()
    except IntegrityError:
        raise Conflict(f"A segment named {name!r} already exists.", code="segment_name_taken", field="name") from None
    if rules_changed:
        segment_recompute(segment=segment)
    return segment


@transaction.atomic
def segment_delete(*, project: Project, segment: Segment) -> None:
    Segment.objects.for_project(project).filter(pk=segment.pk).delete()


def segment_recompute(*, segment: Segment) -> int:
    """Rebuild one segment's membership with two set-based statements."""
    predicate, params = compile_rules(segment.rules)
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM subscribers_segmentmembership m WHERE m.segment_id = %s AND NOT EXISTS"
            f" (SELECT 1 FROM subscribers_subscriber s WHERE s.id = m.subscriber_id AND {_LIVE} AND {predicate})",
            [segment.pk, *params],
        )
        cursor.execute(
            "INSERT INTO subscribers_segmentmembership (project_id, segment_id, subscriber_id, created_at)"
            f" SELECT %s, %s, s.id, now() FROM subscribers_subscriber s WHERE s.project_id = %s AND {_LIVE}"
            f" AND {predicate} ON CONFLICT (segment_id, subscriber_id) DO NOTHING",
            [segment.project_id, segment.pk, segment.project_id, *params],
        )
        cursor.execute("SELECT count(*) FROM subscribers_segmentmembership WHERE segment_id = %s", [segment.pk])
        return int(cursor.fetchone()[0])


def segments_refresh_for(
    *, project_id: int, subscriber_ids: Iterable[int], changed_tags: set[str] | None = None
) -> None:
    """Bring membership of these subscribers up to date in every affected segment.

    ``changed_tags`` narrows the work to segments whose rules mention one of them; with
    ``None`` (new subscribers, merges) every segment of the project is refreshed.
    """
    ids = sorted(set(subscriber_ids))
    if not ids:
        return
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, rules FROM subscribers_segment WHERE project_id = %s FOR SHARE", [project_id])
        segments = [(pk, rules if isinstance(rules, dict) else json.loads(rules)) for pk, rules in cursor.fetchall()]
        for segment_id, rules in segments:
            if changed_tags is not None and not (rule_tag_names(rules) & changed_tags):
                continue
            predicate, params = compile_rules(rules)
            cursor.execute(
                "DELETE FROM subscribers_segmentmembership AS m WHERE m.segment_id = %s AND m.subscriber_id = ANY(%s)"
                " AND NOT EXISTS (SELECT 1 FROM subscribers_subscriber s WHERE s.id = m.subscriber_id"
                f" AND {_LIVE} AND {predicate})",
                [segment_id, ids, *params],
            )
            cursor.execute(
                "INSERT INTO subscribers_segmentmembership (project_id, segment_id, subscriber_id, created_at)"
                " SELECT %s, %s, s.id, %s FROM subscribers_subscriber s"
                f" WHERE s.id = ANY(%s) AND s.project_id = %s AND {_LIVE} AND {predicate}"
                " ON CONFLICT (segment_id, subscriber_id) DO NOTHING",
                [project_id, segment_id, now, ids, project_id, *params],
            )


def segments_refresh_import_chunk(
    *, project_id: int, new: Mapping[int, Sequence[str]], others: Sequence[int], now: str
) -> None:
    """Membership of one import chunk's subscribers, in the chunk's own transaction.

    Membership is therefore current for every committed chunk, not only when the job
    reports done. ``new`` maps the subscribers this chunk created to their tags: nobody
    else can see them yet, so they have no other tags and no membership, and whether
    they match is decided in Python and written with one COPY. ``others`` (people who
    existed, or that a racing identify created) have their live state and tags read by
    id, one table at a time, and their membership is replaced by id.

    Per-segment SQL over the whole tables (``segments_refresh_for``) is no good here: right
    after a bulk COPY the planner's statistics still describe a nearly empty table, and it
    picked anti-joins that scanned every subscriber and tag link for every chunk and
    segment, which made an import with segments grow quadratically with its size.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, rules FROM subscribers_segment WHERE project_id = %s FOR SHARE", [project_id])
        segments = [(pk, rules if isinstance(rules, dict) else json.loads(rules)) for pk, rules in cursor.fetchall()]
        if not segments:
            return
        if new:
            lines = [
                f"{project_id}\t{segment_id}\t{sid}\t{now}\n"
                for segment_id, rules in segments
                for sid, tags in new.items()
                if rules_match(rules, set(tags))
            ]
            if lines:
                with cursor.copy(
                    "COPY subscribers_segmentmembership (project_id, segment_id, subscriber_id, created_at) FROM STDIN"
                ) as copy:
                    copy.write("".join(lines))
        if others:
            _refresh_existing(cursor, project_id, segments, sorted(set(others)))


def _refresh_existing(cursor: Any, project_id: int, segments: list[tuple[int, dict[str, Any]]], ids: list[int]) -> None:
    cursor.execute(f"SELECT s.id FROM subscribers_subscriber s WHERE s.id = ANY(%s) AND {_LIVE}", [ids])
    tags: dict[int, set[str]] = {sid: set() for (sid,) in cursor.fetchall()}
    cursor.execute(
        "SELECT st.subscriber_id, t.name FROM subscribers_subscribertag st, subscribers_tag t"
        " WHERE st.subscriber_id = ANY(%s) AND t.id = st.tag_id AND t.project_id = %s",
        [ids, project_id],
    )
    for sid, name in cursor.fetchall():
        if sid in tags:
            tags[sid].add(name)
    for segment_id, rules in segments:
        members = [sid for sid, names in tags.items() if rules_match(rules, names)]
        cursor.execute(
            "DELETE FROM subscribers_segmentmembership WHERE segment_id = %s AND subscriber_id = ANY(%s)"
            " AND NOT subscriber_id = ANY(%s)",
            [segment_id, ids, members],
        )
        cursor.execute(
            "INSERT INTO subscribers_segmentmembership (project_id, segment_id, subscriber_id, created_at)"
            " SELECT %s, %s, m, now() FROM unnest(%s::bigint[]) m ON CONFLICT (segment_id, subscriber_id) DO NOTHING",
            [project_id, segment_id, members],
        )


def segment_count_preview(*, project: Project, rules: dict[str, Any]) -> int:
    """How many subscribers these (unsaved) rules would match: for the console editor."""
    validate_rules(rules)
    predicate, params = compile_rules(rules)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM subscribers_subscriber s WHERE s.project_id = %s AND {_LIVE} AND {predicate}",
            [project.pk, *params],
        )
        return int(cursor.fetchone()[0])
