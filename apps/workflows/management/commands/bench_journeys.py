"""Benchmark: a journey for N subscribers through real workers, and N due waits resumed.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tidings_bench_wf \\
        python manage.py bench_journeys --subscribers 100000

Journey: start -> add tag -> condition -> email -> push -> end, with dry-run email and push
connectors. The command creates the database if needed, migrates, seeds a fresh project,
starts its own Celery worker processes (or uses running ones with --no-workers), and
prints steps/s and total time. Then it parks N journeys on a wait, makes every wait due at
once and times how long the runners take to resume them all.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser
from django.db import connection
from django.utils import timezone

from apps.core.bench import BenchCommand

BASE_DIR = Path(__file__).resolve().parents[4]


class Command(BenchCommand):
    help = "Time journeys for many subscribers through real Celery workers and dry-run adapters."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--subscribers", type=int, default=100_000)
        parser.add_argument("--waits", type=int, default=None, help="due waits to resume (default: --subscribers)")
        parser.add_argument("--concurrency", type=int, default=2, help="pool size of each worker process")
        parser.add_argument("--no-workers", action="store_true", help="use workers already running")
        parser.add_argument("--timeout", type=int, default=900)
        parser.add_argument("--skip-journey", action="store_true")
        parser.add_argument("--skip-waits", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        workers: list[subprocess.Popen] = []
        if not options["no_workers"]:
            # Journeys and delivery lanes get their own processes so neither starves the other.
            journeys = ["journeys"]
            others = [q for q in settings.TIDINGS_WORKER_QUEUES if q not in journeys]
            workers = [
                _start_worker(options["concurrency"], 0, journeys),
                _start_worker(options["concurrency"], 1, others),
            ]
        try:
            if not options["skip_journey"]:
                self._journey(options["subscribers"], options["timeout"])
            if not options["skip_waits"]:
                self._waits(options["waits"] or options["subscribers"], options["timeout"])
        finally:
            for worker in workers:
                worker.terminate()
            for worker in workers:
                try:
                    worker.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    worker.kill()

    def _journey(self, count: int, timeout: int) -> None:
        from apps.workflows.models import Step
        from apps.workflows.services import execution_start

        project = _project("journey")
        _seed(project, count, devices=1)
        version = _publish(project, "bench-journey", _journey_graph())
        self.stdout.write(f"journey: {count} subscribers seeded; starting")
        started = time.monotonic()
        execution = execution_start(project=project, workflow=version.workflow, audience={"everyone": True})
        self._wait_done(execution, started, timeout)
        elapsed = time.monotonic() - started
        steps = Step.objects.filter(execution=execution).count()
        from apps.delivery.models import Delivery

        sent = Delivery.objects.filter(project=project, state__in=["sent", "delivered"]).count()
        self.stdout.write(
            self.style.SUCCESS(
                f"journey: {count} journeys, {steps} steps, {sent} messages sent in {elapsed:.1f} s "
                f"= {steps / elapsed:.0f} steps/s, {count / elapsed:.0f} journeys/s (target <= 60 s); {_load()}"
            )
        )

    def _waits(self, count: int, timeout: int) -> None:
        from apps.workflows.models import Journey, Step
        from apps.workflows.services import execution_start
        from apps.workflows.tasks import wake_runners

        project = _project("waits")
        _seed(project, count, devices=0)
        graph = {
            "nodes": [
                {"id": "start", "type": "start"},
                {"id": "pause", "type": "wait", "config": {"mode": "duration", "days": 1}},
                {"id": "end", "type": "end"},
            ],
            "edges": [{"from": "start", "to": "pause"}, {"from": "pause", "to": "end"}],
        }
        version = _publish(project, "bench-waits", graph)
        execution = execution_start(project=project, workflow=version.workflow, audience={"everyone": True})
        deadline = time.monotonic() + timeout
        while Journey.objects.filter(execution=execution, state="waiting").count() < count:
            if time.monotonic() > deadline:
                raise SystemExit("waits: journeys never all reached the wait")
            time.sleep(0.5)
        self.stdout.write(f"waits: {count} journeys waiting; making every wait due now")
        Step.objects.filter(execution=execution, node_id="pause", state="waiting").update(due_at=timezone.now())
        started = time.monotonic()
        wake_runners()
        self._wait_done(execution, started, timeout)
        elapsed = time.monotonic() - started
        self.stdout.write(
            self.style.SUCCESS(
                f"waits: {count} due waits resumed and finished in {elapsed:.1f} s "
                f"= {count / elapsed:.0f} waits/s (target <= 10 s); {_load()}"
            )
        )

    def _wait_done(self, execution: Any, started: float, timeout: int) -> None:
        last = 0.0
        while True:
            execution.refresh_from_db()
            if execution.state == "completed":
                return
            now = time.monotonic()
            if now - started > timeout:
                raise SystemExit(f"timed out after {timeout} s in state {execution.state}")
            if now - last > 10:
                from apps.workflows.models import Journey

                done = Journey.objects.filter(execution=execution, state="completed").count()
                self.stdout.write(f"  {now - started:5.1f} s: {execution.state}, {done} journeys completed")
                last = now
            time.sleep(0.25)


def _load() -> str:
    # The machine may be shared: the figures mean little without the load they ran under.
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"


def _start_worker(concurrency: int, index: int, queue_names: list[str]) -> subprocess.Popen:
    queues = ",".join(queue_names)
    log_dir = Path(os.environ.get("TMPDIR") or Path.home())
    log = (log_dir / f"bench-journeys-worker-{index}.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "warning", "-c", str(concurrency),
         "-Q", queues, "-n", f"bench{index}-{uuid.uuid4().hex[:6]}@%h", "--without-gossip", "--without-mingle"],
        cwd=BASE_DIR, env={**os.environ}, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    time.sleep(3)
    return process


def _project(label: str) -> Any:
    from apps.projects.models import Organization, Project

    suffix = uuid.uuid4().hex[:8]
    org = Organization.objects.create(name=f"Bench {suffix}", slug=f"bench-{suffix}")
    return Project.objects.create(organization=org, name=f"bench {label}", slug=f"{label}-{suffix}", timezone="UTC")


def _seed(project: Any, count: int, devices: int) -> None:
    from apps.delivery.models import Connector, Template, TemplateVersion
    from apps.subscribers.models import Device, Subscriber

    for channel in ("email", "push"):
        connector = Connector(
            project=project,
            channel=channel,
            provider="dryrun",
            is_default=True,
            settings={"receipt_delay_s": 0, "delivered_rate": 0},
        )
        connector.set_credentials({"api_key": "dry-run-key-bench"})
        connector.save()
        template = Template.objects.create(project=project, key=f"bench-{channel}", channel=channel, name=channel)
        content = (
            {"email": {"subject": "Hi {{ subscriber.external_id }}", "text": "Welcome", "html": "<p>Welcome</p>"}}
            if channel == "email"
            else {"push": {"title": "Hi", "body": "Welcome"}}
        )
        TemplateVersion.objects.create(
            project=project, template=template, number=1, content=content, published_at=timezone.now()
        )
    chunk = 10_000
    for offset in range(0, count, chunk):
        made = Subscriber.objects.bulk_create(
            [
                Subscriber(project=project, external_id=f"b{i}", email=f"b{i}@example.com")
                for i in range(offset, min(count, offset + chunk))
            ],
            batch_size=chunk,
        )
        if devices:
            Device.objects.bulk_create(
                [Device(project=project, subscriber=s, platform="android", token=f"t{s.pk}") for s in made],
                batch_size=chunk,
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _publish(project: Any, key: str, graph: dict[str, Any]) -> Any:
    from apps.workflows.services import workflow_publish, workflow_save_draft

    workflow, _ = workflow_save_draft(project=project, key=key, name=key, graph=graph)
    return workflow_publish(project=project, workflow=workflow, published_via="bench_journeys")


def _journey_graph() -> dict[str, Any]:
    def node(node_id: str, type_: str, **config: Any) -> dict[str, Any]:
        return {"id": node_id, "type": type_, "config": config}

    return {
        "nodes": [
            node("start", "start"),
            node("tag", "add_tag", tags=["bench"]),
            node("check", "condition", predicates=[{"op": "has_tag", "tag": "bench"}]),
            node("mail", "email", template="bench-email"),
            node("push", "push", template="bench-push"),
            node("end", "end"),
            node("skip", "stop", reason="untagged"),
        ],
        "edges": [
            {"from": "start", "to": "tag"},
            {"from": "tag", "to": "check"},
            {"from": "check", "handle": "yes", "to": "mail"},
            {"from": "check", "handle": "no", "to": "skip"},
            {"from": "mail", "to": "push"},
            {"from": "push", "to": "end"},
        ],
    }
