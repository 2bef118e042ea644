"""The campaigns API: CRUD, controls, figures, stream, settings; errors as problem+json."""

from __future__ import annotations

from typing import Any

import pytest

from apps.campaigns.models import Campaign, CampaignSettings
from tests.campaigns.conftest import add_subscribers, make_connector

pytestmark = pytest.mark.django_db(transaction=True)


def test_create_read_update_delete(secret_client: Any, project: Any, template: Any, connector: Any) -> None:
    created = secret_client.post(
        "/api/v1/campaigns",
        {"name": "Autumn", "template": "promo", "audience": {"kind": "tag", "tag": "vip"}},
        format="json",
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["state"] == "draft" and body["audience"]["tag"] == "vip"
    assert set(body["counters"]) >= {
        "sent",
        "delivered",
        "failed",
        "retried",
        "dead",
        "bounced",
        "complained",
        "suppressed",
        "current_rate",
        "target_rate",
        "eta_seconds",
    }
    cid = body["id"]
    patched = secret_client.patch(f"/api/v1/campaigns/{cid}", {"name": "Autumn sale"}, format="json")
    assert patched.status_code == 200 and patched.json()["name"] == "Autumn sale"
    listed = secret_client.get("/api/v1/campaigns?q=sale").json()["results"]
    assert [c["id"] for c in listed] == [cid]
    assert secret_client.delete(f"/api/v1/campaigns/{cid}").status_code == 204
    assert not Campaign.objects.exists()


def test_bad_input_is_a_problem_and_stores_nothing(secret_client: Any, other_project: Any, template: Any) -> None:
    foreign = make_connector(other_project)
    response = secret_client.post(
        "/api/v1/campaigns", {"name": "X", "template": "promo", "connector": foreign.pk}, format="json"
    )
    assert response.status_code == 422
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["errors"][0]["field"] == "connector"
    assert secret_client.post("/api/v1/campaigns", {"name": "X", "template": "nope"}, format="json").status_code == 422
    assert not Campaign.objects.exists()


def test_controls_and_their_refusals(secret_client: Any, project: Any, template: Any, connector: Any) -> None:
    cid = secret_client.post("/api/v1/campaigns", {"name": "A", "template": "promo"}, format="json").json()["id"]
    empty = secret_client.post(f"/api/v1/campaigns/{cid}/start")
    assert empty.status_code == 422 and empty.json()["code"] == "no_recipients"
    add_subscribers(project, 5)
    started = secret_client.post(f"/api/v1/campaigns/{cid}/start")
    assert started.status_code == 202 and started.json()["state"] == "running"
    again = secret_client.post(f"/api/v1/campaigns/{cid}/start")
    assert again.status_code == 409 and again.json()["code"] == "campaign_already_running"
    assert secret_client.post(f"/api/v1/campaigns/{cid}/pause").json()["state"] == "paused"
    assert secret_client.post(f"/api/v1/campaigns/{cid}/resume").json()["state"] == "running"
    assert secret_client.post(f"/api/v1/campaigns/{cid}/cancel").json()["state"] == "cancelled"
    assert secret_client.post(f"/api/v1/campaigns/{cid}/resume").status_code == 409


def test_another_projects_campaign_is_not_found(other_secret_client: Any, make_campaign: Any) -> None:
    campaign = make_campaign()
    assert other_secret_client.get(f"/api/v1/campaigns/{campaign.pk}").status_code == 404
    assert other_secret_client.post(f"/api/v1/campaigns/{campaign.pk}/start").status_code == 404
    assert other_secret_client.get(f"/api/v1/campaigns/{campaign.pk}/stream").status_code == 404


def test_stream_serves_the_same_figures_as_server_sent_events(secret_client: Any, make_campaign: Any) -> None:
    from apps.campaigns.lifecycle import campaign_cancel

    campaign = make_campaign()
    campaign_cancel(campaign=campaign)  # a finished campaign's stream sends one snapshot and ends
    response = secret_client.get(f"/api/v1/campaigns/{campaign.pk}/stream")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    text = b"".join(response.streaming_content).decode()
    assert "event: progress" in text and '"state": "cancelled"' in text and '"target_rate"' in text


def test_settings_are_validated_in_range(secret_client: Any, project: Any) -> None:
    assert secret_client.get("/api/v1/campaigns/settings").json()["bounce_threshold"] == "0.05000"
    bad = secret_client.patch("/api/v1/campaigns/settings", {"bounce_threshold": "0.9"}, format="json")
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "bounce_threshold"
    assert not CampaignSettings.objects.exists()
    ok = secret_client.patch("/api/v1/campaigns/settings", {"complaint_threshold": "0.002"}, format="json")
    assert ok.status_code == 200 and ok.json()["complaint_threshold"] == "0.00200"


def test_stream_is_an_async_generator_under_asgi(project: Any, make_key: Any, make_campaign: Any) -> None:
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    from apps.campaigns.lifecycle import campaign_cancel

    campaign = make_campaign()
    campaign_cancel(campaign=campaign)
    raw = make_key(project, "secret")[1]

    async def fetch() -> tuple[Any, str]:
        response = await AsyncClient().get(
            f"/api/v1/campaigns/{campaign.pk}/stream", headers={"authorization": f"Bearer {raw}"}
        )
        assert getattr(response, "is_async", False), response.content  # no thread held per watcher
        body = "".join([chunk.decode() async for chunk in response.streaming_content])
        return response, body

    response, body = async_to_sync(fetch)()
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    assert "event: progress" in body and '"state": "cancelled"' in body


def test_campaign_counters_schema_lists_every_counter_the_api_reports():
    from apps.campaigns.api.schema import CampaignCountersOut
    from apps.campaigns.selectors import COUNTERS

    assert set(COUNTERS) <= set(CampaignCountersOut().fields)
