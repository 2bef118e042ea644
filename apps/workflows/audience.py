"""Who an execution is for: an audience resolved once, then read in id order by expansion.

The console's confirm step counts the same rows that expansion walks, so the number shown
before starting is the number of subscribers the execution will try to enter.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from apps.core.errors import ApplicationError, NotFound
from apps.projects.models import Project

AUDIENCE_KINDS = ("external_ids", "segment", "tag", "everyone")
MAX_EXTERNAL_IDS = 10_000


def audience_resolve(project: Project, audience: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Check an audience against the project: the resolved form and the unknown external ids.

    A segment or tag of another project is a NotFound, like any other project's row.
    """
    from apps.subscribers.models import Segment, Subscriber, Tag

    kinds = [kind for kind in AUDIENCE_KINDS if audience.get(kind) not in (None, False, [], "")]
    if len(kinds) != 1:
        raise ApplicationError(
            "Give exactly one audience: external_ids, segment, tag or everyone.",
            code="invalid_audience",
            field="audience",
        )
    kind = kinds[0]
    if kind == "external_ids":
        wanted = list(dict.fromkeys(str(x) for x in audience["external_ids"]))
        if len(wanted) > MAX_EXTERNAL_IDS:
            raise ApplicationError(
                f"At most {MAX_EXTERNAL_IDS} external ids per execution; use a segment or tag for more.",
                code="too_many_external_ids",
                field="external_ids",
            )
        rows = Subscriber.objects.for_project(project).filter(external_id__in=wanted, erased_at__isnull=True)
        found: dict[str, int] = {}
        for external_id, pk, merged_into in rows.values_list("external_id", "pk", "merged_into_id"):
            # A merged-away subscriber continues as the one it was merged into.
            found[external_id] = merged_into or pk
        unknown = [x for x in wanted if x not in found]
        return {"kind": kind, "external_ids": wanted, "subscriber_ids": sorted(set(found.values()))}, unknown
    if kind == "segment":
        if not Segment.objects.for_project(project).filter(pk=audience["segment"]).exists():
            raise NotFound(f"Segment {audience['segment']} does not exist in this project.", field="segment")
        return {"kind": kind, "segment_id": int(audience["segment"])}, []
    if kind == "tag":
        if not Tag.objects.for_project(project).filter(name=audience["tag"]).exists():
            raise NotFound(f"Tag {audience['tag']!r} does not exist in this project.", field="tag")
        return {"kind": kind, "tag": str(audience["tag"])}, []
    return {"kind": "everyone"}, []


def audience_rows(project_id: int, resolved: dict[str, Any]) -> tuple[QuerySet[Any], str]:
    """The rows a resolved (non external-id) audience expands from, and their subscriber column."""
    from apps.subscribers.models import SegmentMembership, Subscriber, SubscriberTag

    kind = resolved["kind"]
    if kind == "segment":
        members = SegmentMembership.objects.filter(project_id=project_id, segment_id=resolved["segment_id"])
        return members, "subscriber_id"
    if kind == "tag":
        return SubscriberTag.objects.filter(project_id=project_id, tag__name=resolved["tag"]), "subscriber_id"
    return Subscriber.objects.filter(project_id=project_id, merged_into__isnull=True, erased_at__isnull=True), "id"


def audience_size(project: Project, resolved: dict[str, Any]) -> int:
    """How many subscribers expansion will try to enter (those already in the workflow included)."""
    if resolved["kind"] == "external_ids":
        return len(resolved["subscriber_ids"])
    rows, _column = audience_rows(project.pk, resolved)
    return rows.count()
