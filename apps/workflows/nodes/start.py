"""Where every journey begins."""

from __future__ import annotations

from apps.workflows.nodes.base import NodeBatch, NodeType, Outcome, register_node


@register_node
class StartNode(NodeType):
    type = "start"
    label = "Start"
    description = "Where every journey begins: each subscriber entered starts here."

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        return {step.id: Outcome.follow() for step in batch.steps}
