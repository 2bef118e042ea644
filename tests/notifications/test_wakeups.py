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


def _publish_high(project: Any, capture: Any, times: int) -> None:
    with capture(execute=True):
        for _ in range(times):
            notification_publish(project=project, template="welcome", to=["ada"], channels=["email"], priority="high")


def test_a_burst_of_publishes_sends_one_wake_up_per_lane(
    project: Any, welcome: Any, ada: Any, django_capture_on_commit_callbacks: Any
) -> None:
    _purge_broker()
    relay_wake_clear(project_id=project.pk, lane="high")
    _publish_high(project, django_capture_on_commit_callbacks, 20)
    assert _queued("high") == 1

    # The relay clears the flag before it claims: the next commit wakes it again.
    relay_wake_clear(project_id=project.pk, lane="high")
    _publish_high(project, django_capture_on_commit_callbacks, 1)
    assert _queued("high") == 2
    _purge_broker()


def test_coalesced_wake_ups_follow_every_commit_with_few_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    from apps.notifications import wakeups

    writes: list[tuple[float, int, str]] = []
    monkeypatch.setattr(
        wakeups, "relay_wake", lambda *, project_id, lane: writes.append((time.monotonic(), project_id, lane))
    )
    coalescer = wakeups.WakeCoalescer(window=0.05)
    commits: list[tuple[float, int, str]] = []

    def publisher(lane: str) -> None:
        for _ in range(100):
            commits.append((time.monotonic(), 1, lane))
            coalescer.wake(1, lane)
            time.sleep(0.002)

    threads = [threading.Thread(target=publisher, args=(lane,)) for lane in ("high", "normal", "high")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    time.sleep(0.2)
    # Every commit is followed by a write for its project and lane, at most a window later.
    for at, project_id, lane in commits:
        later = [w for w, p, lane_ in writes if p == project_id and lane_ == lane and w >= at]
        assert later and later[0] - at <= 0.05 + 0.5, (at, lane)  # a window, and scheduling slack
    # And far fewer writes than commits: about one per window per lane.
    assert len(writes) < len(commits) / 4


def test_publish_wakes_through_the_coalescer_when_configured(
    project: Any, welcome: Any, ada: Any, django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    import time

    settings.TIDINGS_RELAY_WAKE_COALESCE_MS = 100
    _purge_broker()
    relay_wake_clear(project_id=project.pk, lane="high")
    _publish_high(project, django_capture_on_commit_callbacks, 20)
    assert _queued("high") == 1
    # The relay clears the flag: a commit inside the window wakes it again at the window's end.
    relay_wake_clear(project_id=project.pk, lane="high")
    _publish_high(project, django_capture_on_commit_callbacks, 1)
    deadline = time.monotonic() + 2
    while _queued("high") < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _queued("high") == 2
    _purge_broker()
