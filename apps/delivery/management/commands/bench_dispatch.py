"""Benchmark the dispatcher: N bulk deliveries through real Celery workers and the dry-run
email adapter (render, build the Anymail message and payload, no network).

    python manage.py bench_dispatch --deliveries 200000 --concurrency 2

Prints fan-out and send figures, then checks every delivery was sent exactly once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count
from django.utils import timezone

from apps.core.bench import BenchCommand
from apps.delivery.channels.dryrun import dryrun_reset, dryrun_sent_counts
from apps.delivery.models import Attempt, Connector, Delivery, Template, TemplateVersion
from apps.delivery.services import deliveries_enqueue_for_subscribers
from apps.projects.models import Organization, Project

CHUNK = 50_000
IDS_SQL = "SELECT id FROM subscribers_subscriber WHERE project_id = %s AND id >= %s AND id < %s"


def _group_cpu_seconds(pgid: int) -> float:
    """User + system CPU of every process in the worker's process group (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after "(comm)": state, ppid, pgrp, ...
            total += int(fields[11]) + int(fields[12])
    return total / ticks


class Command(BenchCommand):
    help = "Send N bulk deliveries through real workers and the dry-run email adapter; print messages/s."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--deliveries", type=int, default=200_000)
        parser.add_argument("--concurrency", type=int, default=2, help="worker processes")
        parser.add_argument("--timeout", type=int, default=900)
        parser.add_argument("--no-verify", action="store_true", help="skip the exactly-once check")

    def handle(self, *args: Any, **options: Any) -> None:
        count, verify = options["deliveries"], not options["no_verify"]
        project, version = self._project()
        connector = Connector(
            project=project,
            channel="email",
            provider="dryrun",
            is_default=True,
            name="bench",
            settings={
                "delivered_rate": 0,
                "record_sends": verify,
                "dedupe_ttl_s": 3600,
                "from_email": "Bench <bench@tidings.test>",
            },
        )
        connector.set_credentials({"api_key": "bench"})
        connector.save()
        dryrun_reset(project.pk)
        self.stdout.write(f"creating {count} subscribers ...")
        first_id = self._subscribers(project, count)

        worker, log_path = self._worker(options["concurrency"])
        try:
            run = uuid.uuid4().hex[:8]
            started = time.monotonic()
            created = 0
            for low in range(first_id, first_id + count, CHUNK):
                created += deliveries_enqueue_for_subscribers(
                    project=project,
                    subscriber_ids_sql=IDS_SQL,
                    params=[project.pk, low, min(low + CHUNK, first_id + count)],
                    channel="email",
                    lane="bulk",
                    origin_kind="bench",
                    origin_id=run,
                    template_version_id=version.pk,
                    key_prefix=f"bench:{run}",
                    connector_id=connector.pk,
                )
            fanout = time.monotonic() - started
            self.stdout.write(f"fan-out: {created} deliveries in {fanout:.1f}s ({created / fanout:,.0f} rows/s)")
            sent_started = time.monotonic()
            deadline = sent_started + options["timeout"]
            while time.monotonic() < deadline:
                pending = self._pending()
                if pending == 0:
                    break
                time.sleep(0.5)
            elapsed = time.monotonic() - started
            send_phase = time.monotonic() - sent_started
            worker_cpu = _group_cpu_seconds(worker.pid)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
        rows = Delivery.objects.for_project(project).filter(origin_id=run)
        sent = rows.filter(state="sent").count()
        self.stdout.write(
            f"send: {sent} sent in {send_phase:.1f}s after fan-out → {sent / send_phase:,.0f} messages/s "
            f"(end to end incl. fan-out {sent / elapsed:,.0f}/s) with {options['concurrency']} worker processes"
        )
        self.stdout.write(
            f"worker CPU: {worker_cpu:.1f}s = {worker_cpu / max(sent, 1) * 1e6:,.0f} µs per message "
            f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
        )
        other = dict(rows.exclude(state="sent").values_list("state").annotate(n=Count("id")).values_list("state", "n"))
        self.stdout.write(f"not sent: {sum(other.values())} {other}")
        if verify:
            counts = dryrun_sent_counts(project.pk)
            twice = sum(1 for n in counts.values() if n > 1)
            self.stdout.write(f"exactly-once: {len(counts)} keys sent, {twice} sent more than once")
        attempts = Attempt.objects.filter(project=project, delivery__origin_id=run).count()
        self.stdout.write(f"attempt rows: {attempts}; worker log: {log_path}")
        dryrun_reset(project.pk)

    def _pending(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT (SELECT count(*) FROM delivery_delivery WHERE lane = 'bulk' AND state IN ('queued','retrying'))"
                " + (SELECT count(*) FROM delivery_delivery WHERE state = 'claimed')"
            )
            return int(cursor.fetchone()[0])

    def _project(self) -> tuple[Project, TemplateVersion]:
        org, _ = Organization.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
        slug = f"bench-{uuid.uuid4().hex[:6]}"
        project = Project.objects.create(organization=org, slug=slug, name=slug)
        template = Template.objects.create(project=project, key="newsletter", channel="email", name="Newsletter")
        version = TemplateVersion.objects.create(
            project=project,
            template=template,
            number=1,
            published_at=timezone.now(),
            content={
                "email": {
                    "subject": "{{ subscriber.first_name }}, your November digest",
                    "text": "Hi {{ subscriber.first_name }},\n\nHere is what happened in {{ subscriber.city }}."
                    "\n\nUnsubscribe: https://tidings.test/u/{{ subscriber.id }}",
                    "html": "<html><body><h1>Hi {{ subscriber.first_name }}</h1><p>Here is what happened in "
                    "<b>{{ subscriber.city }}</b> this month.</p>{% for item in ['a', 'b', 'c'] %}"
                    "<li>{{ item }}</li>{% endfor %}<a href='https://tidings.test/u/{{ subscriber.id }}'>"
                    "Unsubscribe</a></body></html>",
                }
            },
        )
        return project, version

    def _subscribers(self, project: Project, count: int) -> int:
        now = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute("SELECT nextval(pg_get_serial_sequence('subscribers_subscriber', 'id'))")
            (start,) = cursor.fetchone()
            cursor.execute("SELECT setval(pg_get_serial_sequence('subscribers_subscriber', 'id'), %s)", [start + count])
            columns = "id, project_id, external_id, email, phone, timezone, locale, attributes, created_at, updated_at"
            with cursor.cursor.copy(f"COPY subscribers_subscriber ({columns}) FROM STDIN") as copy:
                for i in range(count):
                    attrs = json.dumps({"first_name": f"Reader{i}", "city": "Lisbon"})
                    copy.write_row(
                        (
                            start + i,
                            project.pk,
                            f"b{start + i}",
                            f"reader{start + i}@example.com",
                            "",
                            "",
                            "",
                            attrs,
                            now,
                            now,
                        )
                    )
            cursor.execute("ANALYZE subscribers_subscriber")  # as after any bulk import
        return int(start)

    def _worker(self, concurrency: int) -> tuple[subprocess.Popen, Path]:
        log_path = Path(tempfile.gettempdir()) / f"tidings-bench-dispatch-{os.getpid()}.log"
        env = {**os.environ, "DJANGO_DEBUG": "0", "PYTHONUNBUFFERED": "1"}
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-l",
                "info",
                "-Q",
                "bulk,default",
                "-c",
                str(concurrency),
                "-P",
                "prefork",
                "-n",
                f"bench{os.getpid()}@%h",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=Path(settings.BASE_DIR) if hasattr(settings, "BASE_DIR") else None,
            env=env,
            stdout=log_path.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while " ready." not in log_path.read_text():
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"bench worker did not start:\n{log_path.read_text()[-2000:]}")
            time.sleep(0.2)
        return worker, log_path
