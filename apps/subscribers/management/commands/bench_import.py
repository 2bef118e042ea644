"""Benchmark the subscriber import end to end.

Writes a CSV of N subscribers with two tags each, hands it to ``import_create`` (the
service behind POST /api/v1/subscribers/import: storage upload, job row, Celery message on
queue "default") and waits for a real Celery worker to finish it. By default the command
starts its own worker subprocess (``celery -A config worker -Q default``) with this
process's environment, so DATABASE_URL and REDIS_URL are shared; ``--no-worker`` uses one
that is already running.

``--segments N`` first creates N segments over the generated tags (has-any, has-all and
has-none combinations), so every chunk also refreshes their membership, and afterwards
checks that the materialised membership equals a from-scratch evaluation of each rule.
"""

# The check's SQL is assembled from compile_rules' fixed fragments; tag names are parameters.
# ruff: noqa: S608
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import connection

from apps.core.bench import BenchCommand
from apps.projects.models import Organization, Project
from apps.subscribers.models import ImportJob, Segment, Subscriber, SubscriberTag
from apps.subscribers.rules import compile_rules
from apps.subscribers.services import import_create, segment_create

# Rules over the generated tags (plan-0..4, cohort-0..11), one shape of each kind, so
# members are a real fraction of the people and no two segments match the same set.
SEGMENT_RULES: list[dict[str, Any]] = [
    {"op": "and", "groups": [{"any": ["plan-0", "plan-1"]}]},
    {"op": "and", "groups": [{"all": ["plan-2", "cohort-2"]}]},
    {"op": "and", "groups": [{"none": ["plan-3"]}, {"any": ["cohort-1", "cohort-3", "cohort-5"]}]},
    {"op": "or", "groups": [{"all": ["plan-4"]}, {"op": "and", "groups": [{"none": ["cohort-0", "cohort-6"]}]}]},
]


class Command(BenchCommand):
    help = "Import N generated subscribers through the real import path and print rows/s."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rows", type=int, default=1_000_000)
        parser.add_argument("--no-worker", action="store_true", help="Use an already running worker on 'default'.")
        parser.add_argument("--timeout", type=float, default=900)
        parser.add_argument("--segments", type=int, default=0, help="Create N segments over the tags first.")

    def handle(self, *args: Any, rows: int, no_worker: bool, timeout: float, segments: int, **options: Any) -> None:
        if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
            raise CommandError("bench_import needs PostgreSQL: set DATABASE_URL.")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "subscribers.csv"
            started = time.monotonic()
            self._write_csv(path, rows)
            self.stdout.write(
                f"wrote {rows:,} rows ({path.stat().st_size / 1e6:.1f} MB) in {time.monotonic() - started:.1f}s"
            )
            worker = None if no_worker else self._start_worker(Path(tmp) / "worker.log")
            try:
                self._run(path, rows, timeout, segments)
            finally:
                if worker is not None:
                    worker.send_signal(signal.SIGTERM)
                    try:
                        worker.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        os.killpg(worker.pid, signal.SIGKILL)

    def _write_csv(self, path: Path, rows: int) -> None:
        with path.open("w", encoding="utf-8") as fh:
            fh.write("external_id,email,timezone,tags\n")
            batch = []
            for i in range(rows):
                batch.append(f"bench-{i},user{i}@example.com,Europe/Lisbon,plan-{i % 5}|cohort-{i % 12}\n")
                if len(batch) == 50_000:
                    fh.write("".join(batch))
                    batch = []
            fh.write("".join(batch))

    def _start_worker(self, log_path: Path) -> subprocess.Popen:
        log = log_path.open("w")
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "default", "-c", "1"]
        command += ["-n", f"bench-import-{os.getpid()}@%h", "--without-gossip", "--without-mingle", "-l", "info"]
        process = subprocess.Popen(
            command, cwd=settings.BASE_DIR, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + 60
        while " ready." not in log_path.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise CommandError(f"The worker did not start:\n{log_path.read_text()[-2000:]}")
            time.sleep(0.2)
        return process

    def _run(self, path: Path, rows: int, timeout: float, segment_count: int) -> None:
        org, _ = Organization.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
        stamp = time.strftime("%Y%m%d%H%M%S")
        project = Project.objects.create(organization=org, name=f"Import bench {stamp}", slug=f"import-bench-{stamp}")
        segments = [
            segment_create(project=project, name=f"bench {n}", rules=SEGMENT_RULES[n % len(SEGMENT_RULES)])
            for n in range(segment_count)
        ]
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        with path.open("rb") as fh:
            job = import_create(project=project, stream=fh, file_name=path.name, content_type="text/csv")
        stored = time.monotonic()
        self.stdout.write(f"stored upload and queued job {job.pk} in {stored - started:.1f}s")
        last = -1
        while True:
            job.refresh_from_db()
            if job.rows_done != last:
                last = job.rows_done
                self.stdout.write(f"  {job.status:<9} {job.rows_done:>10,} / {job.rows_total or 0:,}")
            if job.is_finished:
                break
            if time.monotonic() - started > timeout:
                raise CommandError(f"Import did not finish in {timeout:.0f}s.")
            time.sleep(0.5)
        total = time.monotonic() - started
        if job.status != ImportJob.Status.SUCCEEDED:
            raise CommandError(f"Import failed: {job.error}")
        subscribers = Subscriber.objects.for_project(project).count()
        links = SubscriberTag.objects.for_project(project).count()
        self.stdout.write(
            self.style.SUCCESS(
                f"imported {job.rows_imported:,} rows ({subscribers:,} subscribers, {links:,} tag links) "
                f"in {total:.1f}s total: {job.rows_imported / total:,.0f} rows/s"
            )
        )
        if job.started_at and job.finished_at:
            work = (job.finished_at - job.started_at).total_seconds()
            self.stdout.write(f"worker time {work:.1f}s ({job.rows_imported / work:,.0f} rows/s)")
        if segments:
            self._check_segments(project, segments)
        # The machine may be shared: the figures mean little without its load.
        cores = os.cpu_count() or 1
        self.stdout.write(f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after ({cores} cores)")

    def _check_segments(self, project: Project, segments: list[Segment]) -> None:
        """Materialised membership must equal each rule evaluated from scratch."""
        for segment in segments:
            predicate, params = compile_rules(segment.rules)
            fresh = (
                "SELECT s.id FROM subscribers_subscriber s WHERE s.project_id = %s"
                f" AND s.merged_into_id IS NULL AND s.erased_at IS NULL AND {predicate}"
            )
            stored = "SELECT subscriber_id FROM subscribers_segmentmembership WHERE segment_id = %s"
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT count(*) FROM ({fresh}) f", [project.pk, *params])
                expected = cursor.fetchone()[0]
                cursor.execute(f"SELECT count(*) FROM ({fresh} EXCEPT {stored}) d", [project.pk, *params, segment.pk])
                missing = cursor.fetchone()[0]
                cursor.execute(f"SELECT count(*) FROM ({stored} EXCEPT {fresh}) d", [segment.pk, project.pk, *params])
                extra = cursor.fetchone()[0]
                cursor.execute(f"SELECT count(*) FROM ({stored}) m", [segment.pk])
                held = cursor.fetchone()[0]
            if missing or extra or held != expected or not expected:
                raise CommandError(
                    f"Segment {segment.name!r}: {expected:,} should be members, {held:,} are;"
                    f" {missing:,} missing, {extra:,} extra."
                )
            self.stdout.write(f"segment {segment.name!r}: {expected:,} members, equal to a fresh evaluation")
