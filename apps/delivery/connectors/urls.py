from __future__ import annotations

from django.urls import path

from . import views

app_name = "connectors_console"

urlpatterns = [
    path("", views.connector_index, name="list"),
    path("new/<slug:channel>/<slug:provider>/", views.connector_new, name="new"),
    path("<int:connector_id>/", views.connector_detail, name="detail"),
    path("<int:connector_id>/test/", views.connector_test, name="test"),
]
