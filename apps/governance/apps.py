from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "apps.governance"
    label = "governance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from apps.governance import schema  # noqa: F401 - registers the OpenAPI auth extension
        from apps.governance.models import ApiKey
        from apps.projects.models import Organization, Project

        for model in (ApiKey, Project, Organization):
            post_save.connect(_forget_cached_keys, sender=model, dispatch_uid=f"api-key-cache-{model.__name__}")
            post_delete.connect(_forget_cached_keys, sender=model, dispatch_uid=f"api-key-cache-del-{model.__name__}")


def _forget_cached_keys(**kwargs: object) -> None:
    from django.db import transaction

    from apps.governance.selectors import api_key_cache_clear

    api_key_cache_clear()
    # Again once the change is committed: a request in another thread may have read (and
    # cached) the old row between the save and the commit.
    transaction.on_commit(api_key_cache_clear)
