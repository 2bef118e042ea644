from django.apps import AppConfig


class CmsConfig(AppConfig):
    name = "cms"
    label = "cms"
    default_auto_field = "django.db.models.BigAutoField"
