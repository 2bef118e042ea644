"""A recipient or a chunk that breaks fan-out is recorded and skipped; the campaign, and
other projects' campaigns on the same worker, carry on to completion."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from apps.campaigns import lifecycle
from apps.campaigns.fanout import campaign_chunk_fan_out
from apps.campaigns.models import Campaign, CampaignChunk, CampaignEvent, CampaignState
from apps.campaigns.reconcile import campaigns_reap
from apps.campaigns.services import campaign_create
from apps.delivery.models import Connector, Delivery, Template, TemplateVersion
from apps.subscribers.models import Device, Subscriber
from tests.campaigns.conftest import add_subscribers, make_connector, make_template
from tests.campaigns.helpers import rows, run_until, state_of
from tests.fixtures.worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def push_campaign(project: Any, recipients: int, *, bad_at: int) -> tuple[Campaign, Subscriber]:
    """Push to ``recipients`` subscribers with one device each; the device of the
    ``bad_at``-th has the token the ledger refuses (see ``ledger_refuses_one_token``)."""
    template = Template.objects.create(project=project, key="app-news", channel="push", name="App news")
    TemplateVersion.objects.create(
        project=project,
        template=template,
        number=1,
        content={"push": {"title": "News", "body": "Hi {{ subscriber.first_name }}"}},
        published_at=timezone.now(),
    )
    connector = Connector(project=project, channel="push", provider="dryrun", is_default=True, settings={})
    connector.set_credentials({"api_key": "dry-run-key-1234"})
    connector.save()
    add_subscribers(project, recipients)
    people = list(Subscriber.objects.filter(project=project).order_by("pk"))
    Device.objects.bulk_create(
        Device(
            project=project,
            subscriber=person,
            platform="android",
            token=(REFUSED_TOKEN if i == bad_at else f"token-{person.pk}"),
        )
        for i, person in enumerate(people)
    )
    campaign = campaign_create(project=project, name="App news", template=template, connector=connector)
    return campaign, people[bad_at]


def email_campaign(project: Any, recipients: int) -> Campaign:
    template = make_template(project, key=f"promo-{project.pk}")
    add_subscribers(project, recipients, start=100_000)
    return campaign_create(project=project, name="Promo", template=template, connector=make_connector(project))


REFUSED_TOKEN = "token-the-ledger-refuses"


@pytest.fixture
def ledger_refuses_one_token() -> Any:
    """A recipient whose row the database refuses, as a constraint or a type would: a check
    constraint on the ledger, for this test only (the table keeps it across a flush)."""
    table = Delivery._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT test_refused_destination "
            f"CHECK (destination <> '{REFUSED_TOKEN}') NOT VALID"
        )
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT test_refused_destination")


def nothing_claimed(*campaigns: Campaign) -> bool:
    return not any(rows(c).filter(state="claimed").exists() for c in campaigns)


def test_a_recipient_the_ledger_cannot_hold_is_recorded_and_both_projects_campaigns_complete(
    project: Any, other_project: Any, settings: Any, ledger_refuses_one_token: Any, celery_worker: Any
) -> None:
    settings.TIDINGS_CAMPAIGN_CHUNK_SIZE = 16
    poisoned, bad = push_campaign(project, 40, bad_at=21)
    healthy = email_campaign(other_project, 30)
    lifecycle.campaign_start(campaign=poisoned)
    lifecycle.campaign_start(campaign=healthy)

    run_until(
        lambda: state_of(poisoned) == state_of(healthy) == CampaignState.COMPLETED,
        timeout=90,
        message=lambda: f"{state_of(poisoned)}/{state_of(healthy)}\n{celery_worker.log()[-3000:]}",
    )
    assert rows(healthy).count() == 30
    assert set(rows(healthy).values_list("state", flat=True)) <= {"sent", "delivered"}
    assert rows(poisoned).count() == 39
    assert not rows(poisoned).filter(subscriber_id=bad.pk).exists()
    assert set(rows(poisoned).values_list("state", flat=True)) <= {"sent", "delivered"}
    assert nothing_claimed(poisoned, healthy)

    chunk = CampaignChunk.objects.get(campaign=poisoned, lo__lte=bad.pk, hi__gt=bad.pk)
    assert (chunk.done, chunk.failure_reason, chunk.failed_recipients) == (True, "", 1)
    assert chunk.enqueued == 15
    assert chunk.failures[0]["subscriber_id"] == bad.pk
    assert chunk.failures[0]["reason"].startswith("IntegrityError: new row for relation")
    assert CampaignEvent.objects.filter(campaign=poisoned, kind="fanout", message__contains="could not be queued")
    done = CampaignEvent.objects.filter(campaign=poisoned, kind="state", message__startswith="Completed").get()
    assert "1 recipients could not be queued" in done.message


def test_a_chunk_that_stops_its_worker_every_time_is_skipped_as_poison_after_the_budget(
    project: Any, other_project: Any, settings: Any, start_worker: Any, monkeypatch: Any
) -> None:
    settings.TIDINGS_CAMPAIGN_CHUNK_SIZE = 10
    budget = settings.TIDINGS_POISON_AFTER_CRASHES
    template = make_template(project)
    add_subscribers(project, 20)
    stuck = campaign_create(project=project, name="Stuck", template=template, connector=make_connector(project))
    healthy = email_campaign(other_project, 25)
    db = connection.settings_dict
    blocker = psycopg.connect(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"] or "postgres", dbname=db["NAME"]
    )
    try:
        lifecycle.campaign_start(campaign=stuck)
        lifecycle.campaign_start(campaign=healthy)
        # Every fan-out of the stuck campaign waits for this lock and gives up after
        # 200 ms: its chunk dies each time it is claimed, as on a worker that crashes.
        # (NO KEY UPDATE blocks the chunks' FOR SHARE, not the key share events need.)
        blocker.execute("SELECT 1 FROM campaigns_campaign WHERE id = %s FOR NO KEY UPDATE", [stuck.pk])
        monkeypatch.setenv("PGOPTIONS", "-c lock_timeout=200")
        worker = start_worker()
        monkeypatch.delenv("PGOPTIONS")
        deadline = time.monotonic() + 90
        chunks = CampaignChunk.objects.filter(campaign=stuck)
        while time.monotonic() < deadline and chunks.exclude(failure_reason="poison").exists():
            time.sleep(0.3)
        assert not chunks.exclude(failure_reason="poison").exists(), worker.log()[-3000:]
    finally:
        blocker.rollback()
        blocker.close()

    assert list(chunks.values_list("crashes", "done", "enqueued")) == [(budget, True, 0)] * 2
    # A late duplicate of the chunk message (or the reaper) never runs it a budget+1st time.
    for chunk in chunks:
        assert campaign_chunk_fan_out(project_id=project.pk, campaign_id=stuck.pk, chunk_id=chunk.pk) == 0
    assert list(chunks.values_list("crashes", flat=True)) == [budget] * 2

    run_until(
        lambda: state_of(stuck) == state_of(healthy) == CampaignState.COMPLETED,
        timeout=90,
        message=lambda: f"{state_of(stuck)}/{state_of(healthy)}\n{worker.log()[-3000:]}",
    )
    assert rows(stuck).count() == 0
    assert rows(healthy).count() == 25 and nothing_claimed(stuck, healthy)
    skipped = CampaignEvent.objects.filter(campaign=stuck, kind="fanout", message__contains="skipped as poison")
    assert skipped.count() == 2
    done = CampaignEvent.objects.filter(campaign=stuck, kind="state", message__startswith="Completed").get()
    assert "2 fan-out chunks were skipped" in done.message


def lock_waiters(*, terminate: bool = False) -> int:
    """Backends of this test database waiting for a lock (terminated, if asked)."""
    call = "pg_terminate_backend(pid)" if terminate else "pid"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {call} FROM pg_stat_activity"  # noqa: S608
            " WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return len(cursor.fetchall())


def test_a_chunk_whose_worker_is_killed_every_time_is_skipped_as_poison_after_the_budget(
    project: Any, settings: Any, start_worker: Any
) -> None:
    settings.TIDINGS_CAMPAIGN_CHUNK_SIZE = 100
    settings.TIDINGS_CAMPAIGN_CHUNK_TIMEOUT = 0  # the reaper takes a chunk back at once
    budget = settings.TIDINGS_POISON_AFTER_CRASHES
    add_subscribers(project, 20)
    campaign = campaign_create(
        project=project, name="Killed", template=make_template(project), connector=make_connector(project)
    )
    db = connection.settings_dict
    blocker = psycopg.connect(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"] or "postgres", dbname=db["NAME"]
    )
    chunk = None
    try:
        lifecycle.campaign_start(campaign=campaign)
        # The chunk hangs on this lock, mid-run, until its worker is SIGKILLed.
        blocker.execute("SELECT 1 FROM campaigns_campaign WHERE id = %s FOR NO KEY UPDATE", [campaign.pk])
        chunk = CampaignChunk.objects.get(campaign=campaign)
        for crash in range(1, budget + 1):
            worker = start_worker()
            wait_for(
                lambda n=crash: CampaignChunk.objects.get(pk=chunk.pk).crashes == n and lock_waiters(),
                timeout=60,
                message=worker.log()[-3000:],
            )
            worker.kill()
            # A killed client's backend waits on the lock unnoticed; end it as Postgres
            # eventually would, so the chunk's row lock goes with it.
            lock_waiters(terminate=True)
            wait_for(lambda: not lock_waiters(), timeout=20)
            campaigns_reap(now=timezone.now() + timedelta(seconds=1))
        worker = start_worker()
        wait_for(
            lambda: CampaignChunk.objects.get(pk=chunk.pk).failure_reason == "poison",
            timeout=60,
            message=worker.log()[-3000:],
        )
    finally:
        blocker.rollback()
        blocker.close()

    chunk.refresh_from_db()
    assert (chunk.crashes, chunk.done, chunk.enqueued) == (budget, True, 0)
    run_until(lambda: state_of(campaign) == CampaignState.COMPLETED, timeout=60)
    assert rows(campaign).count() == 0
    assert CampaignChunk.objects.get(pk=chunk.pk).crashes == budget
