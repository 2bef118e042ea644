"""What a batch of steps may load or do, each in one query for the whole batch.

Nodes never query per subscriber: they ask the context, which loads for every subscriber
in the batch at once and caches until something (a tag node) changes the data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db import connection

from apps.core.dbcompat import int_array
from apps.core.time import is_valid_timezone
from apps.projects.models import Project


@dataclass(frozen=True)
class SubscriberInfo:
    id: int
    external_id: str | None
    email: str
    phone: str
    timezone: str
    attributes: dict[str, Any]
    live: bool = True


@dataclass
class BatchContext:
    project: Project
    now: datetime
    subscriber_ids: list[int]
    _subscribers: dict[int, SubscriberInfo] | None = None
    _tags: dict[int, set[str]] = field(default_factory=dict)
    _devices: dict[int, list[Any]] | None = None
    _templates: dict[tuple[str, str], int | None] = field(default_factory=dict)
    # (journey, node, outcome) finished earlier in this batch but not yet written.
    finished: set[tuple[int, str, str]] = field(default_factory=set)

    def alone(self, subscriber_id: int) -> BatchContext:
        """A context for one subscriber of this batch, to run a step on its own: it loads
        nothing of the other subscribers, and shares what the batch has finished so far."""
        return BatchContext(project=self.project, now=self.now, subscriber_ids=[subscriber_id], finished=self.finished)

    def forget_tags(self) -> None:
        self._tags.clear()

    # --- the journey so far ------------------------------------------------------------
    def passed(self, journey_ids: set[int], node_id: str, outcome: str) -> set[int]:
        """Journeys that already left ``node_id`` by ``outcome`` (in the database or this batch)."""
        from apps.workflows.models import Step

        found = {j for (j, n, o) in self.finished if n == node_id and o == outcome and j in journey_ids}
        found |= set(
            Step.objects.filter(
                project=self.project,
                journey_id__in=journey_ids,
                node_id=node_id,
                state=Step.State.DONE,
                outcome=outcome,
            ).values_list("journey_id", flat=True)
        )
        return found

    # --- subscribers -------------------------------------------------------------------
    def subscriber(self, subscriber_id: int) -> SubscriberInfo | None:
        if self._subscribers is None:
            from apps.subscribers.models import Subscriber

            rows = Subscriber.objects.for_project(self.project).filter(pk__in=self.subscriber_ids)
            self._subscribers = {
                row[0]: SubscriberInfo(*row[:6], live=row[6] is None and row[7] is None)
                for row in rows.values_list(
                    "id", "external_id", "email", "phone", "timezone", "attributes", "merged_into_id", "erased_at"
                )
            }
        return self._subscribers.get(subscriber_id)

    def is_live(self, subscriber_id: int) -> bool:
        """False once merged away or erased: such a subscriber can no longer be changed."""
        info = self.subscriber(subscriber_id)
        return bool(info and info.live)

    def timezone_for(self, subscriber_id: int) -> ZoneInfo | None:
        """The subscriber's timezone, else the project's, else None."""
        info = self.subscriber(subscriber_id)
        return resolve_timezone(info.timezone if info else "", self.project.timezone)

    # --- tags --------------------------------------------------------------------------
    def tags(self, subscriber_ids: Iterable[int]) -> dict[int, set[str]]:
        ids = list(subscriber_ids)
        missing = [i for i in ids if i not in self._tags]
        if missing:
            loaded = _tag_names(self.project, missing)
            for i in missing:
                self._tags[i] = set(loaded.get(i, set()))
        return {i: self._tags[i] for i in ids}

    def change_tags(self, changes: list[tuple[int, list[str], list[str]]], source_ref: str) -> None:
        if not changes:
            return
        from apps.subscribers.services import tags_change_bulk

        tags_change_bulk(project=self.project, changes=changes, source="workflow", source_ref=source_ref)
        # Later nodes in this batch must read the state these changes made.
        for subscriber_id, _, _ in changes:
            self._tags.pop(subscriber_id, None)

    def segments(self, subscriber_ids: Iterable[int]) -> dict[int, set[int]]:
        """Segment ids each subscriber belongs to (materialised membership, current)."""
        from apps.subscribers.models import SegmentMembership

        ids = list(subscriber_ids)
        result: dict[int, set[int]] = {i: set() for i in ids}
        rows = SegmentMembership.objects.filter(project=self.project, subscriber_id__in=ids)
        for subscriber_id, segment_id in rows.values_list("subscriber_id", "segment_id"):
            result[subscriber_id].add(segment_id)
        return result

    # --- devices -----------------------------------------------------------------------
    def devices(self, subscriber_id: int) -> list[Any]:
        if self._devices is None:
            from apps.subscribers.selectors import active_devices

            self._devices = active_devices(self.project, self.subscriber_ids)
        return self._devices.get(subscriber_id, [])

    # --- delivery ----------------------------------------------------------------------
    def template_version_id(self, key: str, channel: str) -> int | None:
        """The latest published version of the project's template ``key`` on ``channel``."""
        if (key, channel) not in self._templates:
            from apps.delivery.models import TemplateVersion

            version = (
                TemplateVersion.objects.filter(
                    template__project=self.project,
                    template__key=key,
                    template__channel=channel,
                    published_at__isnull=False,
                )
                .order_by("-number")
                .values_list("id", flat=True)
                .first()
            )
            self._templates[(key, channel)] = version
        return self._templates[(key, channel)]

    def enqueue(self, requests: list[Any]) -> list[int]:
        if not requests:
            return []
        from apps.delivery.services import deliveries_enqueue

        return deliveries_enqueue(project=self.project, requests=requests)

    def delivery_states(self, step_ids: list[int]) -> dict[int, list[str]]:
        """Current states of the deliveries each send step made."""
        result: dict[int, list[str]] = {i: [] for i in step_ids}
        for origin_id, state in _delivery_states(self.project.pk, step_ids):
            result.setdefault(int(origin_id), []).append(state)
        return result


# Driven by the step ids, one probe of the origin index each. With statistics taken before
# the journeys' deliveries existed, the planner reads "the project's journey deliveries" as
# one row: a plain "origin_id IN (...)" (or a join it may flatten) then walks every delivery
# of the project per batch, about a second at 200,000. OFFSET 0 keeps the lateral subquery
# as it is written, so each id is its own index probe whatever the statistics say.
DELIVERY_STATES_SQL = """
SELECT d.origin_id, d.state
FROM unnest(%s::text[]) AS o(origin_id)
CROSS JOIN LATERAL (
    SELECT origin_id, state FROM delivery_delivery
    WHERE project_id = %s AND origin_kind = 'journey_step' AND origin_id = o.origin_id
    OFFSET 0
) d
"""


def _delivery_states(project_id: int, step_ids: list[int]) -> list[tuple[str, str]]:
    if not step_ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(DELIVERY_STATES_SQL, [int_array(step_ids), project_id])
        return cursor.fetchall()


def resolve_timezone(subscriber_tz: str, project_tz: str) -> ZoneInfo | None:
    for name in (subscriber_tz, project_tz):
        if name and is_valid_timezone(name):
            return ZoneInfo(name)
    return None


def _tag_names(project: Project, subscriber_ids: list[int]) -> dict[int, set[str]]:
    from apps.subscribers.selectors import subscriber_tag_names

    return subscriber_tag_names(project, subscriber_ids)
