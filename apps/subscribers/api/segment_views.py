"""Segments over HTTP."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.query import query_data
from apps.governance.api.docs import described
from apps.governance.scopes import READ, SUBSCRIBERS_WRITE
from apps.subscribers import selectors
from apps.subscribers.api import serializers as s
from apps.subscribers.api.base import SubscribersAPIView, decode_cursor, page, problems
from apps.subscribers.api.views import valid
from apps.subscribers.services import segment_create, segment_delete, segment_update

ADMIN = {"GET": READ, "POST": SUBSCRIBERS_WRITE, "PATCH": SUBSCRIBERS_WRITE, "DELETE": SUBSCRIBERS_WRITE}


class SegmentListView(SubscribersAPIView):
    required_scopes = ADMIN
    secret_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="segments_list",
        description=described("Every segment of the project with its rules and current member count.", READ),
        tags=["segments"],
        summary="All segments with their member counts",
        responses={200: s.SegmentListOut, **problems(403)},
    )
    def get(self, request: Request) -> Response:
        counts = selectors.segment_counts(self.project)
        return Response(
            {"results": [s.segment_out(g, counts.get(g.pk, 0)) for g in selectors.segment_list(self.project)]}
        )

    @extend_schema(
        operation_id="segment_create",
        description=described(
            "Members are computed on creation and kept current. 409 for a name already taken; 422 for invalid rules.",
            SUBSCRIBERS_WRITE,
            secret_only=True,
        ),
        tags=["segments"],
        summary="Create a segment from rules (secret key); membership is computed at once",
        request=s.SegmentIn,
        responses={201: s.SegmentOut, **problems(403, 409, 422)},
    )
    def post(self, request: Request) -> Response:
        data = valid(s.SegmentIn, request.data)
        segment = segment_create(project=self.project, name=data["name"], rules=data["rules"])
        count = selectors.segment_counts(self.project).get(segment.pk, 0)
        return Response(s.segment_out(segment, count), status=status.HTTP_201_CREATED)


class SegmentDetailView(SubscribersAPIView):
    required_scopes = ADMIN
    secret_methods = frozenset({"PATCH", "DELETE"})

    @extend_schema(
        operation_id="segment_get",
        description=described(
            "The segment's rules and current member count. 404 for a segment of another project.", READ
        ),
        tags=["segments"],
        summary="One segment with its member count",
        responses={200: s.SegmentOut, **problems(403, 404)},
    )
    def get(self, request: Request, segment_id: int) -> Response:
        segment = selectors.segment_get(self.project, segment_id)
        return Response(s.segment_out(segment, selectors.segment_counts(self.project).get(segment.pk, 0)))

    @extend_schema(
        operation_id="segment_update",
        description=described(
            (
                "Changes the name and/or rules; membership is recomputed. 409 for a name already "
                "taken; 422 for invalid rules."
            ),
            SUBSCRIBERS_WRITE,
            secret_only=True,
        ),
        tags=["segments"],
        summary="Rename a segment or change its rules (secret key)",
        request=s.SegmentPatchIn,
        responses={200: s.SegmentOut, **problems(403, 404, 409, 422)},
    )
    def patch(self, request: Request, segment_id: int) -> Response:
        data = valid(s.SegmentPatchIn, request.data)
        segment = selectors.segment_get(self.project, segment_id)
        segment_update(project=self.project, segment=segment, name=data.get("name"), rules=data.get("rules"))
        return self.get(request, segment_id)

    @extend_schema(
        operation_id="segment_delete",
        description=described(
            "Deletes the segment; its members stay. 404 for a segment of another project.",
            SUBSCRIBERS_WRITE,
            secret_only=True,
        ),
        tags=["segments"],
        summary="Delete a segment (secret key)",
        responses={204: None, **problems(403, 404)},
    )
    def delete(self, request: Request, segment_id: int) -> Response:
        segment_delete(project=self.project, segment=selectors.segment_get(self.project, segment_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class SegmentSubscribersView(SubscribersAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="segment_subscribers_list",
        description=described(
            "`next_cursor` fetches the next page. 404 for an unknown segment; 422 for a foreign cursor.", READ
        ),
        tags=["segments"],
        summary="The members of a segment, one cursor page at a time",
        parameters=[s.PageQuery],
        responses={200: s.SegmentMembersPageOut, **problems(403, 404, 422)},
    )
    def get(self, request: Request, segment_id: int) -> Response:
        q = valid(s.PageQuery, query_data(request.query_params))
        segment = selectors.segment_get(self.project, segment_id)
        qs = selectors.subscriber_list(self.project, segment_id=segment.pk, after_id=decode_cursor(q.get("cursor")))
        rows, next_cursor = page(qs, q["limit"])
        return Response({"results": [s.subscriber_out(r) for r in rows], "next_cursor": next_cursor})
