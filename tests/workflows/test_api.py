"""Workflows as code over the API: drafts, publish errors, versions, executions, previews."""

from __future__ import annotations

import pytest

from apps.subscribers.models import Segment, Tag
from apps.workflows.models import Execution
from tests.openapi import schema_errors
from tests.workflows.helpers import chain, node, run_until_idle, subscribers, tag_branch_graph

pytestmark = pytest.mark.django_db

WAIT_GRAPH = chain(node("start", "start"), node("nine", "wait", mode="time_of_day", time="09:00"), node("end", "end"))


def save(client, key="onboarding", graph=None, **extra):
    return client.post("/api/v1/workflows", {"key": key, "name": "Onboarding", "graph": graph, **extra}, format="json")


def test_create_update_publish_and_read_a_version(secret_client):
    created = save(secret_client, graph=tag_branch_graph("seen"))
    assert created.status_code == 201, created.json()
    assert created.json()["draft_issues"] == []
    assert save(secret_client, graph=tag_branch_graph("seen"), name="Renamed").status_code == 200
    published = secret_client.post("/api/v1/workflows/onboarding/publish")
    assert published.status_code == 201 and published.json()["number"] == 1
    save(secret_client, graph=chain(node("start", "start"), node("end", "end")))
    second = secret_client.post("/api/v1/workflows/onboarding/publish")
    assert second.json()["number"] == 2
    version = secret_client.get("/api/v1/workflows/onboarding/versions/1")
    assert version.status_code == 200 and version.json()["graph"] == tag_branch_graph("seen")
    assert secret_client.get("/api/v1/workflows/onboarding/versions/9").status_code == 404


def test_publish_refuses_with_every_error_naming_node_or_edge(secret_client):
    graph = tag_branch_graph("vip")  # tag "vip" does not exist in the project
    graph["nodes"].append(node("ghost", "teleport"))
    save(secret_client, graph=graph)
    response = secret_client.post("/api/v1/workflows/onboarding/publish")
    assert response.status_code == 422
    body = response.json()
    assert response["Content-Type"].startswith("application/problem+json")
    assert body["code"] == "invalid_graph"
    assert {"code": "unknown_node_type", "node": "ghost"}.items() <= body["errors"][0].items()
    assert secret_client.get("/api/v1/workflows/onboarding/versions/1").status_code == 404


def test_draft_with_a_malformed_graph_is_refused_and_nothing_changes(secret_client):
    assert save(secret_client, graph=tag_branch_graph("seen")).status_code == 201
    bad = save(secret_client, graph={"nodes": [{"id": "x"}], "edges": []})
    assert bad.status_code == 422 and bad.json()["errors"][0]["node"] == "x"
    assert secret_client.get("/api/v1/workflows/onboarding").json()["draft_graph"] == tag_branch_graph("seen")


def test_versions_need_workflows_write_scope(project, make_key, client_for):
    _, raw = make_key(project, "restricted", ceiling="secret", scopes=["workflows:start"])
    response = client_for(raw).get("/api/v1/workflows/x/versions/1")
    assert response.status_code == 403 and response.json()["code"] == "missing_scope"


def test_start_execution_reports_unknown_ids_and_runs(secret_client, project):
    subscribers(project, 2)
    save(secret_client, graph=tag_branch_graph("seen"))
    secret_client.post("/api/v1/workflows/onboarding/publish")
    response = secret_client.post(
        "/api/v1/workflows/onboarding/executions", {"external_ids": ["u0", "nobody", "u1"]}, format="json"
    )
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["unknown_external_ids"] == ["nobody"] and body["state"] == "pending"
    # Expansion and steps run in workers; here the test drives them in-process.
    from apps.workflows.services import execution_expand_chunk

    execution_expand_chunk(project=project, execution_id=body["id"])
    run_until_idle()
    summary = secret_client.get(f"/api/v1/executions/{body['id']}").json()
    assert summary["state"] == "completed" and summary["totals"]["completed"] == 2
    assert summary["nodes"]["check"]["done"] == 2
    assert summary["nodes"]["tag_no"] == {"active": 0, "cancelled": 0, "done": 0, "failed": 0, "waiting": 0}
    journey = secret_client.get(f"/api/v1/executions/{body['id']}/subscribers/u0").json()
    assert [s["node"] for s in journey["path"]] == ["start", "mark", "check", "tag_yes", "end"]
    assert journey["path"][2]["outcome"] == "yes"


def test_starting_without_a_published_version_is_refused(secret_client):
    save(secret_client, graph=tag_branch_graph("seen"))
    response = secret_client.post("/api/v1/workflows/onboarding/executions", {"everyone": True}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "workflow_not_published"
    assert not Execution.objects.exists()


def test_segment_or_tag_of_another_project_is_not_found(secret_client, other_project):
    segment = Segment.objects.create(project=other_project, name="theirs", rules={})
    Tag.objects.create(project=other_project, name="theirs")
    save(secret_client, graph=tag_branch_graph("seen"))
    secret_client.post("/api/v1/workflows/onboarding/publish")
    for audience in ({"segment": segment.pk}, {"tag": "theirs"}):
        response = secret_client.post("/api/v1/workflows/onboarding/executions", audience, format="json")
        assert response.status_code == 404, audience


def test_audience_must_be_exactly_one(secret_client):
    response = secret_client.post("/api/v1/workflows/x/executions", {"tag": "a", "everyone": True}, format="json")
    assert response.status_code == 422 and response.json()["code"] == "validation_error"


def test_another_projects_workflow_and_execution_are_404(secret_client, other_secret_client, project):
    save(secret_client, graph=tag_branch_graph("seen"))
    secret_client.post("/api/v1/workflows/onboarding/publish")
    started = secret_client.post("/api/v1/workflows/onboarding/executions", {"everyone": True}, format="json")
    assert other_secret_client.get("/api/v1/workflows/onboarding/versions/1").status_code == 404
    assert other_secret_client.get(f"/api/v1/executions/{started.json()['id']}").status_code == 404
    assert other_secret_client.post(f"/api/v1/executions/{started.json()['id']}/cancel").status_code == 404


def test_wait_preview_uses_the_subscribers_timezone(secret_client, project):
    subscribers(project, 1, prefix="ny", timezone="America/New_York")
    save(secret_client, graph=WAIT_GRAPH)
    secret_client.post("/api/v1/workflows/onboarding/publish")
    url = "/api/v1/workflows/onboarding/versions/1/wait-preview"
    response = secret_client.get(url, {"node": "nine", "subscriber": "ny0", "at": "2026-03-08T05:00:00Z"})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["timezone"] == "America/New_York" and body["timezone_source"] == "subscriber"
    assert body["resumes_at"].startswith("2026-03-08T13:00")  # 09:00 EDT, the day clocks spring forward
    project_tz = secret_client.get(url, {"node": "nine", "at": "2026-03-29T00:00:00Z"}).json()
    assert project_tz["timezone_source"] == "project" and project_tz["resumes_at"].startswith("2026-03-29T08:00")
    assert secret_client.get(url, {"node": "nine", "timezone": "Mars/Olympus"}).status_code == 422
    assert secret_client.get(url, {"node": "start"}).json()["code"] == "not_a_wait_node"
    assert secret_client.get(url, {"node": "nine", "subscriber": "nobody"}).status_code == 404


def test_publishing_wait_until_without_project_timezone_is_refused(secret_client, project):
    project.timezone = ""
    project.save()
    save(secret_client, graph=WAIT_GRAPH)
    response = secret_client.post("/api/v1/workflows/onboarding/publish")
    assert response.status_code == 422 and response.json()["errors"][0]["code"] == "timezone_required"


def test_stop_one_subscriber_and_cancel_execution(secret_client, project):
    subscribers(project, 2)
    save(
        secret_client,
        graph=chain(node("start", "start"), node("p", "wait", mode="duration", days=1), node("end", "end")),
    )
    secret_client.post("/api/v1/workflows/onboarding/publish")
    execution_id = secret_client.post(
        "/api/v1/workflows/onboarding/executions", {"everyone": True}, format="json"
    ).json()["id"]
    from apps.workflows.services import execution_expand_chunk

    execution_expand_chunk(project=project, execution_id=execution_id)
    run_until_idle()
    stopped = secret_client.post(f"/api/v1/executions/{execution_id}/subscribers/u0/stop")
    assert stopped.status_code == 200 and stopped.json()["state"] == "stopped"
    assert secret_client.post(f"/api/v1/executions/{execution_id}/subscribers/u0/stop").status_code == 409
    summary = secret_client.get(f"/api/v1/executions/{execution_id}").json()
    assert summary["nodes"]["p"]["waiting"] == 1 and summary["nodes"]["p"]["cancelled"] == 1
    cancelled = secret_client.post(f"/api/v1/executions/{execution_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    assert secret_client.post(f"/api/v1/executions/{execution_id}/cancel").status_code == 409


def test_workflow_answers_match_the_schemas_the_openapi_document_gives_them(secret_client):
    # A node as the builder adds it: fine in a draft, refused by publishing.
    unfinished = chain(node("start", "start"), node("mark", "add_tag", tags=[]), node("end", "end"))
    created = save(secret_client, graph=unfinished)
    assert created.status_code == 201
    assert schema_errors("WorkflowDetailOut", created.json()) == []
    assert schema_errors("WorkflowGraph", created.json()["draft_graph"]) != []
    saved = save(secret_client, graph=tag_branch_graph("seen"))
    assert saved.status_code == 200 and schema_errors("WorkflowDetailOut", saved.json()) == []
    assert schema_errors("WorkflowListOut", secret_client.get("/api/v1/workflows").json()) == []
    assert schema_errors("WorkflowDetailOut", secret_client.get("/api/v1/workflows/onboarding").json()) == []
    published = secret_client.post("/api/v1/workflows/onboarding/publish")
    assert published.status_code == 201 and schema_errors("WorkflowVersionOut", published.json()) == []
    version = secret_client.get("/api/v1/workflows/onboarding/versions/1").json()
    assert schema_errors("WorkflowVersionOut", version) == []
    assert schema_errors("WorkflowGraph", version["graph"]) == []
