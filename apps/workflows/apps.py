from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    name = "apps.workflows"
    label = "workflows"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.delivery.origins import origin_listeners, origin_sent_content_keepers
        from apps.subscribers.merge import subscriber_erase_hooks, subscriber_merge_hooks
        from apps.workflows import services
        from apps.workflows.nodes.base import load_node_modules

        load_node_modules()
        origin_listeners.add("journey_step", services.steps_wake_for_deliveries)
        origin_sent_content_keepers.add("journey_step", True)
        subscriber_merge_hooks.add("workflows", services.journeys_move_subscriber)
        subscriber_erase_hooks.add("workflows", services.journeys_stop_for_erased)
