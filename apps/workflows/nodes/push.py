"""Sends a push to every active device; completes when each device succeeded or failed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.workflows.context import BatchContext, SubscriberInfo
from apps.workflows.nodes._send import SendNode, base_schema
from apps.workflows.nodes.base import register_node


@register_node
class PushNode(SendNode):
    type = "push"
    label = "Push"
    description = "Sends a push to every active device of the subscriber."
    channel = "push"
    schema = base_schema()
    example_config = {"template": "welcome-push"}

    def destinations(self, config: Mapping[str, Any], info: SubscriberInfo, ctx: BatchContext) -> list[str]:
        return [device.token for device in ctx.devices(info.id)]

    def missing_destination_reason(self) -> str:
        # Permanent: retrying cannot give a subscriber a device.
        return "no_device_token"
