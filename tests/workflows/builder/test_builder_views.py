"""The builder's edit endpoint: each edit one request; refusals are specific and change nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from apps.workflows.models import DraftChange, Workflow
from apps.workflows.services import workflow_save_draft
from tests.factories import MembershipFactory, ProjectFactory
from tests.workflows.builder.conftest import Editor

pytestmark = pytest.mark.django_db


def _unchanged(editor: Editor, call: Any, status: int, code: str) -> None:
    before_graph, before_revision = editor.graph, editor.revision
    response = call()
    assert response.status_code == status, response.content.decode()[:500]
    assert response["X-Tidings-Code"] == code
    assert editor.graph == before_graph and editor.revision == before_revision


def test_each_edit_saves_the_draft_moves_the_revision_and_answers_the_canvas(editor: Editor) -> None:
    response = editor.post("add", type="email", after_node="start", after_handle="next")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="builder-workspace"' in page and 'data-node="email-1"' in page and 'data-focus="email-1"' in page
    assert editor.revision == 1
    assert [e["to"] for e in editor.graph["edges"]] == ["email-1"]
    assert editor.post("rename", node="email-1", label="Welcome").status_code == 200
    assert editor.post("duplicate", nodes="email-1").status_code == 200
    assert editor.post("connect", node="email-1", handle="next", target="email-2").status_code == 200
    assert editor.post("disconnect", node="email-1", handle="next", target="email-2").status_code == 200
    assert editor.post("delete", nodes="email-2").status_code == 200
    assert editor.revision == 6
    assert [n["id"] for n in editor.graph["nodes"]] == ["start", "email-1"]


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"op": "add", "type": "teleport"}, "unknown_node_type"),
        ({"op": "add", "type": "email", "after_node": "ghost", "after_handle": "next"}, "unknown_node"),
        ({"op": "add", "type": "email", "edge_from": "start", "edge_handle": "next", "edge_to": "x"}, "unknown_edge"),
        ({"op": "delete", "nodes": "ghost"}, "unknown_node"),
        ({"op": "delete"}, "node_required"),
        ({"op": "delete", "nodes": ",".join(f"n{i}" for i in range(501))}, "too_many_nodes"),
        ({"op": "connect", "node": "start", "handle": "yes", "target": "start"}, "unknown_handle"),
        ({"op": "rename", "node": "start", "label": "x" * 201}, "invalid_label"),
        ({"op": "configure", "node": "ghost"}, "unknown_node"),
        ({"op": "paste", "payload": "hello"}, "clipboard_not_nodes"),
        ({"op": "paste", "payload": "x" * (600 * 1024)}, "clipboard_too_large"),
        (
            {"op": "paste", "payload": json.dumps({"format": "tidings/journey-nodes", "version": 1, "nodes": []})},
            "clipboard_not_nodes",
        ),
        ({"op": "levitate"}, "unknown_edit"),
        ({"op": "undo"}, "nothing_to_undo"),
        ({"op": "redo"}, "nothing_to_redo"),
    ],
)
def test_bad_edits_are_refused_with_a_specific_code_and_change_nothing(editor: Editor, fields: dict, code: str) -> None:
    op = fields.pop("op")
    _unchanged(editor, lambda: editor.post(op, **fields), 422, code)


def test_an_edit_without_a_revision_or_too_large_is_refused(editor: Editor, client: Any) -> None:
    _unchanged(editor, lambda: client.post(editor.url, {"op": "add", "type": "email"}), 422, "revision_required")
    _unchanged(editor, lambda: editor.post("add", type="email", revision="seven"), 422, "revision_required")
    huge = "x" * (1024 * 1024 + 10)
    _unchanged(editor, lambda: editor.post("add", type="email", padding=huge), 413, "edit_too_large")


def test_a_form_value_that_cannot_be_read_is_an_inline_error_and_saves_nothing(editor: Editor) -> None:
    editor.post("add", type="wait", after_node="start", after_handle="next")
    before = editor.graph
    response = editor.post("configure", node="wait-1", **{"cfg.mode": "duration", "cfg.hours": "soon"})
    assert response.status_code == 422
    assert response["HX-Retarget"] == "#builder-inspector"
    assert "Hours: enter a whole number." in response.content.decode()
    assert editor.graph == before


def test_a_saved_config_that_breaks_the_schema_shows_as_the_nodes_error(editor: Editor, client: Any) -> None:
    editor.post("add", type="email", after_node="start", after_handle="next")
    response = editor.post("configure", node="email-1", **{"cfg.template": ""})
    assert response.status_code == 200
    page = response.content.decode()
    assert 'data-node="email-1" data-type="email"' in page
    assert 'class="node error" data-node="email-1"' in page
    assert "&#x27;template&#x27; is a required property" in page  # in the issues list, focusable


def test_a_stale_editor_is_refused_naming_who_changed_the_draft(editor: Editor, project: Any, client: Any) -> None:
    stale = editor.revision
    other = MembershipFactory(organization=project.organization, role="editor", user__username="grace").user
    second = Editor(client.__class__(), editor.workflow)
    second.client.force_login(other)
    assert second.post("add", type="email").status_code == 200
    before = editor.graph
    response = editor.post("add", type="push", revision=stale)
    assert response.status_code == 409
    text = response.content.decode()
    assert "changed by grace at" in text and "reload" in text
    assert editor.graph == before


def test_another_projects_journey_is_404_and_its_node_ids_mean_nothing_here(editor: Editor, project: Any) -> None:
    theirs = ProjectFactory(organization=project.organization)
    graph = {"nodes": [{"id": "start", "type": "start"}, {"id": "secret", "type": "end"}], "edges": []}
    workflow_save_draft(project=theirs, key="theirs", graph=graph)
    assert (
        editor.client.post(
            "/console/workflows/theirs/builder/edit", {"op": "delete", "nodes": "secret", "revision": 0}
        ).status_code
        == 404
    )
    assert editor.client.get("/console/workflows/theirs/builder/").status_code == 404
    _unchanged(editor, lambda: editor.post("delete", nodes="secret"), 422, "unknown_node")
    assert Workflow.objects.get(project=theirs, key="theirs").draft_graph == graph


def test_undo_and_redo_walk_more_than_a_hundred_steps_kept_in_the_database(editor: Editor) -> None:
    for i in range(110):
        assert editor.post("rename", node="start", label=f"step {i}").status_code == 200
    for _ in range(100):
        assert editor.post("undo").status_code == 200
    start = next(n for n in editor.graph["nodes"] if n["id"] == "start")
    assert start["label"] == "step 9"
    assert editor.post("redo").status_code == 200
    assert next(n for n in editor.graph["nodes"] if n["id"] == "start")["label"] == "step 10"
    # A new edit drops what could still be redone.
    editor.post("rename", node="start", label="fresh")
    assert not DraftChange.objects.filter(workflow=editor.workflow, undone=True).exists()
    assert editor.post("redo").status_code == 422


def test_a_draft_saved_through_the_api_moves_the_revision_and_can_be_undone(editor: Editor, project: Any) -> None:
    editor.post("add", type="email", after_node="start", after_handle="next")
    revision = editor.revision
    workflow_save_draft(
        project=project, key="welcome", graph={"nodes": [{"id": "start", "type": "start"}], "edges": []}
    )
    assert editor.revision == revision + 1
    editor.post("undo")
    assert [n["id"] for n in editor.graph["nodes"]] == ["start", "email-1"]


def test_viewers_see_no_edit_controls_and_are_refused_on_the_server(client: Any, viewer: Any, draft: Workflow) -> None:
    client.force_login(viewer)
    page = client.get("/console/workflows/welcome/builder/?node=start").content.decode()
    assert 'data-testid="read-only"' in page
    for control in ("palette-item", "port-plus", "edge-plus", 'data-testid="apply"', 'data-action="undo"'):
        assert control not in page
    before = Workflow.objects.get(pk=draft.pk).draft_revision
    for fields in ({"op": "add", "type": "email"}, {"op": "undo"}, {"op": "delete", "nodes": "start"}):
        assert client.post("/console/workflows/welcome/builder/edit", {**fields, "revision": before}).status_code == 403
    assert client.post("/console/workflows/welcome/builder/form", {"node": "start"}).status_code == 403
    assert client.post("/console/workflows/welcome/builder/test-send", {"node": "start"}).status_code == 403
    assert Workflow.objects.get(pk=draft.pk).draft_revision == before


def test_a_wait_until_a_local_time_is_refused_without_a_project_timezone(editor: Editor, project: Any) -> None:
    project.timezone = ""
    project.save()
    editor.post("add", type="wait", after_node="start", after_handle="next")
    before = editor.graph
    response = editor.post("configure", node="wait-1", **{"cfg.mode": "time_of_day", "cfg.time": "09:00"})
    assert response.status_code == 422
    assert response["X-Tidings-Code"] == "timezone_required"
    assert 'href="/console/project/"' in response.content.decode()
    assert editor.graph == before
    assert editor.post("configure", node="wait-1", **{"cfg.mode": "duration", "cfg.hours": "2"}).status_code == 200


def test_the_form_endpoint_adds_and_removes_rows_and_orders_cases_without_saving(editor: Editor, client: Any) -> None:
    editor.post("add", type="multi_condition", after_node="start", after_handle="next")
    revision = editor.revision
    url = "/console/workflows/welcome/builder/form"
    fields = {
        "node": "multi-condition-1",
        "cfg.cases.0.handle": "vip",
        "cfg.cases.0.predicates.0.op": "has_tag",
        "cfg.cases.0.predicates.0.tag": "vip",
    }
    added = client.post(url, {**fields, "_form": "add_case"}).content.decode()
    assert 'value="case-2"' in added
    two = {
        **fields,
        "cfg.cases.1.handle": "case-2",
        "cfg.cases.1.predicates.0.op": "has_tag",
        "cfg.cases.1.predicates.0.tag": "x",
    }
    moved = client.post(url, {**two, "_form": "up:1"}).content.decode()
    assert moved.index('value="case-2"') < moved.index('value="vip"')
    more = client.post(url, {**fields, "_form": "add_row:cases.0"}).content.decode()
    assert 'name="cfg.cases.0.predicates.1.op"' in more
    fewer = client.post(url, {**fields, "_form": "remove_row:cases.0|0"}).content.decode()
    assert 'name="cfg.cases.0.predicates.0.op"' not in fewer
    assert editor.revision == revision
