"""The ``read`` scope reads everything a GET answers; no GET needs a write scope."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from apps.campaigns.services import campaign_create
from apps.governance.api.base import ProjectAPIView
from apps.governance.permissions import required_scope
from apps.governance.scopes import READ
from tests.campaigns.conftest import make_template
from tests.conftest import _client_for
from tests.workflows.helpers import chain, node, publish

pytestmark = pytest.mark.django_db


def api_views(patterns: list[Any] | None = None, prefix: str = "") -> list[tuple[str, type]]:
    found: list[tuple[str, type]] = []
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            found += api_views(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            view = getattr(entry.callback, "view_class", None)
            if view is not None and issubclass(view, ProjectAPIView):
                found.append((prefix + str(entry.pattern), view))
    return found


def test_every_get_of_the_api_needs_only_read() -> None:
    gets = [(route, view) for route, view in api_views() if hasattr(view, "get")]
    assert len(gets) > 15
    wrong = {
        route: required_scope(view, "GET") for route, view in gets if required_scope(view, "GET") not in (READ, "*")
    }
    assert wrong == {}


def test_a_read_only_key_reads_campaigns_workflow_versions_and_wait_previews(project: Any, make_key: Any) -> None:
    client = _client_for(make_key(project, "restricted", ceiling="secret", scopes=["read"])[1])
    template = make_template(project)
    campaign = campaign_create(project=project, name="Autumn", template=template)
    graph = chain(node("start", "start"), node("later", "wait", mode="duration", hours=1), node("end", "end"))
    publish(project, "onboarding", graph)
    for path in (
        "/api/v1/campaigns",
        f"/api/v1/campaigns/{campaign.pk}",
        "/api/v1/campaigns/settings",
        "/api/v1/workflows/onboarding/versions/1",
        "/api/v1/workflows/onboarding/versions/1/wait-preview?node=later&at=2026-01-01T00:00:00Z",
    ):
        response = client.get(path)
        assert response.status_code == 200, (path, response.content)
    # Reading is all it may do.
    refused = client.patch("/api/v1/campaigns/settings", {}, format="json")
    assert refused.status_code == 403 and refused.json()["missing_scope"] == "campaigns:write"


def test_a_read_only_key_may_open_a_campaign_stream(project: Any, make_key: Any) -> None:
    client = _client_for(make_key(project, "restricted", ceiling="secret", scopes=["read"])[1])
    response = client.get("/api/v1/campaigns/999999/stream")
    assert response.status_code == 404 and response.json()["code"] == "campaign_not_found"
    writer = _client_for(make_key(project, "restricted", ceiling="secret", scopes=["campaigns:write"])[1])
    assert writer.get("/api/v1/campaigns/999999/stream").status_code == 403
