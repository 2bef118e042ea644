"""The delivery path on ``make run``'s embedded defaults: SQLite, no Redis, filesystem broker.

pytest-django runs against Postgres, so these tests drive a separate ``manage.py`` process
with DATABASE_URL, REDIS_URL and CELERY_BROKER_URL unset and a fresh TIDINGS_DATA_DIR:
the settings ``make run`` starts with (config.settings.test_sqlite: local, with tables made
from the models instead of replaying every migration). Nothing here touches the test database.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

BASE_DIR = Path(__file__).resolve().parents[2]
UNSET = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "CACHE_KEY_PREFIX", "TIDINGS_TEST_DB_NAME")


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.test_sqlite", TIDINGS_DATA_DIR=str(data_dir))
    return env


def _manage(data_dir: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=_env(data_dir),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated SQLite file per module; each test gets its own copy."""
    path = tmp_path_factory.mktemp("sqlite-template")
    done = _manage(path, "migrate", "--run-syncdb", "--noinput", "-v0", timeout=120)
    assert done.returncode == 0, done.stderr
    return path / "tidings.sqlite3"


@pytest.fixture
def data_dir(migrated: Path, tmp_path: Path) -> Path:
    shutil.copy(migrated, tmp_path / "tidings.sqlite3")
    return tmp_path


def _report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_enqueue_claim_send_record_on_sqlite_sends_each_delivery_once(data_dir: Path) -> None:
    done = _manage(data_dir, "delivery_selfcheck", "--count", "7")
    report = _report(done)

    assert report["vendor"] == "sqlite"
    assert [d["state"] for d in report["deliveries"]] == ["sent"] * 7
    assert [d["sends"] for d in report["deliveries"]] == [1] * 7
    assert [d["attempts"] for d in report["deliveries"]] == [1] * 7
    assert done.returncode == 0, done.stderr
    # The Redis stand-in lives next to the database, shared by every local process.
    assert (data_dir / "delivery-state.sqlite3").exists()


def test_bulk_lane_on_sqlite_drains_over_several_claims(data_dir: Path) -> None:
    env_batch = {"TIDINGS_DISPATCH_BATCH_SIZE": "3"}
    done = subprocess.run(
        [sys.executable, "manage.py", "delivery_selfcheck", "--count", "8", "--lane", "bulk"],
        cwd=BASE_DIR,
        env={**_env(data_dir), **env_batch},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = _report(done)

    assert len(report["deliveries"]) == 8
    assert report["all_sent_once"] is True, report


def test_a_real_worker_on_the_filesystem_broker_sends_what_was_enqueued(data_dir: Path) -> None:
    log = (data_dir / "worker.log").open("w")
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "info", "-c", "1"]
    command += ["-Q", "high,normal,bulk,default", "-n", f"sqlite-{os.getpid()}@%h"]
    command += ["--without-gossip", "--without-mingle"]
    worker = subprocess.Popen(
        command,
        cwd=BASE_DIR,
        env=_env(data_dir),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        done = _manage(data_dir, "delivery_selfcheck", "--count", "4", "--wait", "25")
        report = _report(done)
        assert [d["state"] for d in report["deliveries"]] == ["sent"] * 4, (data_dir / "worker.log").read_text()
        assert report["all_sent_once"] is True
        assert "delivery.dispatch_lane" in (data_dir / "worker.log").read_text()
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while worker.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        log.close()
