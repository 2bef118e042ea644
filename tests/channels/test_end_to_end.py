"""A real connector through the whole path: enqueue → real worker → dispatcher →
Anymail → local Postmark-speaking server → ledger, then the provider's delivery
webhook → receipt_ingest → delivered."""

from __future__ import annotations

import base64

import pytest

from apps.delivery.models import Attempt, Delivery
from apps.delivery.redis_client import get_redis
from apps.delivery.services import DeliveryRequest, connector_create, deliveries_enqueue
from tests.channels.cases import postmark
from tests.channels.fakes import fake_server
from tests.channels.helpers import email_case_responder
from tests.fixtures.worker import wait_for

pytestmark = pytest.mark.worker


def test_postmark_connector_sends_through_the_worker_and_its_receipt_marks_delivered(project, celery_worker, client):  # type: ignore[no-untyped-def]
    get_redis().flushdb()
    with fake_server(email_case_responder(postmark)) as server:
        connector = connector_create(
            project=project,
            channel="email",
            provider="postmark",
            credentials={"server_token": "pm-server-token", "webhook_secret": "hooks:s3cret"},
            settings={"from_email": "news@tidings.test", "api_url": server.url},
            is_default=True,
        )
        ids = deliveries_enqueue(
            project=project,
            requests=[
                DeliveryRequest(
                    channel="email",
                    destination=destination,
                    lane="high",
                    delivery_key=f"e2e:{destination}",
                    origin_kind="test",
                    origin_id="e2e",
                    content={"subject": "Hi", "text": "Hello", "html": "<p>Hello</p>"},
                )
                for destination in ("ok-1@example.com", "perm-2@example.com")
            ],
        )
        ok_id, perm_id = ids
        wait_for(
            lambda: Delivery.objects.filter(pk__in=ids, state__in=["sent", "failed"]).count() == 2,
            timeout=30,
            message=celery_worker.log()[-3000:],
        )
    sent = Delivery.objects.get(pk=ok_id)
    refused = Delivery.objects.get(pk=perm_id)
    assert sent.state == "sent"
    assert sent.provider_reference.startswith("pm-")
    assert refused.state == "failed"
    assert Attempt.objects.get(delivery_id=perm_id).outcome == "permanent"
    # The provider really received the connector's credentials.
    assert {r.header("X-Postmark-Server-Token") for r in server.requests} == {"pm-server-token"}

    event = {
        "RecordType": "Delivery",
        "MessageID": sent.provider_reference,
        "Recipient": "ok-1@example.com",
        "DeliveredAt": "2026-11-29T10:00:00Z",
        "Details": "Test delivery webhook details",
        "Metadata": {"delivery_id": str(sent.pk)},
    }
    auth = "Basic " + base64.b64encode(b"hooks:s3cret").decode()
    response = client.post(
        f"/webhooks/{connector.pk}/postmark", event, content_type="application/json", HTTP_AUTHORIZATION=auth
    )
    assert response.status_code == 200, response.content
    sent.refresh_from_db()
    assert sent.state == "delivered"
