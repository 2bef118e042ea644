"""``GET /health``: database, broker, and how long ago worker and beat were seen."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.core.models import Heartbeat

# Beat sends a heartbeat every 15 s; three missed beats mean something is down.
HEARTBEAT_MAX_AGE_SECONDS = 60


def _check_database() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True, "ok"
    except Exception as exc:  # noqa: BLE001 - any failure means "down", reported by name
        return False, f"{type(exc).__name__}: {exc}"


def _check_broker() -> tuple[bool, str]:
    from config.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        return True, "ok"
    except Exception as exc:  # noqa: BLE001
        return False, f"{type(exc).__name__}: {exc}"


def _heartbeat_ages(db_ok: bool) -> dict[str, float | None]:
    ages: dict[str, float | None] = {"worker": None, "beat": None}
    if not db_ok:
        return ages
    now = timezone.now()
    for beat in Heartbeat.objects.filter(name__in=list(ages)):
        ages[beat.name] = round((now - beat.at).total_seconds(), 1)
    return ages


@require_GET
def health_view(request: HttpRequest) -> JsonResponse:
    db_ok, db_detail = _check_database()
    broker_ok, broker_detail = _check_broker()
    ages = _heartbeat_ages(db_ok)
    down: list[str] = []
    if not db_ok:
        down.append("database")
    if not broker_ok:
        down.append("broker")
    for name, age in ages.items():
        if age is None or age > HEARTBEAT_MAX_AGE_SECONDS:
            down.append(name)
    body = {
        "status": "ok" if not down else "down",
        "down": down,
        "database": db_detail,
        "broker": broker_detail,
        "broker_transport": str(settings.CELERY_BROKER_URL).split("://", 1)[0],
        "worker_heartbeat_age_seconds": ages["worker"],
        "beat_heartbeat_age_seconds": ages["beat"],
        "heartbeat_max_age_seconds": HEARTBEAT_MAX_AGE_SECONDS,
    }
    return JsonResponse(body, status=200 if not down else 503)
