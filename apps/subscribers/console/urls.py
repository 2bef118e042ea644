from django.urls import path

from apps.subscribers.console import views

app_name = "subscribers_console"

urlpatterns = [
    path("", views.subscriber_list, name="list"),
    path("<int:subscriber_id>/", views.subscriber_detail, name="detail"),
    path("segments/", views.segment_list, name="segments"),
    path("segments/new/", views.segment_edit, name="segment_new"),
    path("segments/preview/", views.segment_preview, name="segment_preview"),
    path("segments/rules/", views.segment_rules, name="segment_rules"),
    path("segments/<int:segment_id>/", views.segment_edit, name="segment_edit"),
    path("segments/<int:segment_id>/delete/", views.segment_remove, name="segment_delete"),
    path("imports/", views.import_list, name="imports"),
    path("imports/<int:job_id>/", views.import_detail, name="import_detail"),
    path("imports/<int:job_id>/status/", views.import_status, name="import_status"),
]
