"""The publish API: thin views over the notifications services and selectors."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.delivery.api.output import deliveries_with_history
from apps.delivery.api.schema import problems
from apps.governance import scopes
from apps.governance.api.base import ProjectAPIView
from apps.governance.api.docs import described
from apps.notifications.api.schema import NotificationOut, PublishAcceptedOut
from apps.notifications.api.serializers import NotificationPublishInput, publish_input_plain
from apps.notifications.models import Notification
from apps.notifications.selectors import notification_deliveries, notification_get
from apps.notifications.services import notification_publish


def notification_dict(notification: Notification) -> dict[str, Any]:
    return {
        "id": notification.pk,
        "template": f"{notification.template_key}@{notification.template_number}",
        "channels": notification.channels,
        "to": notification.recipients,
        "priority": notification.priority,
        "data": notification.data,
        "send_at": notification.send_at.isoformat() if notification.send_at else None,
        "state": notification.state,
        "routing": notification.routing,
        "created_at": notification.created_at.isoformat(),
        "routed_at": notification.routed_at.isoformat() if notification.routed_at else None,
    }


class NotificationCollectionView(ProjectAPIView):
    required_scope = scopes.NOTIFICATIONS_PUBLISH

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "POST":
            answer = self.publish_plain(request)
            if answer is not None:
                return answer
        return super().dispatch(request, *args, **kwargs)

    def publish_plain(self, request: HttpRequest) -> HttpResponse | None:
        """The everyday publish without DRF's machinery; None hands the request to DRF.

        Only a request DRF would accept the same way is answered here (see ProjectAPIView's
        plain path and publish_input_plain); tests/notifications/test_publish_plain.py
        holds both paths to the same answers.
        """
        data = self.plain_json_body(request)
        if data is None:
            return None
        validated = publish_input_plain(data)
        if validated is None:
            return None
        key = self.plain_key(request)
        if key is None or not self.plain_admit(request, key):
            return None
        try:
            notification = notification_publish(project=key.project, **validated)
        except Exception as exc:  # noqa: BLE001 - answered as DRF would, or re-raised
            return self.plain_error(request, exc)
        return self.plain_response(
            {"id": notification.pk, "state": notification.state},
            status=202,
            headers={"Location": f"/api/v1/notifications/{notification.pk}"},
        )

    @extend_schema(
        operation_id="notification_publish",
        summary="Publish a notification",
        description=described(
            (
                "Accepts a notification for a template and its recipients (202): it is stored with its "
                "outbox event in one transaction and routed to deliveries in the background; the "
                "Location header names it. Send an `Idempotency-Key` header to make retries safe. 413 "
                "for an oversized body; 422 names each invalid field."
            ),
            scopes.NOTIFICATIONS_PUBLISH,
        ),
        request=NotificationPublishInput,
        responses={
            202: OpenApiResponse(PublishAcceptedOut, description="Stored with its outbox event; deliveries follow."),
            **problems(413, 422),
        },
    )
    def post(self, request: Request) -> Response:
        validated = publish_input_plain(request.data)
        if validated is None:
            serializer = NotificationPublishInput(data=request.data)
            serializer.is_valid(raise_exception=True)
            validated = serializer.validated_data
        notification = notification_publish(project=self.project, **validated)
        return Response(
            {"id": notification.pk, "state": notification.state},
            status=202,
            headers={"Location": f"/api/v1/notifications/{notification.pk}"},
        )


class NotificationDetailView(ProjectAPIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="notification_get",
        summary="One notification and its deliveries",
        description=described(
            (
                "The notification as accepted, how it was routed (deliveries made, recipients skipped "
                "and why) and every delivery with attempts and events. 404 for a notification of "
                "another project."
            ),
            scopes.READ,
        ),
        responses={200: OpenApiResponse(NotificationOut, description="The whole story."), **problems(404)},
    )
    def get(self, request: Request, notification_id: str) -> Response:
        notification = notification_get(self.project, notification_id)
        body = notification_dict(notification)
        body["deliveries"] = deliveries_with_history(notification_deliveries(self.project, notification))
        return Response(body)
