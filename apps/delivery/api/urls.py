from __future__ import annotations

from typing import Any

from django.urls import path

from apps.delivery.api import views

urlpatterns: list[Any] = [
    path("dead-letters", views.DeadLetterListView.as_view(), name="api-dead-letters"),
    path("dead-letters/replay", views.DeadLetterReplayView.as_view(), name="api-dead-letters-replay"),
    path(
        "subscribers/<str:external_id>/messages",
        views.SubscriberMessagesView.as_view(),
        name="api-subscriber-messages",
    ),
]
