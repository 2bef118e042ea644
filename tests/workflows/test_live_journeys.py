"""Journeys end to end through real Celery workers, Postgres, Redis and dry-run adapters."""

from __future__ import annotations

import time

import pytest

from apps.delivery.models import Delivery
from apps.subscribers.models import TagEvent
from apps.workflows.models import Execution, Journey, Step
from apps.workflows.services import execution_start
from tests.fixtures.worker import wait_for
from tests.workflows import live
from tests.workflows.helpers import chain, node, publish


def finished(execution: Execution) -> bool:
    execution.refresh_from_db()
    return execution.state == Execution.State.COMPLETED


def test_email_and_push_journey_runs_end_to_end(project, celery_worker):
    live.connectors(project)
    live.templates(project)
    full = live.people(project, 3, devices=2)
    (no_email,) = live.people(project, 1, email=False, prefix="ne")
    (no_device,) = live.people(project, 1, devices=0, prefix="nd")
    version = publish(project, "welcome", live.send_graph())
    execution = execution_start(project=project, workflow=version.workflow, audience={"everyone": True})
    wait_for(lambda: finished(execution), timeout=180, message=f"execution stuck:\n{celery_worker.log()[-3000:]}")

    assert set(Journey.objects.filter(execution=execution).values_list("state", flat=True)) == {"completed"}
    for person in full:
        mail = Step.objects.get(execution=execution, subscriber=person, node_id="mail")
        push = Step.objects.get(execution=execution, subscriber=person, node_id="push")
        assert (mail.state, mail.outcome) == ("done", "next")
        assert (push.state, push.detail["deliveries"]) == ("done", {"sent": 2})
        # Every targeted device got its own delivery, keyed by the step.
        keys = set(
            Delivery.objects.filter(origin_kind="journey_step", origin_id=str(push.pk)).values_list(
                "delivery_key", flat=True
            )
        )
        assert keys == {f"journey_step:{push.pk}:tok-{person.pk}-{d}" for d in range(2)}
    # No address: the email step fails at once and the journey still moves on.
    mail = Step.objects.get(execution=execution, subscriber=no_email, node_id="mail")
    assert (mail.state, mail.outcome) == ("failed", "no_email_address")
    assert Step.objects.filter(execution=execution, subscriber=no_email, node_id="end", state="done").exists()
    # No device token: a permanent error, the push step fails without waiting.
    push = Step.objects.get(execution=execution, subscriber=no_device, node_id="push")
    assert (push.state, push.outcome, push.waited) == ("failed", "no_device_token", False)


def test_finally_failed_email_still_moves_the_journey_on(project, celery_worker):
    live.connectors(project, email={"permanent_rate": 1.0})
    live.templates(project)
    live.people(project, 1)
    version = publish(project, "bounce", live.send_graph())
    execution = execution_start(project=project, workflow=version.workflow, audience={"everyone": True})
    wait_for(lambda: finished(execution), timeout=180, message=f"execution stuck:\n{celery_worker.log()[-3000:]}")
    mail = Step.objects.get(execution=execution, node_id="mail")
    assert (mail.state, mail.outcome) == ("failed", "delivery_failed")
    assert Step.objects.get(execution=execution, node_id="push").state == "done"
    assert Journey.objects.get(execution=execution).state == "completed"
    assert Delivery.objects.get(origin_id=str(mail.pk)).state == "failed"


def test_worker_killed_mid_batch_leaves_nobody_stuck_or_advanced_twice(project, start_worker, monkeypatch):
    # Claims of the killed worker expire after 3 s; the next runner releases them.
    monkeypatch.setenv("WORKFLOWS_CLAIM_SECONDS", "3")
    count = 4000
    live.people(project, count, devices=0)
    graph = chain(
        node("start", "start"),
        node("tag", "add_tag", tags=["once"]),
        node("tag2", "add_tag", tags=["twice"]),
        node("end", "end"),
    )
    version = publish(project, "crash", graph)
    victim = start_worker(["journeys"], concurrency=1)
    execution = execution_start(project=project, workflow=version.workflow, audience={"everyone": True})
    wait_for(
        lambda: Step.objects.filter(execution=execution, node_id="end").exists(),
        timeout=120,
        interval=0.02,
        message="the runner never got going",
    )
    # Freeze the worker, look, and kill it only while it holds running steps: between a
    # look and a plain kill a busy worker may finish its batch.
    deadline = time.monotonic() + 60
    stranded = 0
    while not stranded and time.monotonic() < deadline:
        victim.freeze()
        stranded = Step.objects.filter(execution=execution, state="running").count()
        if not stranded:
            victim.thaw()
            time.sleep(0.005)
    victim.kill()
    assert stranded > 0, "the kill never landed mid-batch"
    assert Journey.objects.filter(execution=execution, state="completed").count() < count

    survivor = start_worker(["journeys"], concurrency=1)
    from apps.workflows.tasks import expand_execution, wake_runners

    # The sweep (beat) would do this every minute; the test does not wait for it.
    expand_execution.apply_async((project.pk, execution.pk), queue="journeys")
    time.sleep(3.5)
    wake_runners()
    wait_for(lambda: finished(execution), timeout=240, message=f"execution stuck:\n{survivor.log()[-3000:]}")

    assert Journey.objects.filter(execution=execution).count() == count
    assert set(Journey.objects.filter(execution=execution).values_list("state", flat=True)) == {"completed"}
    per_node = Step.objects.filter(execution=execution).values_list("journey_id", "node_id")
    assert len(per_node) == len(set(per_node)) == count * 4
    assert TagEvent.objects.filter(project=project, tag_name="once").count() == count
    assert TagEvent.objects.filter(project=project, tag_name="twice").count() == count


pytestmark = pytest.mark.django_db(transaction=True)


def test_a_push_to_a_device_token_longer_than_the_key_column_is_sent_once_even_when_the_step_runs_again(
    project, celery_worker
):
    from django.db import transaction
    from django.utils import timezone

    from apps.delivery.models import Attempt
    from apps.subscribers.models import Device
    from apps.workflows.context import BatchContext
    from apps.workflows.nodes.base import NodeBatch, StepRef, node_types

    live.connectors(project)
    live.templates(project)
    (person,) = live.people(project, 1, email=False, devices=0, prefix="long")
    token = "apns-" + "0123456789abcdef" * 187 + "ff"  # 3,000 characters: a device token may hold 4,096
    Device.objects.create(project=project, subscriber=person, platform="ios", token=token)
    graph = chain(node("start", "start"), node("push", "push", template="welcome-push"), node("end", "end"))
    version = publish(project, "long-token", graph)
    execution = execution_start(project=project, workflow=version.workflow, audience={"everyone": True})
    wait_for(lambda: finished(execution), timeout=180, message=f"execution stuck:\n{celery_worker.log()[-3000:]}")

    push = Step.objects.get(execution=execution, subscriber=person, node_id="push")
    assert (push.state, push.detail["deliveries"]) == ("done", {"sent": 1})
    delivery = Delivery.objects.get(origin_kind="journey_step", origin_id=str(push.pk))
    assert delivery.destination == token and len(delivery.delivery_key) <= 255

    # The same step sending again (a retried batch) finds its delivery by the same key.
    step = StepRef(id=push.pk, journey_id=push.journey_id, subscriber_id=person.pk, execution_id=execution.pk)
    ctx = BatchContext(project=project, now=timezone.now(), subscriber_ids=[person.pk])
    with transaction.atomic():
        node_types.get("push").execute(
            NodeBatch(node_id="push", config={"template": "welcome-push"}, steps=[step], ctx=ctx)
        )
    assert Delivery.objects.filter(project=project, channel="push").count() == 1
    assert Attempt.objects.filter(delivery_id=delivery.pk).count() == 1
