"""The journeys console: list, version history with publish, drawings, execution and journey pages."""

from __future__ import annotations

import re

import pytest

from apps.workflows.models import Journey, WorkflowVersion
from apps.workflows.services import workflow_save_draft
from tests.factories import MembershipFactory
from tests.workflows.helpers import (
    chain,
    node,
    publish,
    run_until_idle,
    start_and_expand,
    subscribers,
    tag_branch_graph,
)


@pytest.fixture
def member(project):
    return MembershipFactory(organization=project.organization, role="editor").user


@pytest.mark.django_db
def test_pages_show_counts_subscribers_at_a_node_and_a_journey(client, member, project):
    subscribers(project, 2)
    graph = chain(node("start", "start"), node("pause", "wait", mode="time_of_day", time="09:00"), node("end", "end"))
    version = publish(project, "daily", graph)
    execution = start_and_expand(project, version)
    run_until_idle()
    client.force_login(member)
    assert b"daily" in client.get("/console/workflows/").content
    page = client.get(f"/console/workflows/executions/{execution.pk}/?node=pause").content.decode()
    assert 'data-node="pause"' in page and "0 active · 2 waiting · 0 done" in page
    assert page.count("/console/workflows/journeys/") == 2
    journey = Journey.objects.filter(execution=execution).first()
    journey_page = client.get(f"/console/workflows/journeys/{journey.pk}/").content.decode()
    assert "pause" in journey_page and "waiting" in journey_page
    preview = client.get(
        "/console/workflows/daily/versions/1/", {"node": "pause", "timezone": "Europe/Lisbon", "at": "2026-03-29T00:00"}
    ).content.decode()
    assert "2026-03-29 08:00 UTC" in preview


@pytest.mark.django_db
def test_another_projects_pages_are_404(client, member, other_project):
    version = publish(other_project, "theirs", chain(node("start", "start"), node("end", "end")))
    client.force_login(member)
    assert client.get("/console/workflows/theirs/").status_code == 404
    assert client.get(f"/console/workflows/theirs/versions/{version.number}/").status_code == 404


@pytest.mark.django_db
def test_viewer_may_not_publish(client, project):
    viewer = MembershipFactory(organization=project.organization, role="viewer").user
    workflow_save_draft(project=project, key="w", graph=chain(node("start", "start"), node("end", "end")))
    client.force_login(viewer)
    assert client.post("/console/workflows/w/publish").status_code == 403
    assert not WorkflowVersion.objects.exists()


def test_publish_from_the_console_and_see_the_drawing(page, live_server, project):
    admin = MembershipFactory(organization=project.organization, role="admin").user
    workflow_save_draft(project=project, key="welcome", name="Welcome", graph=tag_branch_graph("seen"))
    broken = tag_branch_graph("nope")
    workflow_save_draft(project=project, key="broken", name="Broken", graph=broken)
    page.goto("/console/login/")
    page.fill("#id_login", admin.email)
    page.fill("#id_password", "correct-horse-battery")
    page.click("button[type=submit]")
    page.goto("/console/workflows/")
    page.click("text=Broken")
    assert "unknown_tag" in page.inner_text("[data-testid=draft-issues]")
    page.click("text=Publish a new version")
    assert "not valid" in page.inner_text(".messages")
    page.goto("/console/workflows/")
    page.click("text=Welcome")
    assert page.inner_text("[data-testid=diff-summary]") == "6 nodes added, 6 edges added"
    page.click("text=Publish a new version")
    assert "Published version 1" in page.inner_text(".messages")
    assert page.inner_text("[data-testid=diff-empty]") == "No changes."
    page.click("[data-testid=versions-table] >> text=v1")
    assert re.search(r"/console/workflows/welcome/versions/1/$", page.url)
    assert page.locator("svg.workflow-graph g[data-node]").count() == 6
    assert page.locator("svg.workflow-graph line").count() == 6
