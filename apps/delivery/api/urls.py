from __future__ import annotations

from typing import Any

from django.urls import path

from apps.delivery.api import template_views as t
from apps.delivery.api import views

urlpatterns: list[Any] = [
    path("templates", t.TemplatesView.as_view(), name="api-templates"),
    path("templates/<slug:key>", t.TemplateDetailView.as_view(), name="api-template"),
    path("templates/<slug:key>/preview", t.TemplatePreviewView.as_view(), name="api-template-preview"),
    path("templates/<slug:key>/versions", t.TemplateVersionsView.as_view(), name="api-template-versions"),
    path("templates/<slug:key>/versions/<int:number>", t.TemplateVersionView.as_view(), name="api-template-version"),
    path(
        "templates/<slug:key>/versions/<int:number>/publish",
        t.TemplateVersionPublishView.as_view(),
        name="api-template-version-publish",
    ),
    path("layouts", t.LayoutsView.as_view(), name="api-layouts"),
    path("layouts/<int:layout_id>", t.LayoutDetailView.as_view(), name="api-layout"),
    path("dead-letters", views.DeadLetterListView.as_view(), name="api-dead-letters"),
    path("dead-letters/replay", views.DeadLetterReplayView.as_view(), name="api-dead-letters-replay"),
    path(
        "subscribers/<str:external_id>/messages",
        views.SubscriberMessagesView.as_view(),
        name="api-subscriber-messages",
    ),
]
