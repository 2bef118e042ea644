"""Writing one validated chunk of an import.

Fast path, for the usual case of people who are not subscribers yet: ids come from the
sequence in one round trip, and subscribers, tag links and tag events are each one COPY
straight into their tables. Rows whose external id already exists (or that a concurrent
identify creates meanwhile) take the careful path: COPY into a temp table, then UPDATE
the existing and INSERT the rest, with ON CONFLICT where a conflict is possible.
"""

from __future__ import annotations

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from psycopg.errors import UniqueViolation

from apps.core.dbcompat import copy_text
from apps.subscribers.importer import TAG_JOIN, ParsedRow
from apps.subscribers.models import ImportJob
from apps.subscribers.services.import_sql import INSERT_NEW, LINKS, UPDATE_EXISTING, UPSERT_NEW
from apps.subscribers.services.segments import segments_refresh_import_chunk

_SUBSCRIBER_COLUMNS = "id, project_id, external_id, email, phone, timezone, locale, attributes, created_at, updated_at"
_EVENT_COLUMNS = "project_id, subscriber_id, tag_name, action, source, source_ref, created_at"


def tags_ensure(*, project_id: int, names: set[str]) -> dict[str, int]:
    """Create missing tags (committed at once) and return every name's id."""
    if not names:
        return {}
    ordered = sorted(names)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO subscribers_tag (project_id, name, created_at) SELECT %s, n, now() FROM unnest(%s::text[]) n"
            " ON CONFLICT (project_id, name) DO NOTHING",
            [project_id, ordered],
        )
        cursor.execute(
            "SELECT name, id FROM subscribers_tag WHERE project_id = %s AND name = ANY(%s)", [project_id, ordered]
        )
        return dict(cursor.fetchall())


def chunk_write(job: ImportJob, rows: list[ParsedRow], tag_ids: dict[str, int], *, assume_new: bool) -> bool:
    """Upsert one chunk's subscribers with their tags; runs inside the chunk transaction.

    With ``assume_new`` the chunk first tries the fast path without asking who exists
    (that look-up sorts the chunk's ids by collation and probes the index for each, a
    fifth of a fresh import's database time); a unique violation undoes the attempt
    and the chunk is written the careful way. Returns whether every row was new, which is what the
    caller assumes of the next chunk.
    """
    pid = job.project_id
    ids: list[int] = []
    if assume_new:
        try:
            with transaction.atomic():
                ids = _write_fresh(job, rows, tag_ids)
        except (IntegrityError, UniqueViolation):
            pass
        else:
            _refresh_segments(pid, ids, rows, [])
            return True
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT external_id FROM subscribers_subscriber WHERE project_id = %s AND external_id = ANY(%s)",
            [pid, [r.external_id for r in rows]],
        )
        existing = {row[0] for row in cursor.fetchall()}
    fresh = [r for r in rows if r.external_id not in existing]
    careful = [r for r in rows if r.external_id in existing]
    if fresh:
        try:
            with transaction.atomic():
                ids = _write_fresh(job, fresh, tag_ids)
        except (IntegrityError, UniqueViolation):
            # Someone created one of them meanwhile. (COPY errors come straight from
            # psycopg, without Django's IntegrityError wrapper.)
            fresh, careful = [], rows
    others = _write_careful(job, careful) if careful else []
    _refresh_segments(pid, ids, fresh, others)
    return not careful


def _refresh_segments(project_id: int, new_ids: list[int], new_rows: list[ParsedRow], others: list[int]) -> None:
    """Segment membership of the chunk's people, in the chunk's transaction: it is current
    as soon as each chunk commits, so also when the job reports done."""
    if new_ids or others:
        segments_refresh_import_chunk(
            project_id=project_id,
            new={sid: r.tags for sid, r in zip(new_ids, new_rows, strict=True)},
            others=others,
            now=timezone.now().isoformat(),
        )


def _write_fresh(job: ImportJob, rows: list[ParsedRow], tag_ids: dict[str, int]) -> list[int]:
    pid, ref = job.project_id, f"import:{job.pk}"
    now = timezone.now().isoformat()
    with connection.cursor() as cursor:
        # The sequence is looked up once: pg_get_serial_sequence in the select list
        # would be evaluated (with its catalog look-ups) for every row.
        cursor.execute(
            "SELECT nextval(q.seq) FROM (SELECT pg_get_serial_sequence('subscribers_subscriber', 'id')::regclass"
            " AS seq) q, generate_series(1, %s)",
            [len(rows)],
        )
        ids = [row[0] for row in cursor.fetchall()]
        with cursor.copy(f"COPY subscribers_subscriber ({_SUBSCRIBER_COLUMNS}) FROM STDIN") as copy:
            copy.write(_subscriber_lines(ids, rows, pid, now))
        if any(r.tags for r in rows):
            # New subscribers have no links yet, so neither COPY can conflict.
            links, events = _tag_lines(ids, rows, pid, tag_ids, ref, now)
            with cursor.copy(
                "COPY subscribers_subscribertag (project_id, subscriber_id, tag_id, created_at) FROM STDIN"
            ) as copy:
                copy.write(links)
            with cursor.copy(f"COPY subscribers_tagevent ({_EVENT_COLUMNS}) FROM STDIN") as copy:
                copy.write(events)
    return ids


# COPY's text format, written by hand: psycopg's write_row costs several microseconds a
# row in Python, which for a million people (and two million links and events) was most
# of the import's Python time. Values are escaped only when they need it, which for
# validated rows is almost never.
_TAB = "\t"
_SUBSCRIBER_TABS = _SUBSCRIBER_COLUMNS.count(",")


def _subscriber_lines(ids: list[int], rows: list[ParsedRow], pid: int, now: str) -> str:
    lines: list[str] = []
    append = lines.append
    for sid, r in zip(ids, rows, strict=True):
        fields = (r.external_id, r.email or "", r.phone or "", r.timezone or "", r.locale or "", r.attributes or "{}")
        line = f"{sid}\t{pid}\t{_TAB.join(fields)}\t{now}\t{now}\n"
        if line.count(_TAB) != _SUBSCRIBER_TABS or "\\" in line or line.count("\n") != 1 or "\r" in line:
            line = f"{sid}\t{pid}\t{_TAB.join(map(copy_text, fields))}\t{now}\t{now}\n"
        append(line)
    return "".join(lines)


def _tag_lines(
    ids: list[int], rows: list[ParsedRow], pid: int, tag_ids: dict[str, int], ref: str, now: str
) -> tuple[str, str]:
    """The chunk's subscriber-tag links and their "added" events, as two COPY texts."""
    # Everything after the subscriber id is the same for every row with this tag.
    link_tail = {name: f"\t{tid}\t{now}\n" for name, tid in tag_ids.items()}
    event_tail = {name: f"\t{copy_text(name)}\tadded\timport\t{copy_text(ref)}\t{now}\n" for name in tag_ids}
    head = f"{pid}\t"
    links: list[str] = []
    events: list[str] = []
    for sid, r in zip(ids, rows, strict=True):
        if r.tags:
            start = f"{head}{sid}"
            for name in r.tags:
                links.append(start + link_tail[name])
                events.append(start + event_tail[name])
    return "".join(links), "".join(events)


def _write_careful(job: ImportJob, rows: list[ParsedRow]) -> list[int]:
    """Temp table + UPDATE/INSERT: right for rows that may exist or may race."""
    pid = job.project_id
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS tidings_import_rows (external_id text, email text, phone text,"
            " timezone text, locale text, attributes jsonb, tags text)"
        )
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS tidings_import_ids (external_id text, id bigint, inserted boolean)"
        )
        cursor.execute("TRUNCATE tidings_import_rows, tidings_import_ids")
        with cursor.copy("COPY tidings_import_rows FROM STDIN") as copy:
            for r in rows:
                copy.write_row(
                    (
                        r.external_id,
                        r.email,
                        r.phone,
                        r.timezone,
                        r.locale,
                        r.attributes,
                        TAG_JOIN.join(r.tags) if r.tags else None,
                    )
                )
        # Temp tables have no statistics until analysed; the joins below need them.
        cursor.execute("ANALYZE tidings_import_rows")
        cursor.execute(UPDATE_EXISTING, [pid])
        try:
            with transaction.atomic():
                cursor.execute(INSERT_NEW, [pid])
        except IntegrityError:
            cursor.execute(UPSERT_NEW, [pid])
        cursor.execute("ANALYZE tidings_import_ids")
        if any(r.tags for r in rows):
            ref = f"import:{job.pk}"
            cursor.execute(LINKS.format(inserted="true", conflict=""), [pid, TAG_JOIN, pid, pid, ref])
            conflict = "ON CONFLICT (subscriber_id, tag_id) DO NOTHING"
            cursor.execute(LINKS.format(inserted="false", conflict=conflict), [pid, TAG_JOIN, pid, pid, ref])
        cursor.execute("SELECT id FROM tidings_import_ids")
        return [row[0] for row in cursor.fetchall()]
