"""A bare DRF endpoint for ``bench_publish``: the same two rows, none of the logic.

Mounted only when ``TIDINGS_BENCH_ENDPOINTS`` is on. It authenticates nothing and
validates nothing, so the publish endpoint's figures can be read as a ratio of it.
"""

from __future__ import annotations

from django.db import transaction
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.notifications.models import Notification, OutboxEvent


class BarePublishView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    def post(self, request: Request) -> Response:
        body = request.data
        project_id = int(body["project_id"])
        with transaction.atomic():
            notification = Notification.objects.create(
                project_id=project_id,
                template_key=body["template_key"],
                template_version_id=int(body["template_version_id"]),
                template_number=int(body["template_number"]),
                channels=body["channels"],
                recipients=body["to"],
                priority="normal",
                data=body.get("data") or {},
            )
            # Relayed at once: nothing must ever try to route these rows.
            OutboxEvent.objects.create(
                project_id=project_id, notification=notification, lane="normal", relayed_at=notification.created_at
            )
        return Response({"id": notification.pk}, status=202)
