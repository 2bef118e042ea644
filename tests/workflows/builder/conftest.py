"""Builder fixtures: staff of each role, a draft, and a client that posts edits."""

from __future__ import annotations

from typing import Any

import pytest

from apps.workflows.models import Workflow
from apps.workflows.services import workflow_save_draft
from tests.factories import MembershipFactory


@pytest.fixture
def member(project: Any) -> Any:
    return MembershipFactory(organization=project.organization, role="editor").user


@pytest.fixture
def viewer(project: Any) -> Any:
    return MembershipFactory(organization=project.organization, role="viewer").user


@pytest.fixture
def draft(project: Any) -> Workflow:
    graph = {"nodes": [{"id": "start", "type": "start", "config": {}}], "edges": []}
    workflow, _ = workflow_save_draft(project=project, key="welcome", name="Welcome", graph=graph)
    return workflow


class Editor:
    """Posts builder edits the way the page does, always against the current revision."""

    def __init__(self, client: Any, workflow: Workflow) -> None:
        self.client = client
        self.workflow = workflow
        self.url = f"/console/workflows/{workflow.key}/builder/edit"

    @property
    def revision(self) -> int:
        self.workflow.refresh_from_db()
        return self.workflow.draft_revision

    def post(self, op: str, revision: int | None = None, **fields: Any) -> Any:
        data = {"op": op, "revision": self.revision if revision is None else revision, **fields}
        return self.client.post(self.url, data)

    @property
    def graph(self) -> dict[str, Any]:
        self.workflow.refresh_from_db()
        return self.workflow.draft_graph


@pytest.fixture
def editor(client: Any, member: Any, draft: Workflow) -> Editor:
    client.force_login(member)
    return Editor(client, draft)
