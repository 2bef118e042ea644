"""Benchmark the publish API over real HTTP against a real ASGI server and real workers.

Phase 1 (workers paused): drive POST /api/v1/notifications at --paused-rate for
--paused-seconds, then the same load against a bare DRF endpoint that inserts the same two
rows (mounted only with TIDINGS_BENCH_ENDPOINTS), and a closed-loop burst of each for the
ceiling. Phase 2 (workers running): --sustain-rate for --sustain-seconds with Celery
workers relaying and dispatching through the dry-run adapter; accept→sent is measured from
the notification's accept time to its delivery's sent_at.

Run it against a database of its own, e.g.
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/tidings_bench REDIS_URL=redis://127.0.0.1:6379/3 \
  python manage.py bench_publish
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from apps.core.bench import BenchCommand
from apps.notifications.bench.cpu import CpuMeter
from apps.notifications.bench.loadgen import RunResult, drive, percentile

BASE_DIR = Path(settings.BASE_DIR) if hasattr(settings, "BASE_DIR") else Path.cwd()
SUBSCRIBERS = 1000

# The API process's settings, as README "Running in production" and docker-compose's `api`
# give them: persistent connections without a SELECT 1 per request, prepared statements,
# relay wake-ups coalesced per 20 ms.
API_PROCESS_ENV = {"DB_CONN_MAX_AGE": "600", "DB_CONN_HEALTH_CHECKS": "0", "TIDINGS_RELAY_WAKE_COALESCE_MS": "20"}
# Deployable server set-ups the benchmark can start (README "Running in production").
SERVERS: dict[str, dict[str, Any]] = {
    # The API process: WSGI (config.api_wsgi: /api/v1/ through the API middleware only), a
    # fixed set of threads per process, each keeping its Postgres connection.
    "gthread": {
        "args": ["config.api_wsgi:application", "-k", "gthread", "--keep-alive", "30"],
        "env": API_PROCESS_ENV,
    },
    # The same app, one request at a time per process (no keep-alive).
    "sync": {"args": ["config.api_wsgi:application", "-k", "sync"], "env": API_PROCESS_ENV},
    # ASGI: Django runs each sync view in a thread via asgiref; connections come from a pool.
    "uvicorn": {"args": ["config.asgi:application", "-k", "uvicorn.workers.UvicornWorker"], "env": {"DB_POOL": "1"}},
}
# Celery prefork: one process per slot, each keeps its own connection.
WORKER_ENV = {"DB_CONN_MAX_AGE": "600"}


class Command(BenchCommand):
    help = "Benchmark POST /api/v1/notifications (accept rate, API p50/p99, accept→sent p50/p99)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=8765)
        parser.add_argument("--url", default="", help="Drive an already running server instead of starting one.")
        parser.add_argument(
            "--server",
            choices=sorted(SERVERS),
            default="gthread",
            help="gthread/sync: gunicorn on the WSGI app with persistent connections; uvicorn: ASGI workers + pool.",
        )
        parser.add_argument("--server-workers", type=int, default=2)
        parser.add_argument("--server-threads", type=int, default=4, help="Threads per gthread worker.")
        parser.add_argument("--celery-concurrency", type=int, default=2)
        parser.add_argument("--paused-rate", type=float, default=1000)
        parser.add_argument("--paused-seconds", type=float, default=10)
        parser.add_argument("--burst-seconds", type=float, default=5, help="Closed-loop ceiling; 0 skips it.")
        parser.add_argument("--sustain-rate", type=float, default=500)
        parser.add_argument("--sustain-seconds", type=float, default=60)
        parser.add_argument("--concurrency", type=int, default=64)
        parser.add_argument("--client", choices=["raw", "httpx"], default="raw")
        parser.add_argument("--idempotency", action="store_true", help="Send an Idempotency-Key with each publish.")
        parser.add_argument("--skip-paused", action="store_true")
        parser.add_argument("--skip-sustained", action="store_true")

    # --- fixtures -----------------------------------------------------------------------
    def _fixtures(self, slug: str) -> dict[str, Any]:
        from apps.delivery.models import Connector, Template
        from apps.delivery.services import template_create, template_version_create
        from apps.governance.services import api_key_create
        from apps.projects.models import Organization, Project
        from apps.subscribers.models import Subscriber

        org, _ = Organization.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
        project, _ = Project.objects.get_or_create(organization=org, slug=slug, defaults={"name": slug})
        template = Template.objects.for_project(project).filter(key="bench").first()
        if template is None:
            template = template_create(project=project, key="bench", channel="email", name="Bench")
            template_version_create(
                template=template,
                content={"email": {"subject": "Hi {{ name }}", "text": "Order {{ n }}", "html": "<p>{{ n }}</p>"}},
                publish=True,
            )
        version = template.versions.exclude(published_at=None).order_by("-number").first()
        if not Connector.objects.for_project(project).filter(channel="email", is_default=True).exists():
            Connector.objects.create(project=project, channel="email", provider="dryrun", is_default=True, settings={})
        existing = Subscriber.objects.for_project(project).count()
        if existing < SUBSCRIBERS:
            Subscriber.objects.bulk_create(
                [
                    Subscriber(project=project, external_id=f"bench-{i}", email=f"bench-{i}@bench.test")
                    for i in range(SUBSCRIBERS)
                ],
                ignore_conflicts=True,
            )
        _, raw = api_key_create(project=project, name=f"bench {timezone.now():%H:%M:%S}", kind="secret")
        return {"project": project, "key": raw, "version": version}

    # --- processes ----------------------------------------------------------------------
    def _env(self, server: str = "") -> dict[str, str]:
        db = connection.settings_dict
        url = os.environ.get("DATABASE_URL") or (
            f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        )
        return {
            **os.environ,
            "DATABASE_URL": url,
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.local"),
            "DJANGO_DEBUG": "0",
            "LOG_LEVEL": "WARNING",
            "TIDINGS_BENCH_ENDPOINTS": "1",
            **SERVERS.get(server, {}).get("env", {}),
            # The per-key request budget is a product limit, not what is being measured.
            "TIDINGS_API_KEY_RATE_PER_MINUTE": "100000000",
        }

    def _start_server(self, server: str, port: int, workers: int, threads: int) -> subprocess.Popen:
        command = [
            sys.executable, "-m", "gunicorn", *SERVERS[server]["args"], "-w", str(workers),
            # gunicorn turns a sync worker with more than one thread into gthread.
            "--threads", str(threads if server == "gthread" else 1),
            "-b", f"127.0.0.1:{port}", "--log-level", "warning", "--backlog", "2048",
        ]  # fmt: skip
        process = subprocess.Popen(command, cwd=BASE_DIR, env=self._env(server), start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise CommandError("the server exited during start-up")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    return process
            except urllib.error.HTTPError:
                return process  # it answers (503 only says no worker heartbeat yet)
            except OSError:
                time.sleep(0.3)
        self._stop(process)
        raise CommandError("the server did not answer /health within 60 s")

    def _start_workers(self, concurrency: int) -> subprocess.Popen:
        log = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-publish-worker-{os.getpid()}.log"  # noqa: S108
        command = [
            sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "info", "-c", str(concurrency),
            "-Q", "high,normal,bulk,default", "-n", f"bench{os.getpid()}@%h", "--without-gossip", "--without-mingle",
        ]  # fmt: skip
        process = subprocess.Popen(
            command, cwd=BASE_DIR, env={**self._env(), **WORKER_ENV}, stdout=log.open("w"), stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        # Measuring starts once the worker consumes: a cold start is not accept→sent latency.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise CommandError(f"the worker exited: {log.read_text()[-2000:]}")
            if " ready." in log.read_text():
                return process
            time.sleep(0.3)
        self._stop(process)
        raise CommandError("the worker was not ready within 120 s")

    @staticmethod
    def _stop(process: subprocess.Popen | None) -> None:
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)

    # --- reporting ----------------------------------------------------------------------
    def _drive(self, *args: Any, **kwargs: Any) -> tuple[RunResult, CpuMeter]:
        meter = CpuMeter(self._server_pgid).start()
        result = drive(*args, **kwargs)
        return result, meter.stop()

    def _report(
        self, label: str, result: RunResult, status: int = 202, meter: CpuMeter | None = None
    ) -> dict[str, float]:
        ok = result.ok(status)
        latencies = [s.latency * 1000 for s in ok]
        queued = [s.queued * 1000 for s in ok]
        others: dict[int, int] = {}
        for sample in result.samples:
            if sample.status != status:
                others[sample.status] = others.get(sample.status, 0) + 1
        figures = {
            "rate": len(ok) / result.elapsed,
            "p50": percentile(latencies, 50),
            "p99": percentile(latencies, 99),
            "q99": percentile(queued, 99),
        }
        self.stdout.write(
            f"  {label:<34} accepted {len(ok):>6} in {result.elapsed:5.1f} s = {figures['rate']:7.0f}/s   "
            f"API p50 {figures['p50']:6.1f} ms  p99 {figures['p99']:6.1f} ms  "
            f"(incl. client queueing p99 {figures['q99']:6.1f} ms)"
            + (f"  other statuses {others}" if others else "")
            + (f"  errors {len(result.errors)}" if result.errors else "")
            + (f"  shed (server >5 s behind) {result.shed}" if result.shed else "")
        )
        if meter is not None:
            self.stdout.write(f"  {'':<34} {meter.per_request(len(result.samples))}")
        return figures

    def handle(self, *args: Any, **options: Any) -> None:
        paused = self._fixtures("bench-paused")
        live = self._fixtures("bench-live")
        connection.close()
        base = options["url"] or f"http://127.0.0.1:{options['port']}"
        server = None
        self._server_pgid: int | None = None
        if not options["url"]:
            server = self._start_server(
                options["server"], options["port"], options["server_workers"], options["server_threads"]
            )
            self._server_pgid = server.pid  # started in a session (and process group) of its own
        worker = None
        try:
            if not options["skip_paused"]:
                self._paused_phase(base, paused, options)
            if not options["skip_sustained"]:
                worker = self._start_workers(options["celery_concurrency"])
                self._sustained_phase(base, live, options)
        finally:
            self._stop(worker)
            self._stop(server)

    def _publisher(self, fixtures: dict[str, Any], options: dict[str, Any], tag: str) -> tuple[Any, dict[str, str]]:
        def body(i: int) -> dict[str, Any]:
            return {
                "template": "bench",
                "to": [f"bench-{i % SUBSCRIBERS}"],
                "channels": ["email"],
                "priority": "normal",
                "data": {"name": "Ada", "n": i},
            }

        headers = {"Authorization": f"Bearer {fixtures['key']}"}
        if options["idempotency"]:
            counter = iter(range(10**9))

            class _Keyed(dict):
                def items(self) -> Any:  # a fresh key per request
                    return [*headers.items(), ("Idempotency-Key", f"{tag}-{time.time_ns()}-{next(counter)}")]

            return body, _Keyed()
        return body, headers

    def _bare(self, fixtures: dict[str, Any]) -> Any:
        version = fixtures["version"]

        def body(i: int) -> dict[str, Any]:
            return {
                "project_id": fixtures["project"].pk,
                "template_key": "bench",
                "template_version_id": version.pk,
                "template_number": version.number,
                "channels": ["email"],
                "to": [{"subscriber": f"bench-{i % SUBSCRIBERS}"}],
                "data": {"name": "Ada", "n": i},
            }

        return body

    def _paused_phase(self, base: str, fixtures: dict[str, Any], options: dict[str, Any]) -> None:
        from apps.notifications.models import Notification, OutboxEvent

        rate, seconds, conc = options["paused_rate"], options["paused_seconds"], options["concurrency"]
        self.stdout.write(f"\nPhase 1: workers paused, open loop at {rate:.0f}/s for {seconds:.0f} s")
        publish, headers = self._publisher(fixtures, options, "paused")
        drive(base, "/api/v1/notifications", publish, headers, rate=None, seconds=1, concurrency=8)  # warm-up
        common = {"concurrency": conc, "client": options["client"]}
        pub, pub_cpu = self._drive(
            base, "/api/v1/notifications", publish, headers, rate=rate, seconds=seconds, **common
        )
        bare_body = self._bare(fixtures)
        bare, bare_cpu = self._drive(
            base, "/api/v1/_bench/bare-publish", bare_body, {}, rate=rate, seconds=seconds, **common
        )
        p = self._report("publish API", pub, meter=pub_cpu)
        b = self._report("bare DRF two-row insert", bare, meter=bare_cpu)
        self.stdout.write(f"  ratio publish/bare: rate {p['rate'] / b['rate']:.2f}x, p99 {p['p99'] / b['p99']:.2f}x")
        if options["burst_seconds"]:
            self.stdout.write(f"  closed loop, {conc} connections, {options['burst_seconds']:.0f} s each (ceiling):")
            burst = options["burst_seconds"]
            pub = drive(base, "/api/v1/notifications", publish, headers, rate=None, seconds=burst, **common)
            bare = drive(
                base, "/api/v1/_bench/bare-publish", self._bare(fixtures), {}, rate=None,
                seconds=options["burst_seconds"], **common,
            )  # fmt: skip
            p = self._report("publish API (ceiling)", pub)
            b = self._report("bare DRF (ceiling)", bare)
            self.stdout.write(f"  ratio publish/bare at the ceiling: {p['rate'] / b['rate']:.2f}x")
        # Paused means paused: these intents are never relayed, or phase 2 would start with a backlog.
        OutboxEvent.objects.for_project(fixtures["project"]).filter(relayed_at__isnull=True).update(
            relayed_at=timezone.now()
        )
        Notification.objects.for_project(fixtures["project"]).filter(state="accepted").update(state="routed")
        connection.close()

    def _sustained_phase(self, base: str, fixtures: dict[str, Any], options: dict[str, Any]) -> None:
        import json

        from apps.delivery.models import Delivery
        from apps.notifications.models import Notification

        rate, seconds = options["sustain_rate"], options["sustain_seconds"]
        self.stdout.write(f"\nPhase 2: workers running, open loop at {rate:.0f}/s for {seconds:.0f} s (dry-run email)")
        publish, headers = self._publisher(fixtures, options, "live")
        result, meter = self._drive(
            base, "/api/v1/notifications", publish, headers, rate=rate, seconds=seconds,
            concurrency=options["concurrency"], client=options["client"],
        )  # fmt: skip
        self._report("publish API", result, meter=meter)
        ids = [json.loads(s.body)["id"] for s in result.ok()]
        origin_ids = [str(i) for i in ids]
        deadline = time.monotonic() + 120
        done = 0
        while time.monotonic() < deadline:
            done = (
                Delivery.objects.for_project(fixtures["project"])
                .filter(origin_kind="notification", origin_id__in=origin_ids, sent_at__isnull=False)
                .count()
            )
            if done >= len(ids):
                break
            time.sleep(1)
        created = dict(Notification.objects.filter(pk__in=ids).values_list("pk", "created_at"))
        sent = Delivery.objects.for_project(fixtures["project"]).filter(
            origin_kind="notification", origin_id__in=origin_ids, sent_at__isnull=False
        )
        lags = [
            (d.sent_at - created[int(d.origin_id)]).total_seconds() * 1000 for d in sent.only("origin_id", "sent_at")
        ]
        self.stdout.write(
            f"  accept→sent: {len(lags)}/{len(ids)} sent   p50 {percentile(lags, 50):7.0f} ms   "
            f"p99 {percentile(lags, 99):7.0f} ms   max {max(lags, default=float('nan')):7.0f} ms"
        )
        states: dict[str, int] = {}
        for state in (
            Delivery.objects.for_project(fixtures["project"])
            .filter(origin_kind="notification", origin_id__in=origin_ids)
            .values_list("state", flat=True)
        ):
            states[state] = states.get(state, 0) + 1
        self.stdout.write(f"  delivery states: {states}")
