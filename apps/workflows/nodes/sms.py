"""Sends an SMS from a project template to the subscriber's phone number."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.workflows.context import BatchContext, SubscriberInfo
from apps.workflows.nodes._send import SendNode, base_schema
from apps.workflows.nodes.base import register_node


@register_node
class SmsNode(SendNode):
    type = "sms"
    label = "SMS"
    description = "Sends a text message to the subscriber's phone number."
    channel = "sms"
    schema = base_schema()
    example_config = {"template": "reminder-sms"}

    def destinations(self, config: Mapping[str, Any], info: SubscriberInfo, ctx: BatchContext) -> list[str]:
        return [info.phone] if info.phone else []

    def missing_destination_reason(self) -> str:
        return "no_phone_number"
