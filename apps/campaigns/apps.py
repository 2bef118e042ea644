from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "apps.campaigns"
    label = "campaigns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.campaigns.listeners import campaign_outcomes_record
        from apps.delivery.origins import origin_listeners

        origin_listeners.add("campaign", campaign_outcomes_record)
