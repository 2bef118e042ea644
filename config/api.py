"""Routing for the public API under /api/v1/. Each app contributes its own urls."""

from django.urls import include, path, re_path

from apps.core.problems import api_not_found

urlpatterns = [
    path("", include("apps.governance.api.urls")),
    path("", include("apps.subscribers.api.urls")),
    path("", include("apps.delivery.api.urls")),
    path("", include("apps.notifications.api.urls")),
    path("", include("apps.workflows.api.urls")),
    path("", include("apps.campaigns.api.urls")),
]

# Any character: a path holding a newline (%0A) is still an unknown API path, not an HTML page.
urlpatterns += [re_path(r"^[\s\S]*$", api_not_found, name="api-not-found")]
