"""Wake-ups: one Celery message per burst of commits, never a lost one."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from django.conf import settings

from apps.notifications.services import notification_publish
from apps.notifications.wakeups import relay_wake_clear
from tests.fixtures.worker import _purge_broker

pytestmark = pytest.mark.django_db


def _queued(lane: str) -> int:
    return redis.Redis.from_url(settings.CELERY_BROKER_URL).llen(lane)


def test_a_burst_of_publishes_sends_one_wake_up_per_lane(
    project: Any, welcome: Any, ada: Any, django_capture_on_commit_callbacks: Any
) -> None:
    _purge_broker()
    relay_wake_clear(project_id=project.pk, lane="high")
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(20):
            notification_publish(project=project, template="welcome", to=["ada"], channels=["email"], priority="high")
    assert _queued("high") == 1

    # The relay clears the flag before it claims: the next commit wakes it again.
    relay_wake_clear(project_id=project.pk, lane="high")
    with django_capture_on_commit_callbacks(execute=True):
        notification_publish(project=project, template="welcome", to=["ada"], channels=["email"], priority="high")
    assert _queued("high") == 2
    _purge_broker()
