from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.subscribers.models import ImportJob, Subscriber, TagEvent
from apps.subscribers.selectors import import_running, segment_subscriber_ids, subscriber_tag_names
from apps.subscribers.services import import_run, segment_create, subscriber_identify
from tests.fixtures.worker import wait_for

GOOD_AND_BAD_CSV = (
    (
        "external_id,email,phone,timezone,tags,attributes.plan\n"
        "u1,u1@example.com,+351912345678,Europe/Lisbon,vip|beta,pro\n"  # line 2 (UTF-8 "é" below is fine)
        "u2,not-an-email,,,,z\u00e9\n"  # line 3: bad email (and UTF-8 decides the encoding)
        "u3,,,Mars/Base,,\n"  # line 4: bad timezone
        "u4,,,,ok|" + "x" * 70 + ",\n"  # line 5: tag too long
        "u5,only,three\n"  # line 6: wrong column count
    ).encode()
    + b"u6,caf\xe9@example.com,,,,\n"
    + "u7,,,,beta,fr\u00e9e\n".encode()
)  # line 7: latin-1 byte; line 8 good


@pytest.fixture(autouse=True)
def _one_writer(settings: Any) -> None:
    # In-process runs share the test's open transaction, which other connections cannot
    # see; the real-worker test below runs with the default parallel writers.
    settings.TIDINGS_IMPORT_WRITERS = 1


def _upload(client: Any, content: bytes, name: str = "people.csv", content_type: str = "text/csv") -> Any:
    upload = SimpleUploadedFile(name, content, content_type=content_type)
    return client.post("/api/v1/subscribers/import", {"file": upload}, format="multipart")


def test_csv_import_lands_good_rows_and_reports_bad_ones_by_line(secret_client: Any, project: Any) -> None:
    existing = subscriber_identify(project=project, external_id="u1", email="old@example.com", locale="pt-PT")
    r = _upload(secret_client, GOOD_AND_BAD_CSV)
    assert r.status_code == 202, r.json()
    job_id = r.json()["id"]
    assert r["Location"] == f"/api/v1/imports/{job_id}"
    assert import_running(project)

    import_run(project_id=project.pk, job_id=job_id)

    body = secret_client.get(f"/api/v1/imports/{job_id}").json()
    assert body["status"] == "succeeded"
    assert (body["rows_total"], body["rows_done"], body["rows_imported"], body["rows_failed"]) == (7, 7, 2, 5)
    assert [e["line"] for e in body["errors"]] == [3, 4, 5, 6, 7]
    assert "email" in body["errors"][0]["message"] and "UTF-8" in body["errors"][4]["message"]
    u1 = Subscriber.objects.get(project=project, external_id="u1")
    assert u1.pk == existing.pk
    assert (u1.email, u1.phone, u1.locale, u1.attributes) == (
        "u1@example.com",
        "+351912345678",
        "pt-PT",
        {"plan": "pro"},
    )
    u7 = Subscriber.objects.get(project=project, external_id="u7")
    assert u7.attributes == {"plan": "fr\u00e9e"}
    assert subscriber_tag_names(project, [u1.pk, u7.pk]) == {u1.pk: {"vip", "beta"}, u7.pk: {"beta"}}
    assert set(TagEvent.objects.filter(source="import").values_list("tag_name", flat=True)) == {"vip", "beta"}
    assert not Subscriber.objects.filter(external_id__in=["u2", "u3", "u4", "u5", "u6"]).exists()
    assert not import_running(project)
    assert not default_storage.exists(ImportJob.objects.get(pk=job_id).file_name)


def test_ndjson_raw_body_import_and_segments_follow(secret_client: Any, project: Any) -> None:
    segment = segment_create(project=project, name="VIP", rules={"op": "and", "groups": [{"all": ["vip"]}]})
    lines = [
        {"external_id": "a", "tags": ["vip"], "attributes": {"n": 1}},
        {"external_id": 7, "email": "seven@example.com"},
        "not json",
        {"external_id": "a", "tags": ["late"]},
    ]
    payload = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines).encode()
    r = secret_client.generic("POST", "/api/v1/subscribers/import", payload, content_type="application/x-ndjson")
    assert r.status_code == 202, r.json()
    job = import_run(project_id=project.pk, job_id=r.json()["id"])
    assert (job.status, job.rows_imported, job.rows_failed) == ("succeeded", 3, 1)
    assert job.errors == [{"line": 3, "message": job.errors[0]["message"]}]
    a = Subscriber.objects.get(project=project, external_id="a")
    assert subscriber_tag_names(project, [a.pk])[a.pk] == {"vip", "late"}
    assert list(segment_subscriber_ids(project, segment.pk)) == [a.pk]
    assert Subscriber.objects.get(project=project, external_id="7").email == "seven@example.com"


def test_rerunning_an_import_changes_nothing(secret_client: Any, project: Any) -> None:
    job_id = _upload(secret_client, b"external_id,tags\nx,a|b\ny,a\n").json()["id"]
    import_run(project_id=project.pk, job_id=job_id)
    ImportJob.objects.filter(pk=job_id).update(status="running", lines_committed=0, rows_done=0, rows_imported=0)
    import_run(project_id=project.pk, job_id=job_id)
    assert Subscriber.objects.for_project(project).count() == 2
    assert TagEvent.objects.filter(project=project).count() == 3


def test_values_that_copy_must_escape_land_exactly(secret_client: Any, project: Any) -> None:
    # New subscribers go in through COPY text written by the importer itself: tabs,
    # newlines, carriage returns and backslashes inside values must arrive unchanged.
    content = (
        b'external_id,tags,attributes.note,attributes\n"tab\there",back\\slash|plain,"line\none","{""q"":""a\\\\b""}"\n'
        b'"cr\rid",plain,x\\y,\nplain-id,plain,,\n'
    )
    job_id = _upload(secret_client, content).json()["id"]
    job = import_run(project_id=project.pk, job_id=job_id)
    assert (job.status, job.rows_imported, job.rows_failed) == ("succeeded", 3, 0), job.errors
    people = {s.external_id: s for s in Subscriber.objects.for_project(project)}
    assert set(people) == {"tab\there", "cr\rid", "plain-id"}
    assert people["tab\there"].attributes == {"note": "line\none", "q": "a\\b"}
    assert people["cr\rid"].attributes == {"note": "x\\y"}
    tags = subscriber_tag_names(project, [p.pk for p in people.values()])
    assert tags[people["tab\there"].pk] == {"back\\slash", "plain"}
    assert tags[people["plain-id"].pk] == {"plain"}
    assert set(TagEvent.objects.filter(project=project).values_list("tag_name", flat=True)) == {"back\\slash", "plain"}


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"email,tags\na@example.com,x\n", "missing_columns"),
        (b"external_id,colour\nx,red\n", "unknown_columns"),
        ("external_id,email\nx,é@example.com\n".encode("utf-16"), "invalid_encoding"),
        ("external_id,name\nx,Jos\u00e9\ny,Zo\u00eb\n".encode("latin-1"), "invalid_encoding"),
        (b"", "empty_import"),
        (b"\x00\x01\x02binary", "invalid_encoding"),
    ],
)
def test_unreadable_files_are_refused_up_front_and_leave_nothing(
    secret_client: Any, project: Any, content: bytes, code: str
) -> None:
    before = (
        set(default_storage.listdir(f"imports/{project.pk}")[1])
        if default_storage.exists(f"imports/{project.pk}")
        else set()
    )
    r = _upload(secret_client, content)
    assert r.status_code == 422, r.json()
    assert r.json()["code"] == code
    assert not ImportJob.objects.exists()
    after = (
        set(default_storage.listdir(f"imports/{project.pk}")[1])
        if default_storage.exists(f"imports/{project.pk}")
        else set()
    )
    assert after == before


def test_a_file_with_no_readable_row_fails_clearly(secret_client: Any, project: Any) -> None:
    job_id = _upload(secret_client, b"external_id,email\n,a@example.com\nx,bad\n").json()["id"]
    job = import_run(project_id=project.pk, job_id=job_id)
    assert job.status == "failed"
    assert "None of the 2 rows" in job.error


def test_unsupported_type_is_415(secret_client: Any) -> None:
    r = secret_client.generic("POST", "/api/v1/subscribers/import", b"<xml/>", content_type="application/xml")
    assert r.status_code == 415
    assert r.json()["code"] == "unsupported_import_format"


def test_two_gigabyte_upload_is_refused_before_reading(secret_client: Any) -> None:
    r = secret_client.generic(
        "POST", "/api/v1/subscribers/import", b"external_id\n", content_type="text/csv", CONTENT_LENGTH=str(2 * 1024**3)
    )
    assert r.status_code == 413
    assert r.json()["code"] == "payload_too_large"
    assert not ImportJob.objects.exists()


def test_other_projects_import_is_404(secret_client: Any, other_secret_client: Any, project: Any) -> None:
    job_id = _upload(secret_client, b"external_id\nx\n").json()["id"]
    assert other_secret_client.get(f"/api/v1/imports/{job_id}").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_import_runs_on_a_real_worker(celery_worker: Any, secret_client: Any, project: Any) -> None:
    rows = "".join(f"w{i},w{i}@example.com,t{i % 3}|all\n" for i in range(2500))
    r = _upload(secret_client, f"external_id,email,tags\n{rows}".encode())
    assert r.status_code == 202
    job_id = r.json()["id"]

    def finished() -> Any:
        body = secret_client.get(f"/api/v1/imports/{job_id}").json()
        return body if body["status"] in ("succeeded", "failed") else None

    body = wait_for(finished, timeout=60, message=celery_worker.log()[-2000:])
    assert body["status"] == "succeeded", body
    assert (body["rows_total"], body["rows_done"], body["rows_imported"]) == (2500, 2500, 2500)
    assert Subscriber.objects.for_project(project).count() == 2500
    assert TagEvent.objects.filter(project=project, source="import").count() == 5000


@pytest.mark.django_db(transaction=True)
# A fresh chunk is first written without asking who exists; a chunk after one that held
# existing people asks first. The race can strike either way.
@pytest.mark.parametrize("asked_first", [False, True])
def test_import_falls_back_to_upsert_when_identify_wins_a_race(monkeypatch: Any, asked_first: bool) -> None:
    import io
    import threading

    from django.db import connection

    from apps.subscribers.services import import_create, import_load, imports
    from tests.factories import ProjectFactory

    project = ProjectFactory()
    original, original_chunk_write = import_load._write_fresh, imports.chunk_write
    assumed: dict[str, bool] = {}

    def identify_meanwhile() -> None:
        subscriber_identify(project=project, external_id="r2", email="mine@example.com")
        connection.close()

    def racing(job: Any, rows: Any, tag_ids: Any) -> Any:
        # Another connection creates one of these people after the chunk began.
        if any(r.external_id == "r2" for r in rows):
            thread = threading.Thread(target=identify_meanwhile)
            thread.start()
            thread.join()
        return original(job, rows, tag_ids)

    def chunk_write(job: Any, rows: Any, tag_ids: Any, *, assume_new: bool) -> bool:
        assumed.update(dict.fromkeys((r.external_id for r in rows), assume_new))
        return original_chunk_write(job, rows, tag_ids, assume_new=assume_new)

    monkeypatch.setattr(import_load, "_write_fresh", racing)
    monkeypatch.setattr(imports, "chunk_write", chunk_write)
    body = b"external_id,tags\nr1,a\nr2,b\n"
    if asked_first:
        # A first chunk with an existing person: the chunk holding r2 asks who exists.
        subscriber_identify(project=project, external_id="r0")
        monkeypatch.setattr(imports, "CHUNK_ROWS", 1)
        body = b"external_id,tags\nr0,a\nr2,b\nr1,a\n"
    job = import_create(project=project, stream=io.BytesIO(body), file_name="x.csv", content_type="text/csv")
    job = import_run(project_id=project.pk, job_id=job.pk)

    assert (job.status, job.rows_imported) == ("succeeded", 3 if asked_first else 2)
    assert assumed == ({"r0": True, "r2": False, "r1": False} if asked_first else {"r1": True, "r2": True})
    r2 = Subscriber.objects.get(project=project, external_id="r2")
    assert r2.email == "mine@example.com"
    assert subscriber_tag_names(project, [r2.pk]) == {r2.pk: {"b"}}
    assert Subscriber.objects.for_project(project).count() == (3 if asked_first else 2)


def test_body_without_length_is_cut_off_at_the_limit_and_leaves_nothing(project: Any, settings: Any) -> None:
    import io

    from apps.core.errors import ApplicationError
    from apps.subscribers.services import import_create

    folder = f"imports/{project.pk}"

    def stored() -> set[str]:
        return set(default_storage.listdir(folder)[1]) if default_storage.exists(folder) else set()

    before = stored()
    settings.TIDINGS_UPLOAD_MAX_BODY_BYTES = 1000
    stream = io.BytesIO(b"external_id\n" + b"someone\n" * 1000)
    with pytest.raises(ApplicationError) as exc:
        import_create(project=project, stream=stream, file_name="big.csv", content_type="text/csv")
    assert (exc.value.status, exc.value.code) == (413, "payload_too_large")
    assert not ImportJob.objects.exists()
    assert stored() == before


def test_an_import_that_keeps_crashing_is_given_up(secret_client: Any, project: Any) -> None:
    job_id = _upload(secret_client, b"external_id\nx\n").json()["id"]
    ImportJob.objects.filter(pk=job_id).update(status="running", attempts=3)
    job = import_run(project_id=project.pk, job_id=job_id)
    assert job.status == "failed" and job.error.startswith("poison:") and "giving up" in job.error
    assert not Subscriber.objects.filter(project=project).exists()
