from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.accounts.mail import ORIGIN_KIND
        from apps.delivery.origins import origin_sent_content_keepers

        # The "Sent mail" page shows each account message as it went out, links and all.
        origin_sent_content_keepers.add(ORIGIN_KIND, True)
