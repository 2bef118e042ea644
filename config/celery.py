"""The Celery application: workers, beat, and the queues they listen to."""

from __future__ import annotations

import gc
import os
from typing import Any

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("tidings")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# A dispatcher batch allocates hundreds of thousands of short-lived objects (rendered
# content, Anymail payloads, result rows). With the default first-generation threshold
# (700) the cyclic collector runs thousands of times a batch and each full pass walks every
# module, model and compiled template loaded at start-up. Those are frozen (never scanned
# again, and shared copy-on-write with the prefork parent) and the collector runs less often.
GC_THRESHOLDS = (50_000, 20, 20)


def gc_tune() -> None:
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


@worker_process_init.connect
def _gc_tune_worker(**_: Any) -> None:
    gc_tune()
