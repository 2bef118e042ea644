"""A message that breaks while it is prepared, rendered or sent fails alone, and a row that
keeps taking its batch down with it is dead-lettered as poison (real Postgres and Redis,
one batch at a time in this process)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from apps.delivery.channels.dryrun import dryrun_request_counts, dryrun_reset
from apps.delivery.dispatch import dispatch_batch, sweep
from apps.delivery.dispatch.prepare import _senders
from apps.delivery.models import Attempt, Delivery, DeliveryEvent
from apps.delivery.origins import origin_content_decorators, origin_hold_checks, origin_listeners
from apps.delivery.services import DeliveryRequest, deliveries_enqueue
from apps.notifications.router import outbox_relay
from tests.delivery.conftest import make_connector, redis_clear
from tests.notifications.conftest import make_template

pytestmark = pytest.mark.django_db

KIND = "poison_test"
POISON = "poison@example.com"
OUTCOMES: list[Any] = []
# What the origin hooks below do for the poison row, set per test.
HOOKS: dict[str, Any] = {}


class WorkerKilled(BaseException):
    """Stands in for SIGKILL: nothing after it runs, nothing catches it, nothing is recorded."""


def _decorate(row: Any, content: dict[str, Any]) -> dict[str, Any]:
    if row.destination == POISON:
        HOOKS["decorated"] = HOOKS.get("decorated", 0) + 1
        if "decorate" in HOOKS:
            raise HOOKS["decorate"]
    return content


def _hold(rows: Any) -> dict[int, Any]:
    if "hold" in HOOKS and any(r.destination == POISON for r in rows):
        raise HOOKS["hold"]
    return {}


@pytest.fixture(autouse=True)
def _fresh(project, other_project):
    _senders.items.clear()
    redis_clear()
    OUTCOMES.clear()
    HOOKS.clear()
    for registry, hook in ((origin_listeners, OUTCOMES.extend), (origin_content_decorators, _decorate)):
        if KIND not in registry:
            registry.add(KIND, hook)
    if KIND not in origin_hold_checks:
        origin_hold_checks.add(KIND, _hold)
    yield
    HOOKS.clear()
    dryrun_reset(project.pk)
    dryrun_reset(other_project.pk)


def enqueue(project, destinations: list[str], lane: str = "normal") -> list[int]:
    return deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                channel="email",
                destination=destination,
                lane=lane,
                delivery_key=f"{project.pk}:{destination}",
                origin_kind=KIND,
                origin_id="o1",
                content={"subject": "Hi", "text": "Hello", "html": "<p>Hello</p>"},
            )
            for destination in destinations
        ],
    )


def states(ids: list[int]) -> list[str]:
    return sorted(Delivery.objects.filter(pk__in=ids).values_list("state", flat=True))


def expire_claims() -> None:
    """The claim TTL passing, without waiting for it."""
    Delivery.objects.filter(state="claimed").update(claimed_until=timezone.now() - timedelta(seconds=1))


@pytest.mark.parametrize(
    ("text", "data", "reason"),
    [
        # The outside probe's example: the renderer names it as a template failure.
        ("{{ (100*data.used/data.quota)|round }}", {"used": 1, "quota": 0}, "ZeroDivisionError: division by zero"),
        # A filter that fails with something the renderer does not translate.
        (
            "{% for k, v in data.usage|dictsort %}{{ k }}{% endfor %}",
            {"usage": [1, 2]},
            "AttributeError: 'list' object has no attribute 'items'",
        ),
    ],
    ids=["zero-division", "attribute-error"],
)
def test_a_message_that_fails_to_render_fails_alone_and_another_projects_batch_goes_out(
    project, other_project, make_key, client_for, text, data, reason
):
    make_template(project, key="usage", content={"email": {"subject": text, "text": "t", "html": "<p>t</p>"}})
    make_template(other_project)
    make_connector(project, delivered_rate=0)
    make_connector(other_project, delivered_rate=0)
    ours, theirs = (client_for(make_key(p, "secret")[1]) for p in (project, other_project))
    body = {"channels": ["email"], "priority": "high"}
    poison = ours.post(
        "/api/v1/notifications", {**body, "template": "usage", "to": [{"email": POISON}], "data": data}, format="json"
    )
    good = theirs.post(
        "/api/v1/notifications",
        {**body, "template": "welcome", "to": [{"email": f"g{i}@example.com"} for i in range(3)], "data": {}},
        format="json",
    )
    assert (poison.status_code, good.status_code) == (202, 202), (poison.content, good.content)
    outbox_relay(project=project)
    outbox_relay(project=other_project)

    assert dispatch_batch("high") == 4  # one batch, both projects

    dead = Delivery.objects.get(project=project)
    assert dead.state == "failed" and reason in dead.last_error and reason in dead.state_reason
    assert dead.payload_snapshot["template_version_id"] == dead.template_version_id
    assert not Attempt.objects.filter(delivery=dead).exists()  # nothing went to the provider
    assert DeliveryEvent.objects.filter(delivery=dead, state="failed").exists()
    assert states(list(Delivery.objects.filter(project=other_project).values_list("pk", flat=True))) == ["sent"] * 3
    assert not Delivery.objects.filter(state="claimed").exists()


def test_an_origin_hook_that_fails_for_one_message_fails_that_message_only(project, other_project):
    make_connector(project, delivered_rate=0)
    make_connector(other_project, delivered_rate=0)
    HOOKS["decorate"] = RuntimeError("signing key missing for this list")
    (poison,) = enqueue(project, [POISON])
    good = enqueue(project, ["a@example.com", "b@example.com"]) + enqueue(other_project, ["c@example.com"])
    assert dispatch_batch("normal") == 4
    dead = Delivery.objects.get(pk=poison)
    assert dead.state == "failed"
    assert "RuntimeError: signing key missing for this list" in dead.last_error
    assert states(good) == ["sent"] * 3
    assert [(o.delivery_id, o.state) for o in OUTCOMES if o.state == "failed"] == [(poison, "failed")]


def test_a_failure_outside_the_per_message_guard_is_retried_one_message_at_a_time(project, other_project):
    """The hold check runs once for a whole group: when it fails, the group goes again
    message by message, so only the one that makes it fail is charged."""
    make_connector(project, delivered_rate=0)
    make_connector(other_project, delivered_rate=0)
    HOOKS["hold"] = KeyError("campaign")
    (poison,) = enqueue(project, [POISON])
    good = enqueue(project, ["a@example.com", "b@example.com"]) + enqueue(other_project, ["c@example.com"])
    assert dispatch_batch("normal") == 4
    dead = Delivery.objects.get(pk=poison)
    assert dead.state == "failed" and "KeyError: 'campaign'" in dead.last_error
    assert states(good) == ["sent"] * 3
    assert not Delivery.objects.filter(state="claimed").exists()


def test_a_row_that_kills_its_batch_is_dead_lettered_as_poison_and_never_runs_once_more(project, other_project):
    make_connector(project, delivered_rate=0)
    make_connector(other_project, delivered_rate=0)
    HOOKS["decorate"] = WorkerKilled()
    budget = settings.TIDINGS_POISON_AFTER_CRASHES
    (poison,) = enqueue(project, [POISON])
    good = enqueue(other_project, [f"g{i}@example.com" for i in range(3)])

    kills = 0
    for _ in range(20):
        try:
            if not dispatch_batch("normal"):
                break
        except WorkerKilled:
            kills += 1
            expire_claims()
            sweep()  # what beat does: the stale claim is taken back

    assert HOOKS["decorated"] == budget  # it ran exactly N times, never N + 1
    dead = Delivery.objects.get(pk=poison)
    assert (dead.state, dead.state_reason, dead.crashes) == ("failed", "poison", budget)
    assert dead.last_error.startswith("poison")
    assert DeliveryEvent.objects.filter(delivery=dead, state="failed", reason__startswith="poison").exists()
    assert [(o.delivery_id, o.state, o.reason) for o in OUTCOMES if o.delivery_id == poison] == [
        (poison, "failed", "poison")
    ]
    # The rows that shared its batches were charged with it until their last chance, and
    # then went out alone.
    assert kills == budget and states(good) == ["sent"] * 3
    assert set(Delivery.objects.filter(pk__in=good).values_list("crashes", flat=True)) == {0}
    expire_claims()
    sweep()
    assert dispatch_batch("normal") == 0
    assert HOOKS["decorated"] == budget
    assert not Delivery.objects.filter(state="claimed").exists()

    # A replay after the cause is fixed is a real second chance, with the full crash budget.
    from apps.notifications.dead_letters import dead_letters_replay

    HOOKS.pop("decorate")
    assert dead_letters_replay(project=project, ids=[poison]) == [poison]
    assert Delivery.objects.get(pk=poison).crashes == 0
    dispatch_batch("normal")
    assert states([poison]) == ["sent"]


def test_a_reclaimed_row_at_its_attempt_budget_is_dead_lettered_not_claimed_again(project):
    make_connector(project, delivered_rate=0, response_delay_ms=0)
    (spent,) = enqueue(project, ["spent@example.com"])
    (fresh,) = enqueue(project, ["fresh@example.com"])
    Delivery.objects.filter(pk=spent).update(attempts=4, attempt_budget=5)
    # Both claimed; the worker dies after writing the spent row's fifth attempt, before
    # the fresh row's first one (a crash in rendering, say).
    from apps.delivery.dispatch.claim import claim_batch

    _, rows = claim_batch("normal", limit=10, ttl_seconds=60)
    assert {r.id for r in rows} == {spent, fresh}
    Attempt.objects.create(project=project, delivery_id=spent, number=5, started_at=timezone.now())
    expire_claims()
    sweep()

    dead = Delivery.objects.get(pk=spent)
    assert (dead.state, dead.attempts) == ("failed", 5)
    assert dead.state_reason.startswith("exhausted 5 attempts") and "claim expired" in dead.last_error
    assert Attempt.objects.get(delivery_id=spent).outcome == "lost"
    back = Delivery.objects.get(pk=fresh)
    # No attempt reached the provider for it: none is counted.
    assert (back.state, back.attempts, back.crashes) == ("retrying", 0, 1)
    assert dispatch_batch("normal") == 1
    assert Delivery.objects.get(pk=fresh).state == "sent"
    assert Delivery.objects.get(pk=fresh).attempts == 1
    assert Delivery.objects.get(pk=spent).attempts == 5


def test_a_message_the_adapter_cannot_take_is_retried_alone_and_its_batch_goes_out_once(project, other_project):
    make_connector(project, delivered_rate=0, record_sends=True)
    make_connector(other_project, delivered_rate=0)
    # Headers that are no mapping: the email payload cannot be built, and the adapter
    # fails the whole call it is in.
    (poison,) = deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest("email", POISON, "normal", "bad-headers", KIND, "o1", content={"text": "t", "headers": 5})
        ],
    )
    good = enqueue(project, [f"g{i}@example.com" for i in range(5)]) + enqueue(other_project, ["c@example.com"])
    assert dispatch_batch("normal") == 7
    assert states(good) == ["sent"] * 6
    back = Delivery.objects.get(pk=poison)
    assert back.state == "retrying" and back.attempts == 1
    assert back.last_error.startswith("adapter_error: TypeError")
    assert Attempt.objects.get(delivery_id=poison).outcome == "retryable"
    requests = dryrun_request_counts(project.pk)
    assert sorted(requests.values()) == [1] * 5, "a message of the batch went to the provider twice"


def test_only_origins_that_show_messages_as_sent_keep_their_content(project):
    """A journey's path shows what went out; a campaign or a plain notification keeps no copy."""
    from apps.delivery.models import SentContent
    from apps.delivery.origins import origin_keeps_sent_content

    make_connector(project, delivered_rate=0)
    assert origin_keeps_sent_content("journey_step") and not origin_keeps_sent_content("campaign")
    ids = enqueue(project, ["plain@example.com"])
    dispatch_batch("normal")
    assert states(ids) == ["sent"]
    assert not SentContent.objects.filter(delivery_id__in=ids).exists()
