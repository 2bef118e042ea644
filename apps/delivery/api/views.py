"""Delivery-side API: dead letters and one subscriber's message history."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.errors import NotFound
from apps.core.query import query_data
from apps.delivery.api.output import deliveries_with_history, delivery_dict
from apps.delivery.api.schema import DeadLetterPageOut, ReplayOut, SubscriberMessagesOut, problems
from apps.delivery.api.serializers import DeadLetterListInput, DeadLetterReplayInput
from apps.delivery.models import Delivery
from apps.governance import scopes
from apps.governance.api.base import ProjectAPIView
from apps.governance.api.docs import described
from apps.notifications.dead_letters import dead_letter_search, dead_letters_replay
from apps.subscribers.models import Subscriber
from apps.subscribers.selectors import subscriber_get


class DeadLetterListView(ProjectAPIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="dead_letters_list",
        summary="List dead letters",
        description=described(
            (
                "Deliveries that exhausted their attempts or failed permanently, newest first, with "
                "the payload they were sent with; page with `next_before`."
            ),
            scopes.READ,
        ),
        parameters=[DeadLetterListInput],
        responses={200: OpenApiResponse(DeadLetterPageOut, description="Dead letters, newest first."), **problems(422)},
    )
    def get(self, request: Request) -> Response:
        params = DeadLetterListInput(data=query_data(request.query_params))
        params.is_valid(raise_exception=True)
        filters = dict(params.validated_data)
        limit, before = filters.pop("limit"), filters.pop("before", None)
        letters = dead_letter_search(self.project, **filters)
        if before:
            letters = letters.filter(pk__lt=before)
        page = list(letters[: limit + 1])
        more = len(page) > limit
        page = page[:limit]
        items = []
        for delivery in page:
            item = delivery_dict(delivery)
            item["payload_snapshot"] = delivery.payload_snapshot
            items.append(item)
        return Response({"results": items, "next_before": page[-1].pk if more and page else None})


class DeadLetterReplayView(ProjectAPIView):
    required_scope = scopes.MESSAGES_SEND

    @extend_schema(
        operation_id="dead_letters_replay",
        summary="Replay dead letters",
        description=described(
            (
                "Puts dead letters back in their lanes with a fresh attempt budget: by `ids` (every "
                "one must be dead) or by filter (up to `limit`). 409 `not_dead_letter` for a delivery "
                "that is not dead; 404 for an id this project does not have; 422 `filter_required` "
                "when neither is given."
            ),
            scopes.MESSAGES_SEND,
        ),
        request=DeadLetterReplayInput,
        responses={
            202: OpenApiResponse(ReplayOut, description="The ids put back in their lanes."),
            **problems(404, 409, 422),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = DeadLetterReplayInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        replayed = dead_letters_replay(project=self.project, **serializer.validated_data)
        return Response({"replayed": replayed, "count": len(replayed)}, status=202)


def subscriber_for_history(project: object, external_id: str) -> Subscriber:
    # A merged subscriber's history lives on the survivor; subscriber_get follows it.
    return subscriber_get(project, external_id)  # type: ignore[arg-type]


class SubscriberMessagesView(ProjectAPIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="subscriber_messages",
        summary="One subscriber's message history",
        description=described(
            (
                "Every delivery to this subscriber, newest first, with attempts and status events; "
                "page with `before`. A merged subscriber's history is answered from the survivor. 404 "
                "for an unknown subscriber."
            ),
            scopes.READ,
        ),
        parameters=[
            OpenApiParameter("limit", int, description="At most 200; default 50."),
            OpenApiParameter("before", int, description="Cursor: deliveries with a lower id."),
        ],
        responses={
            200: OpenApiResponse(SubscriberMessagesOut, description="Every delivery to this subscriber, newest first."),
            **problems(404),
        },
    )
    def get(self, request: Request, external_id: str) -> Response:
        subscriber = subscriber_for_history(self.project, external_id)
        try:
            limit = max(1, min(int(request.query_params.get("limit", 50)), 200))
            before = int(request.query_params["before"]) if "before" in request.query_params else None
        except ValueError:
            raise NotFound("limit and before must be integers.") from None
        deliveries = Delivery.objects.for_project(self.project).filter(subscriber_id=subscriber.pk).order_by("-id")
        if before:
            deliveries = deliveries.filter(pk__lt=before)
        page = list(deliveries[: limit + 1])
        more = len(page) > limit
        page = page[:limit]
        return Response(
            {
                "subscriber": {"external_id": subscriber.external_id, "id": subscriber.pk},
                "results": deliveries_with_history(page),
                "next_before": page[-1].pk if more and page else None,
            }
        )
