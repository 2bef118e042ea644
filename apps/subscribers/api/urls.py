from django.urls import path

from apps.subscribers.api import import_views, segment_views, views

urlpatterns = [
    path("subscribers", views.SubscriberListView.as_view(), name="api-subscribers"),
    path("subscribers/identify", views.IdentifyView.as_view(), name="api-subscribers-identify"),
    path("subscribers/import", import_views.ImportCreateView.as_view(), name="api-subscribers-import"),
    path("subscribers/<str:external_id>", views.SubscriberDetailView.as_view(), name="api-subscriber"),
    path("subscribers/<str:external_id>/tags", views.SubscriberTagsView.as_view(), name="api-subscriber-tags"),
    path("subscribers/<str:external_id>/export", views.SubscriberExportView.as_view(), name="api-subscriber-export"),
    path("devices", views.DeviceListView.as_view(), name="api-devices"),
    path("devices/<str:token>", views.DeviceDetailView.as_view(), name="api-device"),
    path("segments", segment_views.SegmentListView.as_view(), name="api-segments"),
    path("segments/<int:segment_id>", segment_views.SegmentDetailView.as_view(), name="api-segment"),
    path(
        "segments/<int:segment_id>/subscribers",
        segment_views.SegmentSubscribersView.as_view(),
        name="api-segment-subscribers",
    ),
    path("imports/<int:job_id>", import_views.ImportDetailView.as_view(), name="api-import"),
]
