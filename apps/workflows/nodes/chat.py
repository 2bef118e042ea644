"""Sends a chat message (WhatsApp to the phone; Slack or Teams to an address attribute)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.workflows.context import BatchContext, SubscriberInfo
from apps.workflows.nodes._send import SendNode, base_schema
from apps.workflows.nodes.base import register_node


@register_node
class ChatNode(SendNode):
    type = "chat"
    label = "Chat"
    description = "Sends a WhatsApp, Slack or Teams message."
    starter_config = {"channel": "whatsapp"}
    channel = "whatsapp"
    schema = base_schema(
        _required=["channel"],
        channel={"enum": ["whatsapp", "slack", "teams"]},
        # For Slack/Teams: the subscriber attribute holding their address (user id, webhook).
        address_attribute={"type": "string", "minLength": 1, "maxLength": 64},
    )
    example_config = {"channel": "slack", "template": "alert-slack", "address_attribute": "slack_user"}

    def template_channel(self, config: Mapping[str, Any]) -> str:
        return str(config.get("channel") or self.channel)

    def destinations(self, config: Mapping[str, Any], info: SubscriberInfo, ctx: BatchContext) -> list[str]:
        if config["channel"] == "whatsapp":
            return [info.phone] if info.phone else []
        value = (info.attributes or {}).get(str(config.get("address_attribute") or config["channel"]))
        return [str(value)] if value else []
