"""The Celery application: workers, beat, and the queues they listen to."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("tidings")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
