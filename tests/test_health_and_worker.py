from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.models import Heartbeat
from apps.core.tasks import heartbeat
from tests.fixtures.worker import wait_for


@pytest.mark.django_db
def test_health_is_503_naming_worker_and_beat_when_never_seen(client):
    response = client.get("/health")
    assert response.status_code == 503
    body = response.json()
    assert set(body["down"]) == {"worker", "beat"}
    assert body["database"] == "ok"
    assert body["broker"] == "ok"


@pytest.mark.django_db
def test_health_is_200_with_fresh_heartbeats(client):
    now = timezone.now()
    Heartbeat.objects.create(name="worker", at=now)
    Heartbeat.objects.create(name="beat", at=now - timedelta(seconds=5))
    response = client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["worker_heartbeat_age_seconds"] < 5
    assert 4 < body["beat_heartbeat_age_seconds"] < 10


@pytest.mark.django_db
def test_health_reports_stale_worker(client):
    Heartbeat.objects.create(name="worker", at=timezone.now() - timedelta(minutes=5))
    Heartbeat.objects.create(name="beat", at=timezone.now())
    response = client.get("/health")
    assert response.status_code == 503
    assert response.json()["down"] == ["worker"]


@pytest.mark.django_db
def test_health_names_a_broker_that_is_down(client, settings):
    from config.celery import app

    original = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"
    try:
        response = client.get("/health")
    finally:
        app.conf.broker_url = original
    assert response.status_code == 503
    assert "broker" in response.json()["down"]


@pytest.mark.worker
def test_a_real_worker_runs_the_heartbeat_task(celery_worker):
    heartbeat.delay()
    beat = wait_for(lambda: Heartbeat.objects.filter(name="worker").first(), message=celery_worker.log()[-2000:])
    assert timezone.now() - beat.at < timedelta(seconds=30)
