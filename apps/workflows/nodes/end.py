"""A path finishes here; the journey completes once no path is left open."""

from __future__ import annotations

from apps.workflows.nodes.base import NodeBatch, NodeType, Outcome, register_node


@register_node
class EndNode(NodeType):
    type = "end"
    label = "End"
    description = "This path is finished; the journey completes once no path is left open."
    terminal = True

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        return {step.id: Outcome.end() for step in batch.steps}
