"""Subscriber import: accept a file into storage, then load it in chunks from a worker.

Each chunk is one transaction: COPY the validated rows into a temp table, update the
subscribers that exist and insert the rest, link tags (recording TagEvents with source
"import"), refresh segment membership, and add to the job's counters. Every statement is
an upsert, so a re-delivered task simply starts over and changes nothing twice.
"""

from __future__ import annotations

import json
import queue
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import IO

import psycopg
from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import OperationalError, connection, transaction
from django.utils import timezone
from psycopg.errors import DeadlockDetected

from apps.core.errors import ApplicationError
from apps.projects.models import Project
from apps.subscribers.importer import (
    SNIFF_BYTES,
    ImportFileError,
    ParsedRow,
    count_lines,
    read_csv,
    read_ndjson,
    row_failure,
    sniff,
)
from apps.subscribers.models import ImportJob
from apps.subscribers.services.import_load import chunk_write, tags_ensure

CHUNK_ROWS = 50_000
# The reason an import that keeps stopping its worker ends with (TIDINGS_POISON_AFTER_CRASHES).
POISON = "poison"
IMPORT_LOCK_NAMESPACE = 0x7153  # pg advisory lock key space for import runs
MAX_STORED_ERRORS = 1000
# Bad rows one chunk narrows down one by one before it calls the rest of the failure its own.
ISOLATE_AT_MOST = 100
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
    try:
        stored = default_storage.save(name, File(reader, name=name))
    except ApplicationError:
        if default_storage.exists(name):
            default_storage.delete(name)  # the part written before the limit was hit
        raise
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
    """Run one import to the end, unless another task is already running it.

    A session advisory lock marks the run: it dies with the connection, so after a
    worker crash the sweeper's re-enqueued task can take over at once.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [IMPORT_LOCK_NAMESPACE, job_id])
        if not cursor.fetchone()[0]:
            return ImportJob.objects.get(project_id=project_id, pk=job_id)
    try:
        return _import_run(project_id=project_id, job_id=job_id)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [IMPORT_LOCK_NAMESPACE, job_id])


def _import_run(*, project_id: int, job_id: int) -> ImportJob:
    with transaction.atomic():
        job = ImportJob.objects.select_for_update().get(project_id=project_id, pk=job_id)
        if job.is_finished:
            return job
        if job.status == ImportJob.Status.RUNNING:
            # The previous run died (we hold the lock, so it is not running): every
            # statement is an upsert, so start over and count afresh.
            job.rows_done = job.rows_imported = job.rows_failed = job.lines_committed = 0
            job.errors = []
            job.save(update_fields=["rows_done", "rows_imported", "rows_failed", "lines_committed", "errors"])
        if job.attempts >= int(settings.TIDINGS_POISON_AFTER_CRASHES):
            # A file that crashes the loader every time must not be retried for ever.
            return _finish(job, failed=f"{POISON}: the import stopped unexpectedly {job.attempts} times; giving up.")
        job.attempts += 1
        job.status = ImportJob.Status.RUNNING
        job.started_at = job.started_at or timezone.now()
        job.save(update_fields=["status", "started_at", "attempts"])
    try:
        if job.rows_total is None:
            with default_storage.open(job.file_name, "rb") as fh:
                lines = count_lines(fh)
            job.rows_total = max(lines - 1, 0) if job.format == ImportJob.Format.CSV else lines
            ImportJob.objects.filter(pk=job.pk).update(rows_total=job.rows_total)
        with default_storage.open(job.file_name, "rb") as fh:
            read = read_csv if job.format == ImportJob.Format.CSV else read_ndjson
            _load(job, read(fh))
    except ImportFileError as exc:
        return _finish(job, failed=str(exc))
    except FileNotFoundError:
        return _finish(job, failed="The uploaded file is no longer in storage.")
    job.refresh_from_db()
    if job.rows_imported == 0 and job.rows_failed:
        return _finish(job, failed=f"None of the {job.rows_failed} rows could be imported; see errors.")
    return _finish(job)


def imports_sweep(*, older_than: timedelta = timedelta(minutes=1)) -> int:
    """Re-enqueue unfinished imports: a lost Celery message or a crashed worker must not
    leave a job pending or running for ever. A run still in progress ignores the extra
    task (it holds the job's advisory lock)."""
    cutoff = timezone.now() - older_than
    jobs = ImportJob.objects.filter(
        status__in=[ImportJob.Status.PENDING, ImportJob.Status.RUNNING], created_at__lte=cutoff
    ).only("pk", "project_id")
    count = 0
    for job in jobs:
        _enqueue(job)
        count += 1
    return count


def _finish(job: ImportJob, failed: str = "") -> ImportJob:
    job.status = ImportJob.Status.FAILED if failed else ImportJob.Status.SUCCEEDED
    job.error = failed
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "error", "finished_at"])
    # The file holds personal data and everything useful from it is now in the
    # database (or in the job's errors): do not keep a second copy.
    if default_storage.exists(job.file_name):
        default_storage.delete(job.file_name)
    return job


def _load(job: ImportJob, rows: Iterable[ParsedRow | tuple[int, str]]) -> None:
    """One thread parses; ``TIDINGS_IMPORT_WRITERS`` threads (this one included, each on
    its own database connection) load chunks in parallel. psycopg releases the GIL while
    Postgres works, so parsing and several Postgres backends all run at once."""
    writers = max(1, int(getattr(settings, "TIDINGS_IMPORT_WRITERS", 2)))
    chunks: queue.Queue[_Chunk | BaseException | None] = queue.Queue(maxsize=writers + 1)
    progress = _Progress()
    parser = threading.Thread(target=_parse_chunks, args=(rows, chunks, writers), daemon=True)
    parser.start()
    failures: list[BaseException] = []
    helpers = [
        threading.Thread(target=_write_chunks, args=(job, chunks, progress, failures, True), daemon=True)
        for _ in range(writers - 1)
    ]
    for helper in helpers:
        helper.start()
    _write_chunks(job, chunks, progress, failures, False)
    for helper in helpers:
        helper.join()
    parser.join()
    if failures:
        raise failures[0]


def _write_chunks(
    job: ImportJob, chunks: queue.Queue, progress: _Progress, failures: list[BaseException], own_connection: bool
) -> None:
    try:
        while (chunk := chunks.get()) is not None:
            if isinstance(chunk, BaseException):
                raise chunk
            if not failures:
                _commit_chunk_retrying(job, chunk, progress)
    except BaseException as exc:  # noqa: BLE001 - re-raised by _load on the task's thread
        failures.append(exc)
        while chunks.get() is not None:  # drain so the parser can finish
            pass
    finally:
        if own_connection:
            connection.close()


@dataclass
class _Progress:
    """What the writers of one run have learnt about the file so far."""

    # Whether the last chunk written held only people who were not subscribers yet: a
    # first import of a list is all new, and the next chunk then skips the look-up.
    all_new: bool = True


@dataclass
class _Chunk:
    good: dict[str, ParsedRow] = field(default_factory=dict)
    bad: list[tuple[int, str]] = field(default_factory=list)
    seen: int = 0
    ok: int = 0
    last_line: int = 0


def _parse_chunks(rows: Iterable[ParsedRow | tuple[int, str]], out: queue.Queue, writers: int) -> None:
    chunk = _Chunk()
    try:
        for item in rows:
            chunk.seen += 1
            if isinstance(item, ParsedRow):
                chunk.ok += 1
                chunk.last_line = item.line
                previous = chunk.good.get(item.external_id)
                if previous is not None:
                    # One statement cannot touch a row twice: the later row wins, tags add up.
                    item.tags = list(dict.fromkeys(previous.tags + item.tags))
                chunk.good[item.external_id] = item
            else:
                chunk.last_line = item[0]
                chunk.bad.append(item)
            if chunk.seen >= CHUNK_ROWS:
                out.put(chunk)
                chunk = _Chunk()
        if chunk.seen:
            out.put(chunk)
    except BaseException as exc:  # noqa: BLE001 - handed to a loading thread, which re-raises
        out.put(exc)
    for _ in range(writers):
        out.put(None)


def _commit_chunk_retrying(job: ImportJob, chunk: _Chunk, progress: _Progress, attempts: int = 3) -> None:
    """Two writers can deadlock only when a file repeats external ids across chunks in
    crossing order; Postgres then aborts one transaction, which simply runs again."""
    for attempt in range(attempts):
        try:
            _commit_chunk(job, chunk, progress)
            return
        except (OperationalError, DeadlockDetected) as exc:
            deadlock = isinstance(exc, DeadlockDetected) or isinstance(exc.__cause__, DeadlockDetected)
            if not deadlock or attempt == attempts - 1:
                raise


def _commit_chunk(job: ImportJob, chunk: _Chunk, progress: _Progress) -> None:
    rows = list(chunk.good.values())
    # Outside the chunk's transaction: parallel writers never wait on each other's
    # uncommitted tag rows.
    tag_ids = tags_ensure(project_id=job.project_id, names={t for r in rows for t in r.tags})
    with transaction.atomic():
        with connection.cursor() as cursor:
            # Not waiting for the WAL flush is safe here: a chunk lost in a crash loses its
            # progress row with it, and the re-delivered task redoes it.
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
        unloaded = _write_isolating(job, rows, tag_ids, progress) if rows else []
        ok, bad = chunk.ok - len(unloaded), sorted(chunk.bad + unloaded) if unloaded else chunk.bad
        errors = [{"line": line, "message": msg} for line, msg in bad[:MAX_STORED_ERRORS]]
        # Last, so parallel writers hold the job row's lock only for a moment.
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE subscribers_importjob SET rows_done = rows_done + %s, rows_imported = rows_imported + %s,"
                " rows_failed = rows_failed + %s, lines_committed = GREATEST(lines_committed, %s),"
                " errors = CASE WHEN jsonb_array_length(errors) >= %s THEN errors"
                " ELSE errors || %s::jsonb END WHERE id = %s",
                [chunk.seen, ok, len(bad), chunk.last_line, MAX_STORED_ERRORS, json.dumps(errors), job.pk],
            )


def _write_isolating(
    job: ImportJob,
    rows: list[ParsedRow],
    tag_ids: dict[str, int],
    progress: _Progress,
    unloaded: list[tuple[int, str]] | None = None,
) -> list[tuple[int, str]]:
    """Write the rows; if one of them makes the chunk fail (a value the database cannot
    store, say a NUL escape in attributes), halve until that row alone is left out, and
    return it as (line, reason). Costs one savepoint a chunk when all is well. Past
    ISOLATE_AT_MOST bad rows the failure is the chunk's, not a few rows': what is still
    failing is reported whole instead of being halved row by row."""
    unloaded = [] if unloaded is None else unloaded
    try:
        with transaction.atomic():
            progress.all_new = chunk_write(job, rows, tag_ids, assume_new=progress.all_new)
            # The deferred foreign-key checks of the chunk's subscribers run now: inside
            # the savepoint, so a row they refuse is isolated like any other; and not at
            # commit, while the job row is locked and the other writer waits for it.
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        return unloaded
    except (OperationalError, psycopg.OperationalError):
        raise  # connection lost, lock timeout, deadlock: the chunk's, not a row's
    except Exception as exc:  # noqa: BLE001 - recorded on the job's errors, line by line
        if len(rows) == 1 or len(unloaded) >= ISOLATE_AT_MOST:
            reason = row_failure(exc)
            unloaded += [(r.line, reason) for r in rows]
            return unloaded
    half = len(rows) // 2
    _write_isolating(job, rows[:half], tag_ids, progress, unloaded)
    return _write_isolating(job, rows[half:], tag_ids, progress, unloaded)
