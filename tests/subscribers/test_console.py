from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.subscribers.models import ImportJob, Segment, TagEvent
from apps.subscribers.selectors import subscriber_tag_names
from apps.subscribers.services import segment_create, subscriber_identify, subscriber_tags_change
from tests.factories import MembershipFactory


@pytest.fixture
def console(project: Any) -> Client:
    client = Client()
    client.force_login(MembershipFactory(organization=project.organization, role="editor").user)
    return client


def test_list_searches_and_filters_within_the_project(console: Client, project: Any, other_project: Any) -> None:
    a = subscriber_identify(project=project, external_id="alice", email="alice@example.com")
    subscriber_identify(project=project, external_id="bob")
    subscriber_identify(project=other_project, external_id="alice-elsewhere")
    subscriber_tags_change(project=project, subscriber=a, add=["vip"], remove=[], source="api")
    page = console.get("/console/subscribers/").content.decode()
    assert "alice" in page and "bob" in page and "alice-elsewhere" not in page
    page = console.get("/console/subscribers/?q=alice").content.decode()
    assert "alice@example.com" in page and "bob" not in page
    page = console.get("/console/subscribers/?tag=vip").content.decode()
    assert "alice" in page and "bob" not in page


def test_subscriber_page_edits_tags_and_shows_errors(console: Client, project: Any, other_project: Any) -> None:
    s = subscriber_identify(project=project, external_id="alice", attributes={"plan": "pro"})
    page = console.get(f"/console/subscribers/{s.pk}/").content.decode()
    assert "&quot;plan&quot;: &quot;pro&quot;" in page and "Nothing sent to this subscriber yet." in page
    response = console.post(f"/console/subscribers/{s.pk}/", {"add": "vip, beta", "remove": ""})
    assert response.status_code == 302
    assert subscriber_tag_names(project, [s.pk])[s.pk] == {"vip", "beta"}
    assert TagEvent.objects.filter(subscriber=s, source="console").count() == 2
    response = console.post(f"/console/subscribers/{s.pk}/", {"add": "x" * 70, "remove": ""})
    assert response.status_code == 400 and "limit is 64" in response.content.decode()
    foreign = subscriber_identify(project=other_project, external_id="z")
    assert console.get(f"/console/subscribers/{foreign.pk}/").status_code == 404


def test_viewer_cannot_change_tags(project: Any) -> None:
    s = subscriber_identify(project=project, external_id="alice")
    client = Client()
    client.force_login(MembershipFactory(organization=project.organization, role="viewer").user)
    assert client.post(f"/console/subscribers/{s.pk}/", {"add": "vip"}).status_code == 403
    assert not subscriber_tag_names(project, [s.pk])


def test_segment_editor_previews_and_saves(console: Client, project: Any) -> None:
    s = subscriber_identify(project=project, external_id="alice")
    subscriber_tags_change(project=project, subscriber=s, add=["vip"], remove=[], source="api")
    rules = {"op": "and", "groups": [{"all": ["vip"]}]}
    r = console.post("/console/subscribers/segments/preview/", json.dumps(rules), content_type="application/json")
    assert r.json() == {"count": 1}
    bad = {"op": "and", "groups": [{"all": ["vip"]}, {"none": ["vip"]}]}
    r = console.post("/console/subscribers/segments/preview/", json.dumps(bad), content_type="application/json")
    assert r.status_code == 422 and r.json()["code"] == "contradictory_segment_predicate"
    r = console.post("/console/subscribers/segments/new/", {"name": "VIP", "rules": json.dumps(bad)})
    assert r.status_code == 400 and not Segment.objects.exists()
    r = console.post("/console/subscribers/segments/new/", {"name": "VIP", "rules": json.dumps(rules)})
    assert r.status_code == 302
    assert "VIP" in console.get("/console/subscribers/segments/").content.decode()


def test_segment_of_another_project_is_404(console: Client, other_project: Any) -> None:
    segment = segment_create(project=other_project, name="X", rules={"op": "and", "groups": [{"any": ["a"]}]})
    assert console.get(f"/console/subscribers/segments/{segment.pk}/").status_code == 404


def test_import_upload_redirects_to_progress(console: Client, project: Any, other_project: Any) -> None:
    upload = SimpleUploadedFile("p.csv", b"external_id,tags\na,vip\n", content_type="text/csv")
    r = console.post("/console/subscribers/imports/", {"file": upload})
    assert r.status_code == 302
    job = ImportJob.objects.get(project=project)
    assert r["Location"] == f"/console/subscribers/imports/{job.pk}/"
    status = console.get(f"/console/subscribers/imports/{job.pk}/status/").json()
    assert status["status"] == "pending" and status["rows_done"] == 0
    bad = SimpleUploadedFile("p.csv", b"email\nx@example.com\n", content_type="text/csv")
    r = console.post("/console/subscribers/imports/", {"file": bad})
    assert r.status_code == 400 and "external_id" in r.content.decode()
    other = ImportJob.objects.create(project=other_project, file_name="x", format="csv")
    assert console.get(f"/console/subscribers/imports/{other.pk}/status/").status_code == 404
