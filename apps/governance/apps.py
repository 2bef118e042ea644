from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "apps.governance"
    label = "governance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.governance import schema  # noqa: F401 - registers the OpenAPI auth extension
