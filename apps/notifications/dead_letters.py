"""Dead letters: deliveries that exhausted their attempts or failed permanently.

Listing and replaying them is the operator's side of the ledger. Replay puts a dead
letter back in its lane with a fresh attempt budget; the delivery keeps its key, so a
provider that did receive an earlier attempt still sees the same idempotency key.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from apps.core.errors import Conflict, NotFound
from apps.delivery.models import Delivery, DeliveryEvent
from apps.delivery.wake import wake_on_commit
from apps.projects.models import Project

DEAD = Delivery.State.FAILED
REPLAY_REASON = "replayed from dead letter"


def dead_letter_search(
    project: Project,
    *,
    channel: str = "",
    origin_kind: str = "",
    error_contains: str = "",
    failed_after: datetime | None = None,
    failed_before: datetime | None = None,
    **_: Any,
) -> QuerySet[Delivery]:
    letters = Delivery.objects.for_project(project).filter(state=DEAD).order_by("-id")
    if channel:
        letters = letters.filter(channel=channel)
    if origin_kind:
        letters = letters.filter(origin_kind=origin_kind)
    if error_contains:
        letters = letters.filter(last_error__icontains=error_contains)
    if failed_after:
        letters = letters.filter(updated_at__gte=failed_after)
    if failed_before:
        letters = letters.filter(updated_at__lt=failed_before)
    return letters


def dead_letters_replay(
    *, project: Project, ids: list[int] | None = None, limit: int = 1000, **filters: Any
) -> list[int]:
    """Requeue dead letters by id (all must be dead) or by filter; returns the ids requeued."""
    with transaction.atomic():
        if ids:
            wanted = list(dict.fromkeys(ids))
            rows = list(Delivery.objects.for_project(project).filter(pk__in=wanted).select_for_update())
            found = {d.pk: d for d in rows}
            missing = [i for i in wanted if i not in found]
            if missing:
                raise NotFound(f"There is no delivery {missing[0]} in this project.", field="ids")
            alive = [found[i] for i in wanted if found[i].state != DEAD]
            if alive:
                first = alive[0]
                raise Conflict(
                    f"Delivery {first.pk} is {first.state}, not a dead letter: only failed deliveries can be replayed.",
                    code="not_dead_letter",
                    field="ids",
                    extra={"not_dead": [{"id": d.pk, "state": d.state} for d in alive]},
                )
        else:
            rows = list(dead_letter_search(project, **filters).select_for_update(skip_locked=True)[:limit])
        if not rows:
            return []
        now = timezone.now()
        row_ids = [d.pk for d in rows]
        Delivery.objects.filter(pk__in=row_ids, state=DEAD).update(
            state=Delivery.State.QUEUED,
            state_reason=REPLAY_REASON,
            due_at=now,
            claimed_until=None,
            claim_token=None,
            # A fresh budget on top of what was spent, so attempt numbers keep counting up.
            attempt_budget=F("attempts") + F("attempt_budget"),
            # A replay is a deliberate second chance: the crash budget starts over too.
            crashes=0,
            updated_at=now,
        )
        DeliveryEvent.objects.bulk_create(
            [
                DeliveryEvent(
                    project_id=project.pk,
                    delivery_id=d.pk,
                    channel=d.channel,
                    state="queued",
                    reason=REPLAY_REASON,
                    at=now,
                )
                for d in rows
            ]
        )
        wake_on_commit({d.lane for d in rows})
    return row_ids
