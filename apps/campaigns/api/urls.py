from django.urls import path

from apps.campaigns.api import stream, views

urlpatterns = [
    path("campaigns", views.CampaignsView.as_view(), name="api-campaigns"),
    path("campaigns/settings", views.CampaignSettingsView.as_view(), name="api-campaign-settings"),
    path("campaigns/<int:campaign_id>", views.CampaignView.as_view(), name="api-campaign"),
    path("campaigns/<int:campaign_id>/stream", stream.campaign_api_stream, name="api-campaign-stream"),
]
for _action in ("start", "pause", "resume", "cancel", "retry"):
    urlpatterns.append(
        path(
            f"campaigns/<int:campaign_id>/{_action}",
            views.campaign_action_view(_action).as_view(),
            name=f"api-campaign-{_action}",
        )
    )
