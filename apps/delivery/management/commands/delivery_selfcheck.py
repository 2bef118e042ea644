"""Send a few dry-run emails through the real delivery path and print where they ended.

    python manage.py delivery_selfcheck               # enqueue, dispatch here, print JSON
    python manage.py delivery_selfcheck --wait 30     # enqueue, let the running workers send

Works on whatever database and Redis the settings name, ``make run``'s embedded servers
included. Enqueues ``--count`` deliveries for the demo project on a dry-run
connector that records every real send, then either runs dispatch cycles in this process
or waits for the workers (``run_all``), and prints each delivery's state and how many times
the simulated provider really sent it. Exits 1 unless every delivery was sent exactly once.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection

from apps.delivery.channels.dryrun import dryrun_sent_counts
from apps.delivery.demo import seed_demo
from apps.delivery.dispatch import dispatch_batch
from apps.delivery.models import Connector, Delivery
from apps.delivery.services import DeliveryRequest, deliveries_enqueue
from apps.projects.models import Organization, Project

CONNECTOR_NAME = "Self-check (dry run, records sends)"
FINAL = {"sent", "failed", "suppressed", "opted_out", "cancelled"}


def _project() -> Project:
    from apps.console.management.commands.demo import DEMO_ORG, DEMO_PROJECT

    org, _ = Organization.objects.get_or_create(slug=DEMO_ORG[1], defaults={"name": DEMO_ORG[0]})
    project, _ = Project.objects.get_or_create(
        organization=org, slug=DEMO_PROJECT[1], defaults={"name": DEMO_PROJECT[0], "timezone": DEMO_PROJECT[2]}
    )
    seed_demo(project)
    return project


def _connector(project: Project) -> Connector:
    connector = Connector.objects.for_project(project).filter(channel="email", name=CONNECTOR_NAME).first()
    if connector is None:
        connector = Connector(
            project=project,
            channel="email",
            provider="dryrun",
            name=CONNECTOR_NAME,
            # No receipts: the check is about the send path, and exactly-once needs the record.
            settings={"record_sends": True, "delivered_rate": 0.0, "bounce_rate": 0.0, "complaint_rate": 0.0},
        )
        connector.set_credentials({"api_key": "dryrun-selfcheck"})
        connector.save()
    return connector


class Command(BaseCommand):
    help = "Enqueue a few dry-run deliveries, send them (here or via the workers), print their states as JSON."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--count", type=int, default=5)
        parser.add_argument("--lane", default="high", choices=["high", "normal", "bulk"])
        parser.add_argument("--wait", type=float, default=0.0, help="leave sending to the workers; wait this long")

    def handle(self, *args: Any, **options: Any) -> None:
        project = _project()
        connector = _connector(project)
        run = uuid.uuid4().hex[:12]
        requests = [
            DeliveryRequest(
                channel="email",
                destination=f"selfcheck-{i}@example.com",
                lane=options["lane"],
                delivery_key=f"selfcheck:{run}:{i}",
                origin_kind="selfcheck",
                origin_id=run,
                content={"subject": f"Self-check {i}", "text": "Tidings delivery self-check."},
                connector_id=connector.pk,
            )
            for i in range(options["count"])
        ]
        ids = deliveries_enqueue(project=project, requests=requests)
        started = time.monotonic()
        if options["wait"]:
            while time.monotonic() - started < options["wait"]:
                if Delivery.objects.filter(pk__in=ids, state__in=FINAL).count() == len(ids):
                    break
                time.sleep(0.2)
        else:
            # One dispatch cycle in this process: claim → render → send → record, until drained.
            while dispatch_batch(options["lane"]):
                pass
        rows = Delivery.objects.filter(pk__in=ids).order_by("pk").values("id", "delivery_key", "state", "attempts")
        sends = dryrun_sent_counts(project.pk)
        deliveries = [{**row, "sends": sends.get(row["delivery_key"], 0)} for row in rows]
        ok = len(deliveries) == len(ids) and all(d["state"] == "sent" and d["sends"] == 1 for d in deliveries)
        report = {
            "vendor": connection.vendor,
            "seconds": round(time.monotonic() - started, 3),
            "all_sent_once": ok,
            "deliveries": deliveries,
        }
        self.stdout.write(json.dumps(report))
        if not ok:
            raise SystemExit(1)
