from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import path

from apps.notifications.api import batch_views, views

urlpatterns: list[Any] = [
    path("notifications", views.NotificationCollectionView.as_view(), name="api-notifications"),
    path("notifications/<str:notification_id>", views.NotificationDetailView.as_view(), name="api-notification"),
    path("messages/email/batch", batch_views.EmailBatchView.as_view(), name="api-messages-email-batch"),
    path("messages/push/batch", batch_views.PushBatchView.as_view(), name="api-messages-push-batch"),
    path("broadcasts", batch_views.BroadcastView.as_view(), name="api-broadcasts"),
    path("broadcasts/<str:broadcast_id>", batch_views.BroadcastDetailView.as_view(), name="api-broadcast"),
]

if getattr(settings, "TIDINGS_BENCH_ENDPOINTS", False):
    # Benchmark only: the same two rows with none of the publish logic, for a ratio.
    from apps.notifications.api.bench import BarePublishView

    urlpatterns.append(path("_bench/bare-publish", BarePublishView.as_view(), name="api-bench-bare-publish"))
