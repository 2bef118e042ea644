"""Starting runs from the console: audiences, the confirm count, roles, tenancy, double submits."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest
from django.db import connection

from apps.subscribers.services.tags import tags_change_bulk
from apps.workflows.models import Execution
from apps.workflows.services import execution_start_once
from tests.factories import MembershipFactory
from tests.workflows.builder.helpers import segment
from tests.workflows.helpers import chain, node, publish, subscribers

pytestmark = pytest.mark.django_db

GRAPH = chain(node("start", "start"), node("mark", "add_tag", tags=["entered"]), node("end", "end"))


@pytest.fixture
def admin(project: Any) -> Any:
    return MembershipFactory(organization=project.organization, role="admin").user


@pytest.fixture
def journey(project: Any) -> Any:
    return publish(project, "welcome", GRAPH).workflow


def _tag(project: Any, people: list[Any], name: str) -> None:
    tags_change_bulk(project=project, changes=[(p.pk, [name], []) for p in people], source="console")


def _confirm(client: Any, key: str, **fields: Any) -> Any:
    return client.post(f"/console/workflows/{key}/runs/new", fields)


def _hidden_fields(page: str) -> dict[str, str]:
    form = page[page.index('action="/console/workflows/') :]
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))


def test_admin_sees_the_segment_count_then_starts_one_execution(client, admin, project, journey):
    people = subscribers(project, 5)
    _tag(project, people[:3], "vip")
    vip = segment(project, "VIPs", ["vip"])
    client.force_login(admin)
    assert 'data-testid="start-run"' in client.get("/console/workflows/welcome/").content.decode()

    confirm = _confirm(client, "welcome", kind="segment", segment=vip.pk)
    page = confirm.content.decode()
    assert confirm.status_code == 200
    assert "3 subscribers" in page and "VIPs" in page
    assert not Execution.objects.exists(), "the confirm step starts nothing"

    started = client.post("/console/workflows/welcome/runs/start", _hidden_fields(page))
    execution = Execution.objects.get()
    assert started.status_code == 302 and started.url == f"/console/workflows/executions/{execution.pk}/"
    assert execution.audience == {"kind": "segment", "segment_id": vip.pk}
    assert execution.workflow == journey and execution.started_by == f"console {admin.username}"


def test_pasted_ids_are_split_on_commas_and_lines_and_unknown_ones_reported(client, admin, project, journey):
    subscribers(project, 3)
    client.force_login(admin)
    page = _confirm(
        client, "welcome", kind="external_ids", external_ids="u0, u1\r\nnobody\n\nu2,ghost"
    ).content.decode()
    assert "3 subscribers" in page
    unknown = page[page.index('data-testid="unknown-ids"') :]
    assert "2 ids matched no subscriber" in unknown and "nobody, ghost" in unknown

    client.post("/console/workflows/welcome/runs/start", _hidden_fields(page))
    execution = Execution.objects.get()
    assert execution.audience["external_ids"] == ["u0", "u1", "nobody", "u2", "ghost"]
    assert execution.unknown_external_ids == ["nobody", "ghost"]


def test_tag_and_everyone_are_counted_before_confirming(client, admin, project, journey, other_project):
    people = subscribers(project, 4)
    subscribers(other_project, 7, prefix="x")
    _tag(project, people[:1], "beta")
    client.force_login(admin)
    assert "1 subscriber<" in _confirm(client, "welcome", kind="tag", tag="beta").content.decode()
    assert "4 subscribers" in _confirm(client, "welcome", kind="everyone").content.decode()


def test_double_submit_of_one_confirm_starts_one_execution(client, admin, project, journey):
    subscribers(project, 2)
    client.force_login(admin)
    fields = _hidden_fields(_confirm(client, "welcome", kind="everyone").content.decode())
    first = client.post("/console/workflows/welcome/runs/start", fields)
    second = client.post("/console/workflows/welcome/runs/start", fields)
    execution = Execution.objects.get()
    assert first.url == second.url == f"/console/workflows/executions/{execution.pk}/"
    # A fresh confirm hands out a fresh token: a deliberate second run is still possible.
    again = _hidden_fields(_confirm(client, "welcome", kind="everyone").content.decode())
    assert again["token"] != fields["token"]
    client.post("/console/workflows/welcome/runs/start", again)
    assert Execution.objects.count() == 2


def test_the_run_starts_the_version_the_confirm_step_showed(client, admin, project, journey):
    subscribers(project, 1)
    client.force_login(admin)
    fields = _hidden_fields(_confirm(client, "welcome", kind="everyone").content.decode())
    publish(project, "welcome", chain(node("start", "start"), node("mark", "add_tag", tags=["v2"]), node("end", "end")))
    client.post("/console/workflows/welcome/runs/start", fields)
    assert Execution.objects.get().version.number == 1


def test_a_start_without_its_token_starts_nothing(client, admin, project, journey):
    client.force_login(admin)
    response = client.post("/console/workflows/welcome/runs/start", {"kind": "everyone"})
    assert response.status_code == 302 and response.url == "/console/workflows/welcome/runs/new"
    assert not Execution.objects.exists()


@pytest.mark.parametrize("role", ["editor", "viewer"])
def test_only_owners_and_admins_may_start_runs(client, project, journey, role):
    subscribers(project, 1)
    user = MembershipFactory(organization=project.organization, role=role).user
    client.force_login(user)
    assert 'data-testid="start-run"' not in client.get("/console/workflows/welcome/").content.decode()
    assert client.get("/console/workflows/welcome/runs/new").status_code == 403
    assert _confirm(client, "welcome", kind="everyone").status_code == 403
    start = client.post("/console/workflows/welcome/runs/start", {"kind": "everyone", "token": "t" * 32})
    assert start.status_code == 403
    assert not Execution.objects.exists()


def test_another_projects_segment_is_a_404_and_starts_nothing(client, admin, project, journey, other_project):
    theirs = segment(other_project, "Theirs", ["vip"])
    client.force_login(admin)
    assert _confirm(client, "welcome", kind="segment", segment=theirs.pk).status_code == 404
    foreign = {"kind": "segment", "segment": theirs.pk, "version": 1, "token": "t" * 32}
    start = client.post("/console/workflows/welcome/runs/start", foreign)
    assert start.status_code == 404
    assert not Execution.objects.exists()


def test_another_projects_journey_is_a_404(client, admin, other_project):
    publish(other_project, "theirs", GRAPH)
    client.force_login(admin)
    assert client.get("/console/workflows/theirs/runs/new").status_code == 404
    assert (
        client.post("/console/workflows/theirs/runs/start", {"kind": "everyone", "token": "t" * 32}).status_code == 404
    )
    assert not Execution.objects.exists()


def test_an_unpublished_journey_cannot_be_started(client, admin, project):
    from apps.workflows.services import workflow_save_draft

    workflow_save_draft(project=project, key="draft-only", graph=GRAPH)
    client.force_login(admin)
    response = client.get("/console/workflows/draft-only/runs/new")
    assert response.status_code == 302 and response.url == "/console/workflows/draft-only/"
    assert not Execution.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_simultaneous_starts_with_one_token_make_one_execution(project):
    from apps.workflows.models import Workflow

    publish(project, "race", GRAPH)
    subscribers(project, 1)
    barrier = threading.Barrier(2)
    results: list[Any] = []

    def start() -> None:
        try:
            workflow = Workflow.objects.get(project=project, key="race")
            barrier.wait()
            results.append(
                execution_start_once(project=project, workflow=workflow, audience={"everyone": True}, token="same")
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert Execution.objects.count() == 1
    assert sorted(started for _e, started in results) == [False, True]
    assert {e.pk for e, _s in results} == {Execution.objects.get().pk}
