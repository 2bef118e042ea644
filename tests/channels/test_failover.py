"""Failover through the real dispatcher and worker: the primary's account is refused,
the channel switches to its secondary, nothing is dead-lettered, the switch is an event."""

from __future__ import annotations

import pytest

from apps.delivery.models import Connector, Delivery, DeliveryEvent
from apps.delivery.redis_client import get_redis
from apps.delivery.services import DeliveryRequest, connector_create, deliveries_enqueue
from tests.channels.cases import postmark
from tests.channels.fakes import Response, fake_server
from tests.channels.helpers import email_case_responder
from tests.fixtures.worker import wait_for

pytestmark = pytest.mark.worker


def refuse_token(request):  # type: ignore[no-untyped-def]
    return Response(401, {"ErrorCode": 10, "Message": "Bad or missing Server API token."})


def test_refused_account_fails_over_to_the_secondary_and_records_the_switch(project, celery_worker):  # type: ignore[no-untyped-def]
    get_redis().flushdb()
    with fake_server(refuse_token) as primary_server, fake_server(email_case_responder(postmark)) as secondary_server:
        secondary = connector_create(
            project=project,
            channel="email",
            provider="postmark",
            name="backup",
            credentials={"server_token": "backup-token"},
            settings={"from_email": "news@tidings.test", "api_url": secondary_server.url},
        )
        primary = connector_create(
            project=project,
            channel="email",
            provider="postmark",
            name="main",
            credentials={"server_token": "revoked-token"},
            settings={"from_email": "news@tidings.test", "api_url": primary_server.url},
            is_default=True,
            secondary=secondary,
        )
        ids = deliveries_enqueue(
            project=project,
            requests=[
                DeliveryRequest(
                    channel="email",
                    destination=f"ok-{n}@example.com",
                    lane="high",
                    delivery_key=f"fo:{n}",
                    origin_kind="test",
                    origin_id="fo",
                    content={"subject": "Hi", "text": "Hello"},
                )
                for n in range(3)
            ],
        )
        wait_for(
            lambda: Delivery.objects.filter(pk__in=ids, state="sent").count() == 3,
            timeout=40,
            message=celery_worker.log()[-3000:],
        )
    primary.refresh_from_db()
    assert primary.status == Connector.Status.FAILING
    assert "failover" in primary.last_error
    assert {r.header("X-Postmark-Server-Token") for r in secondary_server.requests} == {"backup-token"}
    assert not Delivery.objects.filter(pk__in=ids, state="failed").exists()
    switched = DeliveryEvent.objects.filter(delivery_id__in=ids, reason__startswith="failover:")
    assert switched.count() >= 1
    assert all(str(secondary.pk) in event.reason for event in switched)


def test_refused_account_without_a_secondary_dead_letters_with_the_reason(project, celery_worker):  # type: ignore[no-untyped-def]
    get_redis().flushdb()
    with fake_server(refuse_token) as server:
        connector_create(
            project=project,
            channel="email",
            provider="postmark",
            credentials={"server_token": "revoked"},
            settings={"from_email": "news@tidings.test", "api_url": server.url},
            is_default=True,
        )
        [delivery_id] = deliveries_enqueue(
            project=project,
            requests=[
                DeliveryRequest(
                    channel="email",
                    destination="a@example.com",
                    lane="high",
                    delivery_key="nf:1",
                    origin_kind="test",
                    origin_id="nf",
                    content={"subject": "Hi", "text": "Hello"},
                )
            ],
        )
        wait_for(
            lambda: Delivery.objects.get(pk=delivery_id).state == "failed",
            timeout=30,
            message=celery_worker.log()[-3000:],
        )
    assert "auth_failed" in Delivery.objects.get(pk=delivery_id).last_error


def test_connector_failing_transiently_past_the_threshold_switches_to_the_secondary(project, start_worker, monkeypatch):  # type: ignore[no-untyped-def]
    get_redis().flushdb()
    monkeypatch.setenv("TIDINGS_CONNECTOR_FAILURE_THRESHOLD", "2")
    monkeypatch.setenv("TIDINGS_RETRY_BASE_MS", "200")
    unavailable = lambda request: Response(503, "Service Unavailable")  # noqa: E731
    with fake_server(unavailable) as primary_server, fake_server(email_case_responder(postmark)) as secondary_server:
        secondary = connector_create(
            project=project,
            channel="email",
            provider="postmark",
            credentials={"server_token": "backup"},
            settings={"from_email": "news@tidings.test", "api_url": secondary_server.url},
        )
        primary = connector_create(
            project=project,
            channel="email",
            provider="postmark",
            credentials={"server_token": "main"},
            settings={"from_email": "news@tidings.test", "api_url": primary_server.url},
            is_default=True,
            secondary=secondary,
        )
        worker = start_worker()
        ids = deliveries_enqueue(
            project=project,
            requests=[
                DeliveryRequest(
                    channel="email",
                    destination=f"ok-{n}@example.com",
                    lane="high",
                    delivery_key=f"tr:{n}",
                    origin_kind="test",
                    origin_id="tr",
                    content={"subject": "Hi", "text": "Hello"},
                )
                for n in range(2)
            ],
        )
        wait_for(
            lambda: Delivery.objects.filter(pk__in=ids, state="sent").count() == 2,
            timeout=60,
            message=worker.log()[-3000:],
        )
    primary.refresh_from_db()
    assert primary.status == Connector.Status.FAILING
    assert len(primary_server.requests) >= 2
    assert DeliveryEvent.objects.filter(delivery_id__in=ids, reason__contains="kept failing").exists()
