from django.apps import AppConfig


class CmsConfig(AppConfig):
    name = "cms"
    label = "cms"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from cms import signals

        signals.connect()
