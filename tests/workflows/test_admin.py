"""Django admin for journeys: the list, read-only versions, and actions that go through the services."""

from __future__ import annotations

from typing import Any

import pytest

from apps.subscribers.models import Tag
from apps.workflows.models import Workflow, WorkflowVersion
from apps.workflows.services import execution_start, workflow_save_draft
from tests.factories import UserFactory
from tests.workflows.helpers import chain, node, publish

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/workflows/workflow/"
GRAPH = chain(node("start", "start"), node("mark", "add_tag", tags=["seen"]), node("end", "end"))


@pytest.fixture
def superuser_client(client: Any) -> Any:
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def welcome(project: Any) -> Workflow:
    Tag.objects.create(project=project, name="seen")
    return publish(project, "welcome", GRAPH).workflow


def act(client: Any, action: str, *workflows: Workflow) -> str:
    response = client.post(CHANGELIST, {"action": action, "_selected_action": [w.pk for w in workflows]}, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def test_the_list_shows_project_status_versions_and_a_builder_link(
    superuser_client: Any, project: Any, welcome: Workflow
) -> None:
    workflow_save_draft(project=project, key="draft-only", graph=GRAPH)
    page = superuser_client.get(CHANGELIST).content.decode()
    assert "welcome" in page and "draft-only" in page and str(project) in page
    assert "published v1" in page and "draft only" in page
    assert 'href="/console/workflows/welcome/builder/"' in page and "Open in builder" in page
    detail = superuser_client.get(f"{CHANGELIST}{welcome.pk}/change/").content.decode()
    # Versions are shown, never editable, and nothing on the page can be saved.
    assert 'name="_save"' not in detail and 'name="versions-0-number"' not in detail
    assert "Workflow versions" in detail and "Open in builder" in detail


def test_publish_action_publishes_a_changed_draft_and_reports_an_unchanged_one(
    superuser_client: Any, project: Any, welcome: Workflow
) -> None:
    page = act(superuser_client, "publish_draft", welcome)
    assert "The draft is the same as version 1" in page
    workflow_save_draft(project=project, key="welcome", graph=chain(node("start", "start"), node("end", "end")))
    page = act(superuser_client, "publish_draft", welcome)
    assert "Workflow welcome: published version 2." in page
    version = WorkflowVersion.objects.get(workflow=welcome, number=2)
    assert version.published_via == "admin" and version.published_by is not None
    assert "published v2" in superuser_client.get(CHANGELIST).content.decode()


def test_duplicate_action_copies_the_draft_into_a_new_workflow(
    superuser_client: Any, project: Any, welcome: Workflow
) -> None:
    page = act(superuser_client, "duplicate", welcome)
    assert "Workflow welcome: copied as welcome-copy." in page
    copy = Workflow.objects.get(project=project, key="welcome-copy")
    assert copy.draft_graph == GRAPH and copy.name == "welcome (copy)" and not copy.versions.exists()
    act(superuser_client, "duplicate", welcome)
    assert Workflow.objects.filter(project=project, key="welcome-copy-2").exists()


def test_archive_action_stops_new_versions_and_executions(
    superuser_client: Any, project: Any, welcome: Workflow
) -> None:
    page = act(superuser_client, "archive", welcome)
    assert "Workflow welcome: archived." in page
    welcome.refresh_from_db()
    assert welcome.archived_at is not None
    assert "archived" in superuser_client.get(CHANGELIST).content.decode()
    workflow_save_draft(project=project, key="welcome", graph=chain(node("start", "start"), node("end", "end")))
    assert "is archived; it takes no new versions" in act(superuser_client, "publish_draft", welcome)
    from apps.core.errors import Conflict

    with pytest.raises(Conflict) as refused:
        execution_start(project=project, workflow=welcome, audience={"everyone": True})
    assert refused.value.code == "workflow_archived"
