from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.subscribers.models import ImportJob, Subscriber, TagEvent
from apps.subscribers.services.imports import imports_sweep
from tests.fixtures.worker import wait_for

ROWS = 250_000


@pytest.mark.django_db(transaction=True)
def test_import_survives_a_worker_crash_without_double_counting(
    start_worker: Any, secret_client: Any, project: Any
) -> None:
    body = "external_id,tags\n" + "".join(f"c{i},x|y\n" for i in range(ROWS))
    upload = SimpleUploadedFile("crash.csv", body.encode(), content_type="text/csv")
    job_id = secret_client.post("/api/v1/subscribers/import", {"file": upload}, format="multipart").json()["id"]

    first = start_worker(queues=["default"])
    wait_for(lambda: ImportJob.objects.get(pk=job_id).rows_done >= 50_000, timeout=120, message=first.log()[-2000:])
    first.kill()
    job = ImportJob.objects.get(pk=job_id)
    assert job.status == "running" and job.rows_done < ROWS, "the crash should interrupt the import"

    # The lost task comes back through the sweeper; a new worker finishes the job.
    assert imports_sweep(older_than=timedelta(0)) == 1
    second = start_worker(queues=["default"])
    wait_for(lambda: ImportJob.objects.get(pk=job_id).is_finished, timeout=240, message=second.log()[-2000:])
    job = ImportJob.objects.get(pk=job_id)
    assert (job.status, job.rows_done, job.rows_imported, job.rows_failed) == ("succeeded", ROWS, ROWS, 0)
    assert Subscriber.objects.for_project(project).count() == ROWS
    assert TagEvent.objects.filter(project=project).count() == 2 * ROWS
