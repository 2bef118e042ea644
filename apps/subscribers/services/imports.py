"""Subscriber import: accept a file into storage, then load it in chunks from a worker.

Each chunk is one transaction: COPY the validated rows into a temp table, upsert
subscribers with INSERT ... ON CONFLICT, link tags (recording TagEvents with source
"import"), refresh segment membership, and advance the job's checkpoint. A re-delivered
task resumes after the last committed line, and every statement is an upsert, so running
a chunk twice changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import IO

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.projects.models import Project
from apps.subscribers.importer import (
    SNIFF_BYTES,
    TAG_JOIN,
    ImportFileError,
    ParsedRow,
    count_lines,
    read_csv,
    read_ndjson,
    sniff,
)
from apps.subscribers.models import ImportJob, Segment
from apps.subscribers.services.segments import segments_refresh_for

CHUNK_ROWS = 50_000
MAX_STORED_ERRORS = 1000
CONTENT_TYPES = {
    "text/csv": ImportJob.Format.CSV,
    "application/csv": ImportJob.Format.CSV,
    "application/x-ndjson": ImportJob.Format.NDJSON,
    "application/ndjson": ImportJob.Format.NDJSON,
    "application/jsonl": ImportJob.Format.NDJSON,
}
EXTENSIONS = {".csv": ImportJob.Format.CSV, ".ndjson": ImportJob.Format.NDJSON, ".jsonl": ImportJob.Format.NDJSON}


class _LimitedReader:
    """Counts bytes as storage reads them and stops a body without Content-Length early."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.stream, self.limit, self.size = stream, limit, 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.size += len(data)
        if self.size > self.limit:
            raise ApplicationError(
                f"The upload is larger than {self.limit} bytes.", code="payload_too_large", status=413
            )
        return data


def import_format(content_type: str, file_name: str) -> str:
    base = (content_type or "").split(";")[0].strip().lower()
    if base in CONTENT_TYPES:
        return CONTENT_TYPES[base]
    for ext, fmt in EXTENSIONS.items():
        if file_name.lower().endswith(ext):
            return fmt
    raise ApplicationError(
        "Send CSV (text/csv) or NDJSON (application/x-ndjson), or a file named .csv / .ndjson.",
        code="unsupported_import_format",
        status=415,
    )


def import_create(*, project: Project, stream: IO[bytes], file_name: str, content_type: str) -> ImportJob:
    """Store the upload, check its first bytes, and queue the import. Nothing is stored
    (and no job exists) when the file is refused."""
    fmt = import_format(content_type, file_name)
    name = f"imports/{project.pk}/{uuid.uuid4().hex}.{fmt}"
    reader = _LimitedReader(stream, int(settings.TIDINGS_UPLOAD_MAX_BODY_BYTES))
    stored = default_storage.save(name, File(reader, name=name))
    try:
        with default_storage.open(stored, "rb") as fh:
            sniff(fh.read(SNIFF_BYTES), fmt)
    except ImportFileError as exc:
        default_storage.delete(stored)
        raise ApplicationError(str(exc), code=exc.code, field="file") from None
    with transaction.atomic():
        job = ImportJob.objects.create(
            project=project, file_name=stored, original_name=file_name[:255], format=fmt, size_bytes=reader.size
        )
        transaction.on_commit(lambda: _enqueue(job))
    return job


def _enqueue(job: ImportJob) -> None:
    from apps.subscribers.tasks import import_run_task

    import_run_task.apply_async(args=[job.project_id, job.pk], queue="default")


def import_run(*, project_id: int, job_id: int) -> ImportJob:
    with transaction.atomic():
        job = ImportJob.objects.select_for_update().get(project_id=project_id, pk=job_id)
        if job.is_finished:
            return job
        job.status = ImportJob.Status.RUNNING
        job.started_at = job.started_at or timezone.now()
        job.save(update_fields=["status", "started_at"])
    try:
        if job.rows_total is None:
            with default_storage.open(job.file_name, "rb") as fh:
                lines = count_lines(fh)
            job.rows_total = max(lines - 1, 0) if job.format == ImportJob.Format.CSV else lines
            ImportJob.objects.filter(pk=job.pk).update(rows_total=job.rows_total)
        with default_storage.open(job.file_name, "rb") as fh:
            read = read_csv if job.format == ImportJob.Format.CSV else read_ndjson
            _load(job, read(fh, job.lines_committed))
    except ImportFileError as exc:
        return _finish(job, failed=str(exc))
    except FileNotFoundError:
        return _finish(job, failed="The uploaded file is no longer in storage.")
    if job.rows_imported == 0 and job.rows_failed:
        return _finish(job, failed=f"None of the {job.rows_failed} rows could be imported; see errors.")
    return _finish(job)


def _finish(job: ImportJob, failed: str = "") -> ImportJob:
    job.status = ImportJob.Status.FAILED if failed else ImportJob.Status.SUCCEEDED
    job.error = failed
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "error", "finished_at"])
    return job


def _load(job: ImportJob, rows: Iterable[ParsedRow | tuple[int, str]]) -> None:
    good: dict[str, ParsedRow] = {}
    bad: list[tuple[int, str]] = []
    seen = ok = last_line = 0
    for item in rows:
        seen += 1
        if isinstance(item, ParsedRow):
            ok += 1
            last_line = item.line
            previous = good.get(item.external_id)
            if previous is not None:
                # One upsert cannot touch a row twice: the later row wins, tags add up.
                item.tags = list(dict.fromkeys(previous.tags + item.tags))
            good[item.external_id] = item
        else:
            last_line = item[0]
            bad.append(item)
        if seen >= CHUNK_ROWS:
            _commit_chunk(job, good, bad, seen, ok, last_line)
            good, bad, seen, ok = {}, [], 0, 0
    if seen:
        _commit_chunk(job, good, bad, seen, ok, last_line)


def _commit_chunk(
    job: ImportJob, good: dict[str, ParsedRow], bad: list[tuple[int, str]], seen: int, ok: int, last_line: int
) -> None:
    with transaction.atomic():
        if good:
            _write_rows(job, list(good.values()))
        job.rows_done += seen
        job.rows_imported += ok
        job.rows_failed += len(bad)
        room = MAX_STORED_ERRORS - len(job.errors)
        if room > 0:
            job.errors = job.errors + [{"line": line, "message": msg} for line, msg in bad[:room]]
        job.lines_committed = last_line
        job.save(update_fields=["rows_done", "rows_imported", "rows_failed", "errors", "lines_committed"])


_UPSERT = """
INSERT INTO subscribers_subscriber
    (project_id, external_id, email, phone, timezone, locale, attributes, created_at, updated_at)
SELECT %s, r.external_id, coalesce(r.email, ''), coalesce(r.phone, ''), coalesce(r.timezone, ''),
       coalesce(r.locale, ''), coalesce(r.attributes, '{}'::jsonb), now(), now()
FROM tidings_import_rows r
ON CONFLICT (project_id, external_id) WHERE external_id IS NOT NULL DO UPDATE SET
    email = coalesce(nullif(EXCLUDED.email, ''), subscribers_subscriber.email),
    phone = coalesce(nullif(EXCLUDED.phone, ''), subscribers_subscriber.phone),
    timezone = coalesce(nullif(EXCLUDED.timezone, ''), subscribers_subscriber.timezone),
    locale = coalesce(nullif(EXCLUDED.locale, ''), subscribers_subscriber.locale),
    attributes = subscribers_subscriber.attributes || EXCLUDED.attributes,
    updated_at = now()
"""

_TAGS = """
INSERT INTO subscribers_tag (project_id, name, created_at)
SELECT %s, n, now() FROM (
    SELECT DISTINCT unnest(string_to_array(tags, %s)) AS n FROM tidings_import_rows WHERE tags IS NOT NULL
) names ORDER BY n
ON CONFLICT (project_id, name) DO NOTHING
"""

_LINKS = """
WITH ins AS (
    INSERT INTO subscribers_subscribertag (project_id, subscriber_id, tag_id, created_at)
    SELECT %s, s.id, t.id, now()
    FROM tidings_import_rows r
    CROSS JOIN LATERAL unnest(string_to_array(r.tags, %s)) AS n(name)
    JOIN subscribers_subscriber s ON s.project_id = %s AND s.external_id = r.external_id
    JOIN subscribers_tag t ON t.project_id = %s AND t.name = n.name
    WHERE r.tags IS NOT NULL
    ON CONFLICT (subscriber_id, tag_id) DO NOTHING
    RETURNING subscriber_id, tag_id
)
INSERT INTO subscribers_tagevent (project_id, subscriber_id, tag_name, action, source, source_ref, created_at)
SELECT %s, ins.subscriber_id, t.name, 'added', 'import', %s, now()
FROM ins JOIN subscribers_tag t ON t.id = ins.tag_id
"""


def _write_rows(job: ImportJob, rows: list[ParsedRow]) -> None:
    pid = job.project_id
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS tidings_import_rows (external_id text, email text, phone text,"
            " timezone text, locale text, attributes jsonb, tags text)"
        )
        cursor.execute("TRUNCATE tidings_import_rows")
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
        cursor.execute(_UPSERT, [pid])
        if any(r.tags for r in rows):
            cursor.execute(_TAGS, [pid, TAG_JOIN])
            cursor.execute(_LINKS, [pid, TAG_JOIN, pid, pid, pid, f"import:{job.pk}"])
        if Segment.objects.for_project(pid).exists():
            cursor.execute(
                "SELECT s.id FROM tidings_import_rows r JOIN subscribers_subscriber s"
                " ON s.project_id = %s AND s.external_id = r.external_id",
                [pid],
            )
            segments_refresh_for(project_id=pid, subscriber_ids=[row[0] for row in cursor.fetchall()])
