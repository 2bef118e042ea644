from __future__ import annotations

import contextlib

from django.apps import AppConfig


class DeliveryConfig(AppConfig):
    name = "apps.delivery"
    label = "delivery"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Adapters register themselves on import; the registry is how dispatch finds them.
        from apps.delivery.channels import dryrun  # noqa: F401

        # A merged subscriber keeps one history: their deliveries follow them.
        with contextlib.suppress(ImportError):
            from apps.delivery.hooks import deliveries_move_subscriber
            from apps.subscribers.merge import subscriber_merge_hooks

            if "delivery" not in subscriber_merge_hooks:
                subscriber_merge_hooks.add("delivery", deliveries_move_subscriber)
