"""Sends an email from a project template to the subscriber's address."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.workflows.context import BatchContext, SubscriberInfo
from apps.workflows.nodes._send import SendNode, base_schema
from apps.workflows.nodes.base import register_node


@register_node
class EmailNode(SendNode):
    type = "email"
    label = "Email"
    description = "Sends an email from a project template to the subscriber's address."
    channel = "email"
    schema = base_schema()
    example_config = {"template": "welcome-email"}

    def destinations(self, config: Mapping[str, Any], info: SubscriberInfo, ctx: BatchContext) -> list[str]:
        return [info.email] if info.email else []

    def missing_destination_reason(self) -> str:
        return "no_email_address"
