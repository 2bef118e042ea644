from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "apps.campaigns"
    label = "campaigns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.campaigns.listeners import campaign_claims_hold, campaign_outcomes_record
        from apps.campaigns.rate import campaign_rate_bucket
        from apps.campaigns.unsubscribe import campaign_content_decorate
        from apps.delivery.origins import (
            origin_content_decorators,
            origin_hold_checks,
            origin_listeners,
            origin_rate_buckets,
        )

        origin_listeners.add("campaign", campaign_outcomes_record)
        origin_content_decorators.add("campaign", campaign_content_decorate)
        origin_hold_checks.add("campaign", campaign_claims_hold)
        origin_rate_buckets.add("campaign", campaign_rate_bucket)
