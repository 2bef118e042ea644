from django.urls import path

from apps.campaigns.console import views

app_name = "campaigns_console"

urlpatterns = [
    path("", views.campaigns, name="list"),
    path("status.json", views.campaigns_status, name="status"),
    path("new/", views.campaign_new, name="new"),
    path("settings/", views.campaign_settings_page, name="settings"),
    path("<int:campaign_id>/", views.campaign_detail, name="detail"),
    path("<int:campaign_id>/stream", views.campaign_stream, name="stream"),
    path("<int:campaign_id>/<slug:action>/", views.campaign_action, name="action"),
]
