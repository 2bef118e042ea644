"""Dispatch rules, one batch at a time in this process (real Postgres and Redis)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.delivery.channels.dryrun import dryrun_reset
from apps.delivery.dispatch import dispatch_batch, sweep
from apps.delivery.dispatch.prepare import _senders
from apps.delivery.models import Attempt, Delivery, DeliveryEvent, Template, TemplateVersion
from apps.delivery.origins import origin_listeners
from apps.delivery.services import DeliveryRequest, deliveries_enqueue, suppression_add
from apps.subscribers.models import ChannelPreference
from tests.delivery.conftest import make_connector, redis_clear

pytestmark = pytest.mark.django_db

OUTCOMES: list = []


@pytest.fixture(autouse=True)
def _fresh(project):
    _senders.items.clear()
    redis_clear()
    OUTCOMES.clear()
    if "rules_test" not in origin_listeners:
        origin_listeners.add("rules_test", OUTCOMES.extend)
    yield
    dryrun_reset(project.pk)


def enqueue(project, count=1, version=None, subscriber=None, lane="normal", **kwargs):
    return deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                channel=kwargs.pop("channel", "email"),
                destination=kwargs.pop("destination", f"person{i}@example.com"),
                lane=lane,
                delivery_key=f"k{i}-{lane}",
                origin_kind="rules_test",
                origin_id="o1",
                template_version_id=version.pk if version else None,
                content=None if version else {"subject": "Hi", "text": "Hello", "html": "<p>Hello</p>"},
                subscriber_id=subscriber.pk if subscriber else None,
                **kwargs,
            )
            for i in range(count)
        ],
    )


def states(ids):
    return sorted(Delivery.objects.filter(pk__in=ids).values_list("state", flat=True))


def test_accepted_send_records_reference_attempt_event_and_tells_origin(project, email_version, subscribers):
    make_connector(project, delivered_rate=0)
    (pk,) = enqueue(project, version=email_version, subscriber=subscribers[1], context={"order_id": 42})
    assert dispatch_batch("normal") == 1
    delivery = Delivery.objects.get(pk=pk)
    assert delivery.state == "sent" and delivery.provider_reference.startswith("dryrun-")
    attempt = Attempt.objects.get(delivery=delivery)
    assert (attempt.number, attempt.outcome) == (1, "accepted") and attempt.finished_at is not None
    assert list(DeliveryEvent.objects.filter(delivery=delivery).values_list("state", flat=True)) == ["queued", "sent"]
    assert [(o.delivery_id, o.state) for o in OUTCOMES] == [(pk, "sent")]


def test_suppressed_and_opted_out_deliveries_end_in_their_own_state_without_a_send(project, subscribers):
    make_connector(project, delivered_rate=0)
    suppression_add(project=project, channel="email", address="PERSON0@example.com", reason="manual")
    ChannelPreference.objects.create(project=project, subscriber=subscribers[2], channel="email", category="promo")
    suppressed = enqueue(project)
    opted = deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                "email",
                "x@example.com",
                "normal",
                "opt",
                "rules_test",
                "o",
                content={"text": "t"},
                subscriber_id=subscribers[2].pk,
                category="promo",
            ),
            DeliveryRequest(
                "email",
                "y@example.com",
                "normal",
                "other",
                "rules_test",
                "o",
                content={"text": "t"},
                subscriber_id=subscribers[2].pk,
                category="receipts",
            ),
        ],
    )
    dispatch_batch("normal")
    assert Delivery.objects.get(pk=suppressed[0]).state == "suppressed"
    opted_row = Delivery.objects.get(pk=opted[0])
    assert opted_row.state == "opted_out" and "promo" in opted_row.state_reason
    assert Delivery.objects.get(pk=opted[1]).state == "sent"
    assert not Attempt.objects.filter(delivery_id__in=[suppressed[0], opted[0]]).exists()


def test_permanent_error_is_a_dead_letter_at_once_with_payload_snapshot(project):
    make_connector(project, permanent_rate=1.0)
    (pk,) = enqueue(project)
    dispatch_batch("normal")
    delivery = Delivery.objects.get(pk=pk)
    assert delivery.state == "failed" and delivery.attempts == 1
    assert delivery.last_error.startswith("permanent")
    assert delivery.payload_snapshot["content"]["subject"] == "Hi"


def test_transient_errors_back_off_then_exhaust_into_a_dead_letter(project, settings):
    settings.TIDINGS_RETRY_POLICY = {"default": {"base_seconds": 10, "cap_seconds": 25}}
    make_connector(project, transient_rate=1.0)
    (pk,) = enqueue(project, attempt_budget=3)
    delays = []
    for _ in range(3):
        before = timezone.now()
        assert dispatch_batch("normal") == 1
        delivery = Delivery.objects.get(pk=pk)
        delays.append((delivery.due_at - before).total_seconds())
        Delivery.objects.filter(pk=pk, state="retrying").update(due_at=timezone.now())
    assert delivery.state == "failed" and delivery.attempts == 3
    assert "exhausted 3 attempts" in delivery.last_error
    assert 10 <= delays[0] <= 21 and 20 <= delays[1] <= 25.5  # base·2^n + jitter, capped
    assert list(Attempt.objects.filter(delivery_id=pk).values_list("outcome", flat=True)) == ["retryable"] * 3


def test_rate_limit_defers_the_rest_of_a_batch_and_never_fails_it(project):
    make_connector(project, rate_per_second=5, delivered_rate=0)
    ids = enqueue(project, count=20)
    dispatch_batch("normal")
    rows = Delivery.objects.filter(pk__in=ids)
    assert rows.filter(state="sent").count() == 5
    deferred = rows.filter(state="queued")
    assert deferred.count() == 15 and not rows.filter(state="failed").exists()
    assert all(d.due_at > timezone.now() for d in deferred) and not Attempt.objects.filter(delivery__in=deferred)


def test_strict_version_fails_the_delivery_naming_the_missing_variable(project, email_version, subscribers):
    make_connector(project, delivered_rate=0)
    strict = TemplateVersion.objects.create(
        project=project,
        template=email_version.template,
        number=2,
        strict=True,
        content={"email": {"subject": "Order {{ order_id }}", "text": "{{ subscriber.nickname }}"}},
        published_at=timezone.now(),
    )
    lenient = email_version
    (bad,) = enqueue(project, version=strict, subscriber=subscribers[1], context={"order_id": 1})
    Delivery.objects.filter(pk=bad).update(delivery_key="strict")
    (ok,) = enqueue(project, version=lenient, subscriber=subscribers[1])
    dispatch_batch("normal")
    failed = Delivery.objects.get(pk=bad)
    assert failed.state == "failed" and "nickname" in failed.state_reason
    assert Delivery.objects.get(pk=ok).state == "sent"


def test_scheduled_delivery_stays_until_due_then_the_sweeper_releases_it(project):
    make_connector(project, delivered_rate=0)
    (pk,) = enqueue(project, due_at=timezone.now() + timedelta(hours=2))
    assert dispatch_batch("normal") == 0
    sweep()
    assert Delivery.objects.get(pk=pk).state == "scheduled"
    Delivery.objects.filter(pk=pk).update(due_at=timezone.now() - timedelta(seconds=1))
    assert sweep()["promoted"] == 1
    assert dispatch_batch("normal") == 1 and Delivery.objects.get(pk=pk).state == "sent"


def test_sweeper_reclaims_expired_claims_and_marks_their_attempt_lost(project):
    make_connector(project, delivered_rate=0)
    (pk,) = enqueue(project)
    Delivery.objects.filter(pk=pk).update(state="claimed", claimed_until=timezone.now() - timedelta(seconds=1))
    Attempt.objects.create(project=project, delivery_id=pk, number=1, started_at=timezone.now())
    assert sweep()["reclaimed"] == 1
    delivery = Delivery.objects.get(pk=pk)
    assert (delivery.state, delivery.attempts) == ("retrying", 1)
    assert Attempt.objects.get(delivery_id=pk).outcome == "lost"
    dispatch_batch("normal")
    assert Delivery.objects.get(pk=pk).state == "sent"
    assert list(Attempt.objects.filter(delivery_id=pk).order_by("number").values_list("number", "outcome")) == [
        (1, "lost"),
        (2, "accepted"),
    ]


def test_no_connector_for_the_channel_is_a_permanent_failure(project):
    (pk,) = enqueue(project, channel="sms", destination="+351910000000")
    dispatch_batch("normal")
    delivery = Delivery.objects.get(pk=pk)
    assert delivery.state == "failed" and "No sms connector" in delivery.state_reason


def test_a_message_that_hits_a_render_limit_fails_alone_with_its_reason(project, subscribers):
    make_connector(project, delivered_rate=0)
    template = Template.objects.create(project=project, key="echo", channel="sms", name="echo")
    version = TemplateVersion.objects.create(
        project=project,
        template=template,
        number=1,
        content={"sms": {"text": "{{ word * times }}"}},
        published_at=timezone.now(),
    )
    (huge,) = enqueue(
        project, version=version, channel="sms", destination="+351910000001", context={"word": "ab", "times": 10**7}
    )
    Delivery.objects.filter(pk=huge).update(delivery_key="huge")
    (fine,) = enqueue(
        project, version=version, channel="sms", destination="+351910000002", context={"word": "ab", "times": 3}
    )
    make_connector(project, channel="sms", delivered_rate=0)
    dispatch_batch("normal")
    failed = Delivery.objects.get(pk=huge)
    assert failed.state == "failed" and "limit is 1,000,000" in failed.state_reason
    assert failed.payload_snapshot["context"] == {"word": "ab", "times": 10**7}
    assert Delivery.objects.get(pk=fine).state == "sent"


def test_a_replayed_dead_letter_that_is_delivered_forgets_its_old_error(project):
    from apps.delivery.models import Connector
    from apps.notifications.dead_letters import dead_letters_replay

    make_connector(project, permanent_rate=1.0)
    (pk,) = enqueue(project)
    dispatch_batch("normal")
    assert Delivery.objects.get(pk=pk).last_error.startswith("permanent")

    Connector.objects.filter(project=project).update(settings={"permanent_rate": 0.0, "delivered_rate": 0.0})
    _senders.items.clear()
    assert dead_letters_replay(project=project, ids=[pk]) == [pk]
    dispatch_batch("normal")
    delivery = Delivery.objects.get(pk=pk)
    assert delivery.state == "sent"
    assert delivery.last_error == ""


def test_connector_edit_applies_to_the_next_batch_in_a_warm_worker(project):
    """A worker's cached sender must not outlive the connector it was built from: an
    operator who fixes a connector and replays its dead letters expects the fix to send."""
    connector = make_connector(project, permanent_rate=1.0)
    [first] = enqueue(project, lane="high")
    assert dispatch_batch("high") == 1
    assert Delivery.objects.get(pk=first).state == "failed"

    connector.settings = {}
    connector.save()
    second = deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                channel="email",
                destination="fixed@example.com",
                lane="high",
                delivery_key="after-fix",
                origin_kind="rules_test",
                origin_id="o2",
                content={"subject": "Hi", "text": "Hello", "html": "<p>Hello</p>"},
            )
        ],
    )[0]
    assert dispatch_batch("high") == 1
    assert Delivery.objects.get(pk=second).state == "sent"
