"""The subscriber import on SQLite (``make run``).

The Postgres path (COPY, temp tables, advisory locks, parallel writers) has no SQLite
equivalent, and needs none: SQLite runs in the worker's own process, so a statement per
row costs microseconds, and its single writer means one loading thread and no races
between the UPDATE of existing subscribers and the INSERT of new ones. The results are
the same: existing subscribers updated (given fields replace, attribute keys merge), new
ones created, tag links and "import" TagEvents written, segments refreshed, counters and
errors added to the job in the chunk's own transaction.
"""

# SQL here is assembled only from fixed fragments; every value travels as a parameter.
# ruff: noqa: S608
from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.core.dbcompat import IN_JSON, ids_json, ts
from apps.subscribers.importer import ParsedRow
from apps.subscribers.models import ImportJob, Segment
from apps.subscribers.services.segments import segments_refresh_for

_FIELDS = ("email", "phone", "timezone", "locale")


@contextmanager
def import_lock(job_id: int) -> Iterator[bool]:
    """The advisory lock's stand-in: an exclusive lock on a file, released when the
    process dies, so the sweeper's re-enqueued task can take over after a crash."""
    folder = settings.DATA_DIR / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / f"import-{job_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def chunk_commit(
    job: ImportJob, rows: list[ParsedRow], bad: list[tuple[int, str]], *, seen: int, last_line: int, max_errors: int
) -> None:
    """One chunk in one transaction, like the Postgres path."""
    with transaction.atomic():
        ids = _write(job, rows) if rows else []
        if ids and Segment.objects.for_project(job.project_id).exists():
            segments_refresh_for(project_id=job.project_id, subscriber_ids=ids)
        locked = ImportJob.objects.get(pk=job.pk)
        errors = list(locked.errors)
        if len(errors) < max_errors:
            errors += [{"line": line, "message": msg} for line, msg in bad[:max_errors]]
        ImportJob.objects.filter(pk=job.pk).update(
            rows_done=locked.rows_done + seen,
            rows_imported=locked.rows_imported + len(rows),
            rows_failed=locked.rows_failed + len(bad),
            lines_committed=max(locked.lines_committed, last_line),
            errors=errors,
        )


def _write(job: ImportJob, rows: list[ParsedRow]) -> list[int]:
    pid, now, ref = job.project_id, ts(timezone.now()), f"import:{job.pk}"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT external_id, id, attributes FROM subscribers_subscriber WHERE project_id = %s"
            f" AND external_id {IN_JSON}",
            [pid, ids_json(r.external_id for r in rows)],
        )
        existing = {ext: (sid, attrs) for ext, sid, attrs in cursor.fetchall()}
        ids: dict[str, int] = {}
        for r in rows:
            if r.external_id in existing:
                sid, old = existing[r.external_id]
                ids[r.external_id] = sid
                attributes = {**_object(old), **_object(r.attributes)}
                cursor.execute(
                    "UPDATE subscribers_subscriber SET email = coalesce(%s, email), phone = coalesce(%s, phone),"
                    " timezone = coalesce(%s, timezone), locale = coalesce(%s, locale), attributes = %s,"
                    " updated_at = %s WHERE id = %s",
                    [*(getattr(r, f) for f in _FIELDS), json.dumps(attributes), now, sid],
                )
            else:
                cursor.execute(
                    "INSERT INTO subscribers_subscriber (project_id, external_id, email, phone, timezone, locale,"
                    " attributes, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                    [pid, r.external_id, *(getattr(r, f) or "" for f in _FIELDS), r.attributes or "{}", now, now],
                )
                ids[r.external_id] = cursor.fetchone()[0]
        names = sorted({t for r in rows for t in r.tags})
        if names:
            cursor.execute(
                "INSERT INTO subscribers_tag (project_id, name, created_at) SELECT %s, value, %s FROM json_each(%s)"
                " WHERE true ON CONFLICT (project_id, name) DO NOTHING",
                [pid, now, ids_json(names)],
            )
            cursor.execute(
                f"SELECT name, id FROM subscribers_tag WHERE project_id = %s AND name {IN_JSON}",
                [pid, ids_json(names)],
            )
            tag_ids = dict(cursor.fetchall())
            for r in rows:
                for name in r.tags:
                    cursor.execute(
                        "INSERT INTO subscribers_subscribertag (project_id, subscriber_id, tag_id, created_at)"
                        " VALUES (%s, %s, %s, %s) ON CONFLICT (subscriber_id, tag_id) DO NOTHING RETURNING id",
                        [pid, ids[r.external_id], tag_ids[name], now],
                    )
                    if cursor.fetchone():
                        cursor.execute(
                            "INSERT INTO subscribers_tagevent (project_id, subscriber_id, tag_name, action, source,"
                            " source_ref, created_at) VALUES (%s, %s, %s, 'added', 'import', %s, %s)",
                            [pid, ids[r.external_id], name, ref, now],
                        )
    return list(ids.values())


def _object(value: Any) -> dict[str, Any]:
    if not value:
        return {}
    return value if isinstance(value, dict) else json.loads(value)
