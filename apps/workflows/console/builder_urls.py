"""The journey builder's pages; included by ``apps.workflows.console.urls`` before the detail pages."""

from django.urls import path

from apps.workflows.console import builder_previews, builder_views

urlpatterns = [
    path("new/", builder_views.builder_new, name="builder_new"),
    path("<slug:key>/builder/", builder_views.builder_editor, name="builder"),
    path("<slug:key>/builder/edit", builder_views.builder_edit, name="builder_edit"),
    path("<slug:key>/builder/form", builder_views.builder_form, name="builder_form"),
    path("<slug:key>/builder/inspector", builder_views.builder_inspector, name="builder_inspector"),
    path("<slug:key>/builder/copy", builder_views.builder_copy, name="builder_copy"),
    path("<slug:key>/builder/wait-preview", builder_previews.wait_preview_view, name="builder_wait_preview"),
    path("<slug:key>/builder/message-preview", builder_previews.message_preview_view, name="builder_message_preview"),
    path("<slug:key>/builder/test-send", builder_previews.test_send_view, name="builder_test_send"),
]
