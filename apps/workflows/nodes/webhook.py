"""Calls a webhook with a rendered body; the destination is the URL in the config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.workflows.context import BatchContext, SubscriberInfo
from apps.workflows.nodes._send import SendNode, base_schema
from apps.workflows.nodes.base import register_node


@register_node
class WebhookNode(SendNode):
    type = "webhook"
    label = "Webhook"
    description = "Calls a URL with a body rendered from a template."
    channel = "webhook"
    schema = base_schema(_required=["url"], url={"type": "string", "pattern": "^https?://", "maxLength": 2000})
    example_config = {"template": "crm-sync", "url": "https://example.com/hooks/tidings"}

    def destinations(self, config: Mapping[str, Any], info: SubscriberInfo, ctx: BatchContext) -> list[str]:
        return [str(config["url"])]
