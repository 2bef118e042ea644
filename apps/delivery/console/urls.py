from __future__ import annotations

from django.urls import path

from apps.delivery.console import editor_preview, editor_views, views

app_name = "delivery_console"

urlpatterns = [
    path("deliveries/<int:delivery_id>/", views.delivery_detail, name="delivery"),
    path("subscribers/<str:external_id>/messages/", views.subscriber_messages, name="subscriber_messages"),
    path("dead-letters/", views.dead_letters, name="dead_letters"),
    path("dead-letters/replay/", views.dead_letters_replay_view, name="dead_letters_replay"),
    path("templates/", editor_views.template_list, name="templates"),
    path("templates/<int:template_id>/", editor_views.template_detail, name="template"),
    path("templates/<int:template_id>/preview/", editor_views.template_preview, name="template_preview"),
    path(
        "templates/<int:template_id>/preview/pane/", editor_preview.template_preview_pane, name="template_preview_pane"
    ),
    path(
        "templates/<int:template_id>/text-from-html/",
        editor_preview.template_text_from_html,
        name="template_text_from_html",
    ),
    path(
        "templates/<int:template_id>/versions/<int:number>/publish/",
        editor_views.template_version_publish_view,
        name="template_publish",
    ),
    path("layouts/", editor_views.layout_list, name="layouts"),
    path("layouts/preview/", editor_preview.layout_preview, name="layout_preview"),
    path("layouts/new/", editor_views.layout_edit, name="layout_new"),
    path("layouts/<int:layout_id>/", editor_views.layout_edit, name="layout"),
]
