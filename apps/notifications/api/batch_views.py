"""Batch message APIs and broadcasts."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.errors import NotFound
from apps.core.ids import parse_id
from apps.delivery.api.schema import problems
from apps.governance import scopes
from apps.governance.api.base import ProjectAPIView
from apps.governance.api.docs import described
from apps.notifications.api.schema import BatchAcceptedOut, BroadcastAcceptedOut, BroadcastOut
from apps.notifications.api.serializers import BroadcastInput, EmailBatchInput, PushBatchInput
from apps.notifications.broadcasts import broadcast_create
from apps.notifications.messages import messages_send_batch
from apps.notifications.models import Broadcast


class _BatchView(ProjectAPIView):
    required_scope = scopes.MESSAGES_SEND
    channel = ""
    input_class: type = EmailBatchInput

    def post(self, request: Request) -> Response:
        serializer = self.input_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = messages_send_batch(
            project=self.project,
            channel=self.channel,
            messages=serializer.validated_data["messages"],
            priority=serializer.validated_data["priority"],
        )
        return Response(
            {
                "batch": result.batch_id,
                "messages": [{"index": i, "deliveries": ids} for i, ids in enumerate(result.deliveries)],
            },
            status=202,
        )


class EmailBatchView(_BatchView):
    channel = "email"
    input_class = EmailBatchInput

    @extend_schema(
        operation_id="messages_email_batch",
        summary="Send a batch of emails",
        description=described(
            (
                "Many emails in one request, one delivery each: every message names a template, or "
                "carries its own subject and text and/or html, and may carry its own idempotency "
                "`key`. 422 `invalid_recipient`, `unsafe_html` or `unknown_subscriber`, naming the "
                "message by index."
            ),
            scopes.MESSAGES_SEND,
        ),
        request=EmailBatchInput,
        responses={
            202: OpenApiResponse(BatchAcceptedOut, description="One delivery per message."),
            **problems(413, 422),
        },
    )
    def post(self, request: Request) -> Response:
        return super().post(request)


class PushBatchView(_BatchView):
    channel = "push"
    input_class = PushBatchInput

    @extend_schema(
        operation_id="messages_push_batch",
        summary="Send a batch of pushes",
        description=described(
            (
                "Many pushes in one request, one delivery per device: every message names a template, "
                "or carries its own title and/or body. 422 `invalid_recipient`, `unknown_subscriber` "
                "or `no_destination`, naming the message by index."
            ),
            scopes.MESSAGES_SEND,
        ),
        request=PushBatchInput,
        responses={
            202: OpenApiResponse(BatchAcceptedOut, description="One delivery per device."),
            **problems(413, 422),
        },
    )
    def post(self, request: Request) -> Response:
        return super().post(request)


class BroadcastView(ProjectAPIView):
    required_scope = scopes.NOTIFICATIONS_PUBLISH

    @extend_schema(
        operation_id="broadcast_create",
        summary="Broadcast a template to an audience",
        description=described(
            (
                "Sends a template to everyone, a segment or a tag (202); the fan-out runs on the bulk "
                "lane. 422 `channel_not_broadcastable` or `unknown_tag`; 404 for a segment this "
                "project does not have."
            ),
            scopes.NOTIFICATIONS_PUBLISH,
        ),
        request=BroadcastInput,
        responses={
            202: OpenApiResponse(BroadcastAcceptedOut, description="Stored; the fan-out runs on the bulk lane."),
            **problems(404, 422),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = BroadcastInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        broadcast = broadcast_create(project=self.project, **serializer.validated_data)
        return Response({"id": broadcast.pk, "state": broadcast.state, "audience": broadcast.audience_kind}, status=202)


class BroadcastDetailView(ProjectAPIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="broadcast_get",
        summary="One broadcast's fan-out state",
        description=described(
            (
                "The broadcast and how many deliveries it has enqueued per channel so far. 404 for a "
                "broadcast of another project."
            ),
            scopes.READ,
        ),
        responses={200: OpenApiResponse(BroadcastOut, description="Fan-out state."), **problems(404)},
    )
    def get(self, request: Request, broadcast_id: str) -> Response:
        pk = parse_id(broadcast_id)
        broadcast = Broadcast.objects.for_project(self.project).filter(pk=pk).first() if pk else None
        if broadcast is None:
            raise NotFound(f"There is no broadcast {broadcast_id} in this project.")
        return Response(
            {
                "id": broadcast.pk,
                "template": f"{broadcast.template_key}@{broadcast.template_number}",
                "channels": broadcast.channels,
                "audience": {"kind": broadcast.audience_kind, "ref": broadcast.audience_ref},
                "state": broadcast.state,
                "enqueued": broadcast.enqueued,
                "send_at": broadcast.send_at.isoformat() if broadcast.send_at else None,
                "created_at": broadcast.created_at.isoformat(),
            }
        )
