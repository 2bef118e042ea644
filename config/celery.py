"""The Celery application: workers, beat, and the queues they listen to."""

from __future__ import annotations

import gc
import logging
import os
from typing import Any

from celery import Celery
from celery.app import trace
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


class QuietControlLoops(logging.Filter):
    """Drop the worker's INFO lines ("received", "succeeded") for the tasks beat sends every
    few seconds, which otherwise fill the terminal while nothing happens. Their retries,
    warnings and errors still show, and so does every line of other work."""

    _names: frozenset[str] | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg not in (trace.LOG_RECEIVED, trace.LOG_SUCCESS) or not isinstance(record.args, dict):
            return True
        if QuietControlLoops._names is None:
            from django.conf import settings

            QuietControlLoops._names = frozenset(entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values())
        return record.args.get("name") not in QuietControlLoops._names


for _logger in ("celery.worker.strategy", "celery.app.trace"):
    logging.getLogger(_logger).addFilter(QuietControlLoops())


@worker_process_init.connect
def _gc_tune_worker(**_: Any) -> None:
    gc_tune()
