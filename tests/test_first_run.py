"""What a newcomer meets first: benchmarks that prepare their own database, a favicon and a
plain 404 page, a quiet terminal while idle, and clear errors from the embedded servers."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from celery.app import trace
from django.conf import settings
from django.core.management import get_commands, load_command_class
from django.test import Client

from apps.core.bench import BenchCommand
from config import embedded
from config.celery import QuietControlLoops


def test_every_bench_command_prepares_its_database_the_same_way() -> None:
    benches = {name: app for name, app in get_commands().items() if name.startswith("bench_")}
    assert {"bench_publish", "bench_import", "bench_campaign", "bench_journeys"} <= set(benches)
    for name, app in benches.items():
        assert isinstance(load_command_class(app, name), BenchCommand), f"{name} does not prepare its database"


def test_bench_database_prepare_creates_a_missing_database() -> None:
    db = settings.DATABASES["default"]
    name = f"bench_prepare_{os.getpid()}"
    params = {"host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432, "user": db["USER"] or "postgres"}
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
    # A process of its own, as a bench command runs: its settings name the new database.
    env = {**os.environ, "DATABASE_URL": f"postgres://{params['user']}@{params['host']}:{params['port']}/{name}"}
    code = "import django; django.setup(); from apps.core.bench import bench_database_create as c; print(c(), c())"
    try:
        run = subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, cwd=settings.BASE_DIR, timeout=120, capture_output=True
        )
        assert run.stdout.split() == [b"True", b"False"]  # made once, then found
        with psycopg.connect(dbname=name, **params) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == (name,)
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_favicon_is_served_from_the_site_root(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/")


@pytest.mark.django_db
def test_an_unknown_url_shows_the_plain_404_page_not_a_debug_page(client: Client) -> None:
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    body = response.content.decode()
    assert "Page not found" in body or "not found" in body.lower()
    assert "URLconf" not in body and "Traceback" not in body


def _record(message: str, name: str) -> logging.LogRecord:
    record = logging.LogRecord("celery.app.trace", logging.INFO, __file__, 1, message, None, None)
    record.args = {"name": name, "id": "x", "runtime": 0.01, "return_value": None}
    return record


def test_beat_control_loops_do_not_fill_the_terminal_while_idle() -> None:
    quiet = QuietControlLoops()
    loop = next(iter(settings.CELERY_BEAT_SCHEDULE.values()))["task"]
    assert not quiet.filter(_record(trace.LOG_RECEIVED, loop))
    assert not quiet.filter(_record(trace.LOG_SUCCESS, loop))
    assert quiet.filter(_record(trace.LOG_SUCCESS, "delivery.dispatch_lane"))
    failure = logging.LogRecord("celery.app.trace", logging.ERROR, __file__, 1, "Task %(name)s failed", None, None)
    failure.args = {"name": loop}
    assert quiet.filter(failure)


def test_a_stale_postmaster_pid_naming_an_unrelated_process_is_not_a_lock(tmp_path: Path) -> None:
    pgdata = tmp_path / "postgres"
    pgdata.mkdir()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        for pid in (sleeper.pid, os.getpid()):
            (pgdata / "postmaster.pid").write_text(f"{pid}\n{pgdata}\n")
            assert embedded._postmaster_pid(pgdata) is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_missing_system_user_that_cannot_be_created_is_one_clear_line(monkeypatch: Any) -> None:
    import pwd

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(embedded, "PG_SYSTEM_USER", "tidings-no-such-user-x")
    monkeypatch.setenv("PATH", "/nonexistent")  # no useradd to be found
    with pytest.raises(KeyError):
        pwd.getpwnam("tidings-no-such-user-x")
    with pytest.raises(embedded.EmbeddedError, match="could not be created"):
        embedded._service_user()
