from __future__ import annotations

from typing import Any

import pytest

from apps.core.errors import ApplicationError, NotFound
from apps.subscribers.models import Device
from apps.subscribers.selectors import active_devices, import_running, opted_out_subscriber_ids
from apps.subscribers.services import device_deactivate, device_register, preference_set, subscriber_identify


def test_token_reregistered_by_another_subscriber_moves(project: Any) -> None:
    a = subscriber_identify(project=project, external_id="a")
    b = subscriber_identify(project=project, external_id="b")
    device_register(project=project, subscriber=a, platform="android", token="t1")
    device_register(project=project, subscriber=b, platform="android", token="t1")
    assert Device.objects.get(project=project, token="t1").subscriber_id == b.pk
    assert active_devices(project, [a.pk, b.pk]) == {b.pk: [Device.objects.get(token="t1")]}


def test_same_token_in_another_project_stays_separate(project: Any, other_project: Any) -> None:
    mine = subscriber_identify(project=project, external_id="a")
    theirs = subscriber_identify(project=other_project, external_id="a")
    device_register(project=project, subscriber=mine, platform="ios", token="shared")
    device_register(project=other_project, subscriber=theirs, platform="ios", token="shared")
    device_deactivate(project=project, token="shared", reason="UNREGISTERED")
    assert Device.objects.get(project=project).active is False
    assert Device.objects.get(project=other_project).active is True
    assert Device.objects.get(project=other_project).subscriber_id == theirs.pk


def test_device_for_a_subscriber_of_another_project_is_refused(project: Any, other_project: Any) -> None:
    theirs = subscriber_identify(project=other_project, external_id="a")
    with pytest.raises(NotFound):
        device_register(project=project, subscriber=theirs, platform="ios", token="t")
    with pytest.raises(ApplicationError):
        device_register(project=project, subscriber=theirs, platform="blackberry", token="t")
    assert not Device.objects.exists()


def test_deactivated_device_is_not_active_and_reregistering_revives_it(project: Any) -> None:
    a = subscriber_identify(project=project, external_id="a")
    device_register(project=project, subscriber=a, platform="web", token="t")
    device_deactivate(project=project, token="t", reason="UNREGISTERED")
    assert active_devices(project, [a.pk]) == {}
    device_register(project=project, subscriber=a, platform="web", token="t")
    assert list(active_devices(project, [a.pk])) == [a.pk]


def test_opt_outs_per_channel_and_category(project: Any) -> None:
    a = subscriber_identify(project=project, external_id="a")
    b = subscriber_identify(project=project, external_id="b")
    c = subscriber_identify(project=project, external_id="c")
    preference_set(project=project, subscriber=a, channel="email", opted_out=True)
    preference_set(project=project, subscriber=b, channel="email", category="marketing", opted_out=True)
    preference_set(project=project, subscriber=c, channel="email", category="marketing", opted_out=False)
    ids = [a.pk, b.pk, c.pk]
    assert opted_out_subscriber_ids(project, ids, "email") == {a.pk}
    assert opted_out_subscriber_ids(project, ids, "email", "marketing") == {a.pk, b.pk}
    assert opted_out_subscriber_ids(project, ids, "sms", "marketing") == set()


def test_import_running_is_false_without_jobs(project: Any) -> None:
    assert import_running(project) is False
