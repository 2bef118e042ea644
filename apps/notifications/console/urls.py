from __future__ import annotations

from django.urls import path

from apps.notifications.console import views

app_name = "notifications_console"

urlpatterns = [
    path("", views.explorer, name="explorer"),
    path("<int:notification_id>/", views.notification_detail, name="detail"),
]
