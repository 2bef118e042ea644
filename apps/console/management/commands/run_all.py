"""``make run``: the embedded servers when no URL names real ones, migrations, the demo, then
web (ASGI), a Celery worker and Celery beat in the foreground. Ctrl-C stops all of it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from io import StringIO
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from config import embedded

HEALTHY_WITHIN_SECONDS = 180


class Command(BaseCommand):
    help = "Start the servers, web, worker and beat together (the `make run` command)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default=os.environ.get("TIDINGS_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("TIDINGS_PORT", "8000")))
        parser.add_argument("--no-demo", action="store_true", help="Do not create or print demo data.")

    def handle(self, *args: Any, **options: Any) -> None:
        host, port = options["host"], options["port"]
        self.stdout.write("Tidings is starting…")
        if not embedded.port_is_free(port):
            raise CommandError(
                f"Port {port} is in use (another Tidings run?): stop it, or run TIDINGS_PORT=8001 make run."
            )
        self.stopping = False
        # Until web, worker and beat run, a Ctrl-C (KeyboardInterrupt) or SIGTERM unwinds at once.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        try:
            with self._servers():
                self._run(host, port, demo=not options["no_demo"])
        except embedded.EmbeddedError as exc:
            raise CommandError(str(exc)) from None

    def _stop(self, *_: Any) -> None:
        self.stopping = True

    @contextlib.contextmanager
    def _servers(self) -> Iterator[None]:
        postgres, redis = settings.TIDINGS_EMBEDDED_POSTGRES, settings.TIDINGS_EMBEDDED_REDIS
        if not (postgres or redis):
            yield
            return
        started = False
        try:
            with embedded.servers(settings.DATA_DIR, postgres=postgres, redis=redis, say=self.stdout.write):
                started = True
                try:
                    yield
                finally:
                    connections.close_all()
        finally:
            if started:
                self.stdout.write("Stopped the embedded servers.")

    def _run(self, host: str, port: int, *, demo: bool) -> None:
        self.stdout.write("Migrating the database…")
        call_command("migrate", interactive=False, verbosity=0)
        world: dict[str, Any] = {}
        if demo:
            self.stdout.write("Seeding the demo project…")
            out = StringIO()
            call_command("demo", json=True, stdout=out)
            world = json.loads(out.getvalue())
        connections.close_all()  # the servers may stop under an idle connection later

        # From here on the children run in sessions of their own; a Ctrl-C reaches only us,
        # and we stop them in order.
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)
        processes = self._start(host, port)
        started = time.time()
        base = f"http://{host}:{port}"
        healthy = False
        exit_code = 0
        try:
            while not self.stopping:
                for name, process in processes.items():
                    if process.poll() is not None:
                        self.stderr.write(f"{name} exited with status {process.returncode}; stopping the others.")
                        exit_code = 1
                        self.stopping = True
                if not healthy and not self.stopping:
                    healthy = self._healthy(base, started)
                    if healthy:
                        self._announce(base, world)
                    elif time.time() - started > HEALTHY_WITHIN_SECONDS:
                        self.stderr.write(f"Not healthy after {HEALTHY_WITHIN_SECONDS} s: see {base}/health.")
                time.sleep(0.5)
        finally:
            self._stop_all(processes)
        if exit_code:
            raise CommandError("Tidings stopped because one of its processes exited.")

    def _start(self, host: str, port: int) -> dict[str, subprocess.Popen]:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.local"),
        }
        python = sys.executable
        queues = ",".join(settings.TIDINGS_WORKER_QUEUES)
        commands = {
            "web": [python, "-m", "uvicorn", "config.asgi:application", "--host", host, "--port", str(port)],
            "worker": [python, "-m", "celery", "-A", "config", "worker", "-l", "info", "-Q", queues, "-n", "worker@%h"],
            # Beat's INFO is a line per task sent (a dozen loops every few seconds); its
            # warnings and errors still show.
            "beat": [python, "-m", "celery", "-A", "config", "beat", "-l", "warning"],
        }
        return {
            name: subprocess.Popen(command, env=env, **embedded.child_options()) for name, command in commands.items()
        }

    @staticmethod
    def _healthy(base: str, started: float) -> bool:
        """Worker and beat have sent heartbeats since this run started (not the last run's),
        and then /health answers 200. The table is read first so warming up logs no 503s."""
        from datetime import UTC, datetime

        from apps.core.models import Heartbeat

        since = datetime.fromtimestamp(started, tz=UTC)
        try:
            fresh = Heartbeat.objects.filter(name__in=["worker", "beat"], at__gte=since).count()
        finally:
            connections.close_all()
        if fresh < 2:
            return False
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5) as response:  # noqa: S310 - our own URL
                return response.status == 200
        except OSError:  # 503 (HTTPError) or not answering yet
            return False

    def _announce(self, base: str, world: dict[str, Any]) -> None:
        self.stdout.write(self.style.SUCCESS("\nTidings is running. Ctrl-C stops it.\n"))
        self.stdout.write(f"  Console:    {base}/console/")
        self.stdout.write(f"  API docs:   {base}/api/docs/")
        self.stdout.write(f"  Health:     {base}/health")
        if settings.TIDINGS_EMBEDDED_POSTGRES:
            self.stdout.write(f"  PostgreSQL: {settings.DATABASE_URL} (embedded, data in {settings.DATA_DIR})")
        if settings.TIDINGS_EMBEDDED_REDIS:
            self.stdout.write(f"  Redis:      {settings.REDIS_URL} (embedded)")
        if world:
            self.stdout.write(f"  Login:      {world.get('email', world['username'])} / {world['password']}")
            self.stdout.write(f"  Sent mail:  {base}/console/sent-mail/ (account email, links clickable)")
            self.stdout.write(f"  Public key: {world['public_key']}")
            self.stdout.write(f"  Secret key: {world['secret_key']}\n")

    def _stop_all(self, processes: dict[str, subprocess.Popen]) -> None:
        self.stdout.write("Stopping web, worker and beat…")
        for process in processes.values():
            if process.poll() is None:
                # The main process only: Celery then shuts its pool down warmly.
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.stdout.write("Stopped web, worker and beat.")
