"""Ends this subscriber's journey early, cancelling any other branch still open."""

from __future__ import annotations

from apps.workflows.nodes.base import NodeBatch, NodeType, Outcome, register_node


@register_node
class StopNode(NodeType):
    type = "stop"
    label = "Stop"
    description = "Ends the subscriber's whole journey here, cancelling any other branch still open."
    terminal = True
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"reason": {"type": "string", "maxLength": 200}},
    }
    example_config = {"reason": "converted"}

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        reason = str(batch.config.get("reason") or "stop node")
        return {step.id: Outcome.stop(reason) for step in batch.steps}
