from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "apps.campaigns"
    label = "campaigns"
    default_auto_field = "django.db.models.BigAutoField"
