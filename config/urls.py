from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from wagtail import urls as wagtail_urls
from wagtail.admin import urls as wagtailadmin_urls
from wagtail.documents import urls as wagtaildocs_urls

from apps.accounts.signin import AdminSignInForm
from apps.campaigns.public import unsubscribe
from apps.core.health import health_view

handler500 = "apps.core.problems.server_error"

# The admin's sign-in page names a sign-in lock as such (apps.accounts.signin).
admin.site.login_form = AdminSignInForm

urlpatterns = [
    path("health", health_view, name="health"),
    path("u/<str:token>", unsubscribe, name="unsubscribe"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file of its own: no inline script.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("config.api")),
    path("console/keys/", include("apps.governance.console.urls")),
    path("console/subscribers/", include("apps.subscribers.console.urls")),
    path("console/delivery/", include("apps.delivery.console.urls")),
    path("console/connectors/", include("apps.delivery.connectors.urls")),
    path("console/notifications/", include("apps.notifications.console.urls")),
    path("console/workflows/", include("apps.workflows.console.urls")),
    path("console/campaigns/", include("apps.campaigns.console.urls")),
    path("webhooks/", include("apps.delivery.webhooks.urls")),
    path("console/", include("apps.console.urls")),
    # allauth: sign-up, email addresses, password, MFA (2fa/) and sessions (sessions/).
    path("console/", include("allauth.urls")),
    path("cms/", include(wagtailadmin_urls)),
    path("documents/", include(wagtaildocs_urls)),
]

if settings.TIDINGS_SERVE_MEDIA:
    from django.views.static import serve

    prefix = settings.MEDIA_URL.lstrip("/")
    urlpatterns += [path(f"{prefix}<path:path>", serve, {"document_root": settings.MEDIA_ROOT})]

# Search, sitemap, robots.txt and llms.txt; Wagtail serves every other path (home page,
# docs, blog, legal).
urlpatterns += [path("", include("cms.urls")), path("", include(wagtail_urls))]
