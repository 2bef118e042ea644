from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from apps.core.errors import ApplicationError
from apps.subscribers.merge import subscriber_merge_hooks
from apps.subscribers.models import ChannelPreference, Device, Subscriber, TagEvent
from apps.subscribers.selectors import subscriber_by_anonymous_id, subscriber_get, subscriber_tag_names
from apps.subscribers.services import (
    device_register,
    preference_set,
    subscriber_identify,
    subscriber_tags_change,
)
from tests.factories import ProjectFactory


def test_identify_creates_then_updates_the_same_subscriber(project: Any) -> None:
    first = subscriber_identify(project=project, external_id="u1", email="a@example.com", timezone="Europe/Lisbon")
    second = subscriber_identify(project=project, external_id="u1", phone="+351912345678", attributes={"plan": "pro"})
    assert first.pk == second.pk
    second.refresh_from_db()
    assert (second.email, second.phone, second.timezone, second.attributes) == (
        "a@example.com",
        "+351912345678",
        "Europe/Lisbon",
        {"plan": "pro"},
    )
    assert Subscriber.objects.for_project(project).count() == 1


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("timezone", "Mars/Olympus", "invalid_timezone"),
        ("email", "not-an-email", "invalid_email"),
        ("phone", "0912345678", "invalid_phone"),
        ("locale", "xx yy", "invalid_locale"),
    ],
)
def test_identify_refuses_bad_fields_and_creates_nothing(project: Any, field: str, value: str, code: str) -> None:
    with pytest.raises(ApplicationError) as exc:
        subscriber_identify(project=project, external_id="u1", **{field: value})
    assert (exc.value.code, exc.value.field) == (code, field)
    assert not Subscriber.objects.for_project(project).exists()


def test_merge_moves_devices_tags_history_and_identified_values_win(project: Any) -> None:
    anon = subscriber_identify(
        project=project, external_id=None, anonymous_id="anon-1", email="anon@example.com", attributes={"a": 1, "b": 1}
    )
    device_register(project=project, subscriber=anon, platform="ios", token="tok-1")
    subscriber_tags_change(project=project, subscriber=anon, add=["browsed"], remove=[], source="api")
    preference_set(project=project, subscriber=anon, channel="sms", opted_out=True)
    known = subscriber_identify(project=project, external_id="u1", attributes={"b": 2})

    merged = subscriber_identify(project=project, external_id="u1", anonymous_id="anon-1")

    assert merged.pk == known.pk
    merged.refresh_from_db()
    assert merged.attributes == {"a": 1, "b": 2}
    assert merged.email == "anon@example.com"
    assert Device.objects.get(token="tok-1").subscriber_id == known.pk
    assert subscriber_tag_names(project, [known.pk]) == {known.pk: {"browsed"}}
    assert TagEvent.objects.filter(subscriber_id=known.pk, tag_name="browsed").exists()
    assert ChannelPreference.objects.filter(subscriber_id=known.pk, channel="sms").exists()
    anon.refresh_from_db()
    assert anon.merged_into_id == known.pk
    assert subscriber_by_anonymous_id(project, "anon-1").pk == known.pk
    # Later anonymous calls land on the identified subscriber.
    again = subscriber_identify(project=project, external_id=None, anonymous_id="anon-1", locale="pt-PT")
    assert again.pk == known.pk


def test_merge_is_idempotent_when_repeated(project: Any) -> None:
    subscriber_identify(project=project, external_id=None, anonymous_id="anon-1")
    first = subscriber_identify(project=project, external_id="u1", anonymous_id="anon-1")
    second = subscriber_identify(project=project, external_id="u1", anonymous_id="anon-1")
    assert first.pk == second.pk
    assert Subscriber.objects.for_project(project).filter(merged_into__isnull=True).count() == 1


def test_merge_hooks_run_inside_the_merge(project: Any) -> None:
    calls: list[tuple[int, int, int]] = []
    subscriber_merge_hooks.add("test-recorder", lambda *args: calls.append(args))
    try:
        anon = subscriber_identify(project=project, external_id=None, anonymous_id="anon-1")
        known = subscriber_identify(project=project, external_id="u1", anonymous_id="anon-1")
    finally:
        subscriber_merge_hooks._items.pop("test-recorder")
    assert calls == [(project.pk, anon.pk, known.pk)]


def test_anonymous_id_of_another_identified_person_is_not_stolen(project: Any) -> None:
    first = subscriber_identify(project=project, external_id="u1", anonymous_id="shared")
    second = subscriber_identify(project=project, external_id="u2", anonymous_id="shared")
    assert first.pk != second.pk
    first.refresh_from_db()
    assert first.merged_into_id is None and first.external_id == "u1"


def test_identify_is_scoped_to_the_project(project: Any, other_project: Any) -> None:
    mine = subscriber_identify(project=project, external_id="u1")
    theirs = subscriber_identify(project=other_project, external_id="u1")
    assert mine.pk != theirs.pk
    assert subscriber_get(project, "u1").pk == mine.pk


def _race(target: Any, n: int = 2) -> list[Any]:
    barrier = threading.Barrier(n)
    results: list[Any] = []

    def run() -> None:
        try:
            barrier.wait()
            results.append(target())
        except Exception as exc:  # noqa: BLE001 - any failure is reported by the assertion below
            results.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_identify_calls_make_one_subscriber() -> None:
    project = ProjectFactory()
    for attempt in range(5):
        results = _race(lambda a=attempt: subscriber_identify(project=project, external_id=f"race-{a}"), n=4)
        assert all(isinstance(r, Subscriber) for r in results), results
        assert len({r.pk for r in results}) == 1
    assert Subscriber.objects.for_project(project).count() == 5


@pytest.mark.django_db(transaction=True)
def test_concurrent_merges_of_one_anonymous_subscriber_merge_once() -> None:
    project = ProjectFactory()
    for attempt in range(5):
        anon = subscriber_identify(project=project, external_id=None, anonymous_id=f"anon-{attempt}")
        subscriber_tags_change(project=project, subscriber=anon, add=["seen"], remove=[], source="api")
        results = _race(
            lambda a=attempt: subscriber_identify(project=project, external_id=f"u-{a}", anonymous_id=f"anon-{a}"),
            n=3,
        )
        assert all(isinstance(r, Subscriber) for r in results), results
        assert len({r.pk for r in results}) == 1
        survivor = results[0]
        anon.refresh_from_db()
        assert anon.merged_into_id == survivor.pk
        assert subscriber_tag_names(project, [survivor.pk]) == {survivor.pk: {"seen"}}
    assert Subscriber.objects.for_project(project).filter(merged_into__isnull=True).count() == 5
