from django.apps import AppConfig


class SubscribersConfig(AppConfig):
    name = "apps.subscribers"
    label = "subscribers"
    default_auto_field = "django.db.models.BigAutoField"
