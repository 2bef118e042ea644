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


AUDIENCE_SCRIPT = """
import json
from apps.delivery.channels.base import ReceiptEvent, ReceiptStatus
from apps.delivery.dispatch import dispatch_batch
from apps.delivery.management.commands.delivery_selfcheck import _connector, _project
from apps.delivery.models import Delivery, Suppression, TemplateVersion
from apps.delivery.services import deliveries_cancel, deliveries_enqueue_for_subscribers
from apps.delivery.services.receipts import receipt_ingest
from apps.subscribers.models import Subscriber

project = _project()
connector = _connector(project)
people = [Subscriber.objects.create(project=project, external_id=f"p{i}", email=f"P{i}@example.com") for i in range(4)]
Subscriber.objects.create(project=project, external_id="no-email")
version = TemplateVersion.objects.get(project=project, template__key="welcome")
args = dict(project=project, subscriber_ids_sql="SELECT id FROM subscribers_subscriber WHERE project_id = %s",
            params=[project.pk], channel="email", lane="bulk", template_version_id=version.pk,
            connector_id=connector.pk)
created = deliveries_enqueue_for_subscribers(origin_kind="campaign", origin_id="c1", key_prefix="c1", **args)
again = deliveries_enqueue_for_subscribers(origin_kind="campaign", origin_id="c1", key_prefix="c1", **args)
other = deliveries_enqueue_for_subscribers(origin_kind="campaign", origin_id="c2", key_prefix="c2", **args)
cancelled = deliveries_cancel(project=project, origin_kind="campaign", origin_ids=["c2"])
while dispatch_batch("bulk"):
    pass
first = Delivery.objects.filter(origin_id="c1").order_by("pk").first()
ingest = receipt_ingest(project_id=project.pk, connector_id=connector.pk, events=[
    ReceiptEvent(provider_event_id="e1", status=ReceiptStatus.BOUNCED, provider_reference=first.provider_reference,
                 hard_bounce=True, description="mailbox gone"),
])
states = sorted(Delivery.objects.filter(origin_kind="campaign").values_list("origin_id", "state"))
suppressed = list(Suppression.objects.values_list("address", flat=True))
print(json.dumps({"created": created, "again": again, "other": other, "cancelled": cancelled,
                  "recorded": ingest.recorded, "suppressed": suppressed, "states": states}))
"""


def test_audience_fanout_cancel_and_receipts_on_sqlite(data_dir: Path) -> None:
    done = _manage(data_dir, "shell", "-v0", "-c", AUDIENCE_SCRIPT)
    report = _report(done)

    assert (report["created"], report["again"], report["other"], report["cancelled"]) == (4, 0, 4, 4)
    assert report["recorded"] == 1
    assert report["suppressed"] == ["p0@example.com"]
    assert report["states"] == [["c1", "bounced"]] + [["c1", "sent"]] * 3 + [["c2", "cancelled"]] * 4
