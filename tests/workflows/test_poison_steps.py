"""One bad step fails alone: its batch, and other projects' steps in it, go on."""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest
from django.db import connection

from apps.projects.models import Project
from apps.workflows.engine import steps_run_batch, version_graph
from apps.workflows.models import Journey, Step, WorkflowVersion
from apps.workflows.step_faults import steps_release_expired
from tests.fixtures.worker import BASE_DIR, WorkerProcess, wait_for
from tests.workflows.helpers import chain, node, publish, start_and_expand, subscribers
from tests.workflows.live import connectors, people, templates


def _tag_journeys(project: Project, count: int, prefix: str = "g") -> None:
    subscribers(project, count, prefix=prefix)
    graph = chain(node("start", "start"), node("mark", "add_tag", tags=["seen"]), node("end", "end"))
    start_and_expand(project, publish(project, f"tags-{prefix}", graph))


def _journey_states(project: Project) -> list[str]:
    return sorted(Journey.objects.filter(project=project).values_list("state", flat=True))


@pytest.mark.django_db
def test_a_step_whose_node_raises_fails_alone_and_the_batch_goes_on(project, other_project):
    # The ledger refuses this one subscriber's delivery (a check constraint, for this
    # test's transaction only), so enqueueing raises for them; the push node sends for
    # every subscriber of the batch at once.
    from apps.delivery.models import Delivery

    with connection.cursor() as cursor:
        cursor.execute(
            f"ALTER TABLE {Delivery._meta.db_table} ADD CONSTRAINT test_refused_destination "
            "CHECK (destination <> 'token-the-ledger-refuses') NOT VALID"
        )
    connectors(project)
    templates(project)
    good = people(project, 3)
    (bad,) = people(project, 1, prefix="bad", devices=0)
    bad.devices.create(project=project, platform="android", token="token-the-ledger-refuses")
    graph = chain(node("start", "start"), node("push", "push", template="welcome-push"), node("end", "end"))
    start_and_expand(project, publish(project, "push", graph))
    _tag_journeys(other_project, 3)

    steps_run_batch()

    step = Step.objects.get(subscriber=bad, node_id="push")
    assert step.state == "failed"
    assert step.detail["error"].startswith("IntegrityError: new row for relation")
    assert step.outcome == step.detail["error"][:64]
    journey = Journey.objects.get(subscriber=bad)
    assert journey.state == "failed" and journey.stop_reason.startswith("IntegrityError")
    sent = Step.objects.filter(subscriber__in=good, node_id="push")
    assert sorted(sent.values_list("state", "outcome")) == [("waiting", "awaiting_delivery")] * 3

    assert Delivery.objects.filter(project=project).count() == 3
    assert _journey_states(other_project) == ["completed"] * 3
    assert not Step.objects.filter(state="running").exists()


@pytest.mark.django_db
def test_a_node_config_that_cannot_be_read_fails_its_steps_not_another_projects(project, other_project):
    # A stored version the condition node cannot read (a predicate without its tag).
    from apps.subscribers.models import Tag

    Tag.objects.create(project=project, name="vip")
    subscribers(project, 2)
    graph = chain(
        node("start", "start"),
        node("check", "condition", predicates=[{"op": "has_tag", "tag": "vip"}]),
        node("end", "end"),
    )
    graph["edges"] = [
        {"from": "start", "handle": "next", "to": "check"},
        {"from": "check", "handle": "yes", "to": "end"},
        {"from": "check", "handle": "no", "to": "end"},
    ]
    version = publish(project, "broken", graph)
    graph["nodes"][1]["config"] = {"predicates": [{"op": "has_tag"}]}
    WorkflowVersion.objects.filter(pk=version.pk).update(graph=graph)
    version_graph.cache_clear()
    start_and_expand(project, version)
    _tag_journeys(other_project, 3)

    steps_run_batch()

    failed = Step.objects.filter(project=project, node_id="check")
    assert sorted(failed.values_list("state", "outcome")) == [("failed", "KeyError: 'tag'")] * 2
    assert _journey_states(project) == ["failed"] * 2
    assert _journey_states(other_project) == ["completed"] * 3
    assert not Step.objects.filter(state="running").exists()


def _dsn() -> str:
    db = connection.settings_dict
    return f"postgresql://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_a_failure_outside_the_nodes_is_retried_for_its_step_only(project, other_project):
    # Another transaction holds one journey (a console action that hangs): locking the
    # batch's journeys times out, which fails the whole batch, not a node.
    _tag_journeys(project, 3)
    _tag_journeys(other_project, 3, prefix="o")
    held = Journey.objects.filter(project=project).order_by("pk")[1]
    with psycopg.connect(_dsn()) as holder, connection.cursor() as cursor:
        holder.execute("SELECT id FROM workflows_journey WHERE id = %s FOR UPDATE", [held.pk])
        cursor.execute("SET lock_timeout = '300ms'")
        try:
            steps_run_batch()
        finally:
            cursor.execute("RESET lock_timeout")
        holder.rollback()

    step = Step.objects.get(journey=held)
    assert (step.state, step.outcome, step.attempts, step.claim_token) == ("pending", "retry", 1, None)
    assert step.detail["error"].startswith("OperationalError: canceling statement due to lock timeout")
    assert (
        sorted(Journey.objects.filter(project=project).exclude(pk=held.pk).values_list("state", flat=True))
        == ["completed"] * 2
    )
    assert _journey_states(other_project) == ["completed"] * 3
    assert not Step.objects.filter(state="running").exists()


# The engine's own loop, in a process of its own that the test can kill.
RUNNER = (
    "import django; django.setup()\nfrom apps.workflows.engine import steps_run_batch\nwhile steps_run_batch(): pass\n"
)


def _runner() -> subprocess.Popen:
    # A backend checks that its client is still there while it waits on a lock, as
    # production should: otherwise a killed runner's transaction holds its rows meanwhile.
    env = {**WorkerProcess([], "runner").env(), "PGOPTIONS": "-c client_connection_check_interval=200"}
    return subprocess.Popen([sys.executable, "-c", RUNNER], cwd=BASE_DIR, env=env, stderr=subprocess.PIPE)


def _blocked_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def _expire_claims() -> None:
    # As if WORKFLOWS_CLAIM_SECONDS had passed since the runner died.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE workflows_step SET claimed_until = now() - interval '1 second' WHERE state = 'running'")


@pytest.mark.django_db(transaction=True)
def test_a_step_that_kills_its_runner_ends_as_poison_after_the_crash_budget(project, other_project, settings):
    # The step's journey is held by a transaction that never ends, so every runner that
    # takes the step hangs on it and is killed, as a runner stuck on one bad row would be.
    settings.TIDINGS_POISON_AFTER_CRASHES = 3
    _tag_journeys(project, 3)
    _tag_journeys(other_project, 3, prefix="o")
    held = Journey.objects.filter(project=project).order_by("pk")[1]
    poison = Step.objects.get(journey=held)
    holder = psycopg.connect(_dsn())
    try:
        holder.execute("SELECT id FROM workflows_journey WHERE id = %s FOR UPDATE", [held.pk])
        for crash in range(1, 4):
            runner = _runner()
            try:
                wait_for(_blocked_on_a_lock, timeout=60, message=f"runner {crash} never reached the held journey")
            finally:
                runner.kill()
                runner.wait(timeout=10)
            # The killed runner's backend notices its client is gone and rolls back.
            wait_for(lambda: not _blocked_on_a_lock(), timeout=30, message="the killed runner's backend lingers")
            if crash == 3:
                holder.rollback()
            _expire_claims()
            steps_release_expired()
            poison.refresh_from_db()
            assert (poison.attempts, poison.crashes) == (crash, crash)
            # A good step is charged for the claims it shared with the bad one, but one crash
            # short of the budget it runs alone: it is never charged up to the budget.
            assert max(Step.objects.exclude(pk=poison.pk).values_list("crashes", flat=True)) <= 2
    finally:
        holder.close()

    assert (poison.state, poison.outcome) == ("failed", "poison")
    assert poison.detail["error"] == "poison: its batch crashed 3 times before the step finished"
    held.refresh_from_db()
    assert (held.state, held.stop_reason) == ("failed", "poison")

    runner = _runner()
    _, errors = runner.communicate(timeout=120)
    assert runner.returncode == 0, errors.decode()[-3000:]
    poison.refresh_from_db()
    assert (poison.state, poison.attempts) == ("failed", 3)
    assert not Step.objects.filter(journey=held, node_id="mark").exists()
    assert sorted(Journey.objects.exclude(pk=held.pk).values_list("state", flat=True)) == ["completed"] * 5
    assert set(Step.objects.exclude(pk=poison.pk).values_list("crashes", flat=True)) == {0}
    assert not Step.objects.filter(state="running").exists()
