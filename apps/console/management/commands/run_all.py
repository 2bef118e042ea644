"""Run web (ASGI), a Celery worker and Celery beat in the foreground; Ctrl-C stops all three."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from io import StringIO
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Start web, worker and beat together (the `make run` command)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default=os.environ.get("TIDINGS_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("TIDINGS_PORT", "8000")))
        parser.add_argument("--no-demo", action="store_true", help="Do not create or print demo data.")

    def handle(self, *args: Any, **options: Any) -> None:
        host, port = options["host"], options["port"]
        demo: dict[str, Any] = {}
        if not options["no_demo"]:
            out = StringIO()
            call_command("demo", json=True, stdout=out)
            demo = json.loads(out.getvalue())

        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.local"),
        }
        python = sys.executable
        queues = ",".join(settings.TIDINGS_WORKER_QUEUES)
        commands = {
            "web": [python, "-m", "uvicorn", "config.asgi:application", "--host", host, "--port", str(port)],
            "worker": [python, "-m", "celery", "-A", "config", "worker", "-l", "info", "-Q", queues, "-n", "worker@%h"],
            "beat": [python, "-m", "celery", "-A", "config", "beat", "-l", "info"],
        }
        processes: dict[str, subprocess.Popen] = {}
        for name, command in commands.items():
            # Own process groups: Ctrl-C reaches us once and we stop each child cleanly.
            processes[name] = subprocess.Popen(command, env=env, start_new_session=True)

        base = f"http://{host}:{port}"
        self.stdout.write(self.style.SUCCESS("\nTidings is running (web + worker + beat). Ctrl-C stops all three.\n"))
        self.stdout.write(f"  Console:   {base}/console/")
        self.stdout.write(f"  API docs:  {base}/api/docs/")
        self.stdout.write(f"  Health:    {base}/health")
        self.stdout.write(f"  Broker:    {str(settings.CELERY_BROKER_URL).split('://')[0]}")
        if demo:
            self.stdout.write(f"  Login:     {demo['username']} / {demo['password']}")
            self.stdout.write(f"  Public key: {demo['public_key']}")
            self.stdout.write(f"  Secret key: {demo['secret_key']}\n")

        stopping = False

        def stop(*_: Any) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        exit_code = 0
        try:
            while not stopping:
                for name, process in processes.items():
                    if process.poll() is not None:
                        self.stderr.write(f"{name} exited with status {process.returncode}; stopping the others.")
                        exit_code = 1
                        stopping = True
                        break
                time.sleep(0.5)
        finally:
            self._stop_all(processes)
        if exit_code:
            sys.exit(exit_code)

    def _stop_all(self, processes: dict[str, subprocess.Popen]) -> None:
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
