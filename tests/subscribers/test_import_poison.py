"""A row that raises while it is read or loaded is that row's error, and the import goes
on; an import that keeps stopping its worker ends as poison. Other projects' imports on
the same worker are not disturbed either way."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from apps.subscribers.models import ImportJob, Subscriber
from apps.subscribers.services import import_run
from apps.subscribers.services.imports import imports_sweep
from tests.fixtures.worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def upload(client: Any, body: str, name: str = "people.csv") -> int:
    file = SimpleUploadedFile(name, body.encode(), content_type="text/csv")
    response = client.post("/api/v1/subscribers/import", {"file": file}, format="multipart")
    assert response.status_code == 202, response.json()
    return response.json()["id"]


def external_ids(project: Any) -> set[str]:
    return set(Subscriber.objects.for_project(project).values_list("external_id", flat=True))


def clean_file(count: int) -> str:
    return "external_id,email\n" + "".join(f"b{i},b{i}@example.com\n" for i in range(count))


def test_rows_that_raise_while_read_or_loaded_are_reported_by_line_and_the_rest_lands(
    celery_worker: Any, secret_client: Any, other_secret_client: Any, project: Any, other_project: Any
) -> None:
    nested = '"' + "[" * 100_000 + '"'  # json.loads gives up with RecursionError
    nul = '"{""note"": ""\\u0000""}"'  # valid JSON that jsonb cannot store
    body = (
        "external_id,email,attributes\n"
        "a1,a1@example.com,\n"  # line 2
        f"a2,,{nested}\n"  # line 3
        f"a3,,{nul}\n"  # line 4
        'a4,a4@example.com,"{""plan"": ""pro""}"\n'  # line 5
        + "".join(f"a{i},a{i}@example.com,\n" for i in range(5, 40))
    )
    poisoned = upload(secret_client, body)
    healthy = upload(other_secret_client, clean_file(60))

    def finished() -> bool:
        return all(ImportJob.objects.get(pk=pk).is_finished for pk in (poisoned, healthy))

    wait_for(finished, timeout=60, message=celery_worker.log()[-3000:])
    job = ImportJob.objects.get(pk=poisoned)
    assert (job.status, job.rows_done, job.rows_imported, job.rows_failed) == ("succeeded", 39, 37, 2)
    assert [e["line"] for e in job.errors] == [3, 4]
    assert job.errors[0]["message"].startswith("The row could not be read: RecursionError")
    assert "Unicode escape" in job.errors[1]["message"]
    assert external_ids(project) == {"a1", "a4"} | {f"a{i}" for i in range(5, 40)}
    assert Subscriber.objects.get(project=project, external_id="a4").attributes == {"plan": "pro"}
    other = ImportJob.objects.get(pk=healthy)
    assert (other.status, other.rows_imported, other.rows_failed) == ("succeeded", 60, 0)
    assert len(external_ids(other_project)) == 60


def test_an_import_that_stops_its_worker_every_time_ends_as_poison_after_the_budget(
    start_worker: Any,
    secret_client: Any,
    other_secret_client: Any,
    project: Any,
    other_project: Any,
    monkeypatch: Any,
) -> None:
    budget = 2
    db = connection.settings_dict
    blocker = psycopg.connect(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"] or "postgres", dbname=db["NAME"]
    )
    try:
        # An uncommitted subscriber with an external id the file also has: loading the
        # file waits for it and gives up after 200 ms, so every run of the import dies
        # mid-load, as on a worker that crashes.
        blocker.execute(
            "INSERT INTO subscribers_subscriber (project_id, external_id, email, phone, timezone, locale,"
            " attributes, created_at, updated_at) VALUES (%s, 'held', '', '', '', '', '{}', now(), now())",
            [project.pk],
        )
        monkeypatch.setenv("PGOPTIONS", "-c lock_timeout=200")
        monkeypatch.setenv("TIDINGS_POISON_AFTER_CRASHES", str(budget))
        worker = start_worker(queues=["default"])
        monkeypatch.delenv("PGOPTIONS")
        poisoned = upload(secret_client, "external_id\nfirst\nheld\nlast\n")
        healthy = upload(other_secret_client, clean_file(40))
        deadline = time.monotonic() + 90
        jobs = ImportJob.objects.filter(pk__in=[poisoned, healthy])
        while time.monotonic() < deadline and not all(j.is_finished for j in jobs):
            imports_sweep(older_than=timedelta(0))  # what beat does each minute, sooner
            time.sleep(1)
    finally:
        blocker.rollback()
        blocker.close()

    job = ImportJob.objects.get(pk=poisoned)
    assert (job.status, job.attempts) == ("failed", budget), worker.log()[-3000:]
    assert job.error.startswith("poison:")
    other = ImportJob.objects.get(pk=healthy)
    assert (other.status, other.rows_imported) == ("succeeded", 40)
    assert len(external_ids(other_project)) == 40
    # Another delivery of the task (or the sweeper) never runs it a budget+1st time.
    assert import_run(project_id=project.pk, job_id=poisoned).status == "failed"
    assert ImportJob.objects.get(pk=poisoned).attempts == budget
    assert not external_ids(project)
