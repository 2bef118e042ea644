"""Scheduled publishing: Wagtail keeps go-live and expiry times; beat makes them happen."""

from __future__ import annotations

from celery import shared_task
from django.core.management import call_command


@shared_task(name="cms.publish_scheduled", ignore_result=True)
def publish_scheduled() -> None:
    # Wagtail's command publishes every revision whose go-live time has passed and
    # unpublishes expired pages; running it again finds nothing left to do.
    call_command("publish_scheduled")
