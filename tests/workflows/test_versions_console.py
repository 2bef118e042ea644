"""Publishing with the diff on the page, comparing versions, restoring one, and who may do what."""

from __future__ import annotations

from typing import Any

import pytest

from apps.workflows.models import DraftChange, Execution, Workflow, WorkflowVersion
from apps.workflows.services import workflow_publish, workflow_save_draft
from tests.factories import MembershipFactory
from tests.workflows.helpers import chain, node, publish, start_and_expand, subscribers

pytestmark = pytest.mark.django_db

V1 = chain(node("start", "start"), node("mark", "add_tag", tags=["seen"]), node("end", "end"))
V2 = chain(node("start", "start"), node("mark", "add_tag", tags=["seen", "again"]), node("end", "end"))


def staff(project: Any, role: str) -> Any:
    return MembershipFactory(organization=project.organization, role=role).user


@pytest.fixture
def published(project: Any) -> Workflow:
    from apps.subscribers.models import Tag

    Tag.objects.create(project=project, name="seen")
    version = publish(project, "welcome", V1)
    return version.workflow


def test_the_journey_page_shows_what_publishing_would_change(client: Any, project: Any, published: Workflow) -> None:
    workflow_save_draft(project=project, key="welcome", graph=V2)
    client.force_login(staff(project, "admin"))
    page = client.get("/console/workflows/welcome/").content.decode()
    assert "Changes since version 1" in page
    assert 'data-diff="node-changed" data-node="mark"' in page
    assert 'data-field="config.tags"' in page
    assert "[&quot;seen&quot;]" in page and "[&quot;seen&quot;, &quot;again&quot;]" in page


def test_publishing_an_unchanged_draft_is_refused_with_a_clear_message(
    client: Any, project: Any, published: Workflow
) -> None:
    client.force_login(staff(project, "admin"))
    page = client.get("/console/workflows/welcome/").content.decode()
    assert 'data-testid="diff-empty"' in page
    response = client.post("/console/workflows/welcome/publish", follow=True)
    assert "The draft is the same as version 1; change it before publishing." in response.content.decode()
    assert WorkflowVersion.objects.filter(workflow=published).count() == 1
    workflow_save_draft(project=project, key="welcome", graph=V2)
    response = client.post("/console/workflows/welcome/publish", follow=True)
    assert "Published version 2." in response.content.decode()


def test_the_api_answers_draft_unchanged_as_problem_json(secret_client: Any, published: Workflow) -> None:
    response = secret_client.post("/api/v1/workflows/welcome/publish")
    assert response.status_code == 409
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "draft_unchanged" and response.json()["version"] == 1


def test_any_two_versions_compare_and_the_draft_too(client: Any, project: Any, published: Workflow) -> None:
    workflow_save_draft(project=project, key="welcome", graph=V2)
    workflow_publish(project=project, workflow=published)
    client.force_login(staff(project, "viewer"))
    page = client.get("/console/workflows/welcome/versions/compare", {"from": "1", "to": "2"}).content.decode()
    assert "From version 1 to version 2" in page and 'data-field="config.tags"' in page
    back = client.get("/console/workflows/welcome/versions/compare", {"from": "2", "to": "draft"}).content.decode()
    assert 'data-testid="diff-empty"' in back
    default = client.get("/console/workflows/welcome/versions/compare").content.decode()
    assert "From version 1 to version 2" in default
    assert client.get("/console/workflows/welcome/versions/compare", {"from": "9"}).status_code == 404


def test_restoring_a_version_is_a_new_draft_revision_that_undo_takes_back(
    client: Any, project: Any, published: Workflow
) -> None:
    workflow_save_draft(project=project, key="welcome", graph=V2)
    workflow_publish(project=project, workflow=published)
    published.refresh_from_db()
    revision = published.draft_revision
    client.force_login(staff(project, "owner"))
    response = client.post("/console/workflows/welcome/versions/1/restore", follow=True)
    assert "Version 1 is the draft again" in response.content.decode()
    published.refresh_from_db()
    assert published.draft_graph == V1 and published.draft_revision == revision + 1
    assert DraftChange.objects.filter(workflow=published).order_by("-seq").first().label == "Restore version 1"
    undo = client.post("/console/workflows/welcome/builder/edit", {"op": "undo", "revision": published.draft_revision})
    assert undo.status_code == 200
    published.refresh_from_db()
    assert published.draft_graph == V2
    stale = client.post(
        "/console/workflows/welcome/versions/1/restore", {"revision": published.draft_revision - 1}, follow=True
    )
    assert "This draft was changed by" in stale.content.decode()
    published.refresh_from_db()
    assert published.draft_graph == V2


def test_another_projects_version_cannot_be_restored_or_compared(client: Any, project: Any, other_project: Any) -> None:
    publish(other_project, "theirs", chain(node("start", "start"), node("end", "end")))
    client.force_login(staff(project, "owner"))
    assert client.post("/console/workflows/theirs/versions/1/restore").status_code == 404
    assert client.get("/console/workflows/theirs/versions/compare").status_code == 404


@pytest.mark.parametrize(("role", "allowed"), [("owner", True), ("admin", True), ("editor", False), ("viewer", False)])
def test_only_admins_and_owners_publish_restore_and_cancel(
    client: Any, project: Any, published: Workflow, role: str, allowed: bool
) -> None:
    subscribers(project, 1)
    execution = start_and_expand(project, published.versions.get())
    workflow_save_draft(project=project, key="welcome", graph=V2)
    client.force_login(staff(project, role))
    page = client.get("/console/workflows/welcome/").content.decode()
    assert ('data-testid="publish"' in page) is allowed
    assert ('data-testid="restore-1"' in page) is allowed
    execution_page = client.get(f"/console/workflows/executions/{execution.pk}/").content.decode()
    assert ("Cancel execution" in execution_page) is allowed

    expected = 302 if allowed else 403
    assert client.post("/console/workflows/welcome/publish").status_code == expected
    assert WorkflowVersion.objects.filter(workflow=published).count() == (2 if allowed else 1)
    assert client.post("/console/workflows/welcome/versions/1/restore").status_code == expected
    published.refresh_from_db()
    assert published.draft_graph == (V1 if allowed else V2)
    assert client.post(f"/console/workflows/executions/{execution.pk}/cancel").status_code == expected
    execution.refresh_from_db()
    assert (execution.state == Execution.State.CANCELLED) is allowed


def test_members_still_edit_drafts(client: Any, project: Any, published: Workflow) -> None:
    client.force_login(staff(project, "editor"))
    page = client.get("/console/workflows/welcome/").content.decode()
    assert "An admin or owner of the project publishes the draft." in page
    published.refresh_from_db()
    response = client.post(
        "/console/workflows/welcome/builder/edit",
        {"op": "add", "type": "end", "revision": published.draft_revision},
    )
    assert response.status_code == 200, response.content
