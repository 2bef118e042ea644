"""Subscriber merge and erase: journeys follow the surviving subscriber or stop."""

from __future__ import annotations

import pytest

from apps.subscribers.models import Subscriber
from apps.subscribers.services import subscriber_erase, subscriber_identify
from apps.workflows.models import Journey, Step
from tests.workflows.helpers import chain, node, publish, run_until_idle, start_and_expand

pytestmark = pytest.mark.django_db

WAIT = chain(node("start", "start"), node("pause", "wait", mode="duration", days=1), node("end", "end"))


def test_merge_moves_journeys_to_the_identified_subscriber(project):
    Subscriber.objects.create(project=project, anonymous_id="anon-1")
    version = publish(project, "welcome", WAIT)
    execution = start_and_expand(project, version)
    run_until_idle()
    survivor = subscriber_identify(project=project, external_id="known", anonymous_id="anon-1")
    journey = Journey.objects.get(execution=execution)
    assert journey.subscriber_id == survivor.pk
    assert set(Step.objects.filter(journey=journey).values_list("subscriber_id", flat=True)) == {survivor.pk}


def test_merge_stops_the_duplicate_when_both_are_in_the_workflow(project):
    Subscriber.objects.create(project=project, anonymous_id="anon-2")
    known = Subscriber.objects.create(project=project, external_id="k2")
    version = publish(project, "both", WAIT)
    start_and_expand(project, version)
    run_until_idle()
    assert Journey.objects.filter(state="waiting").count() == 2
    subscriber_identify(project=project, external_id="k2", anonymous_id="anon-2")
    assert Journey.objects.filter(subscriber=known, state="waiting").count() == 1
    assert Journey.objects.filter(subscriber=known, state="stopped").count() == 1


def test_erase_stops_the_subscribers_journeys(project):
    person = Subscriber.objects.create(project=project, external_id="gone")
    start_and_expand(project, publish(project, "erase", WAIT))
    run_until_idle()
    subscriber_erase(project=project, subscriber=person)
    journey = Journey.objects.get(subscriber=person)
    assert journey.state == "stopped" and journey.stop_reason == "subscriber erased"
