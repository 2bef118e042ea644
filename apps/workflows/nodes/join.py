"""Branches merge here: a subscriber continues once, however many branches arrive."""

from __future__ import annotations

from apps.workflows.nodes.base import NodeBatch, NodeType, Outcome, register_node


@register_node
class JoinNode(NodeType):
    type = "join"
    label = "Join"
    description = "Merges branches: a subscriber continues once, however many branches arrive."

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        # The runner holds the journeys' locks for the batch, so no other arrival of the
        # same journey can pass this join concurrently.
        already = batch.ctx.passed({step.journey_id for step in batch.steps}, batch.node_id, "next")
        outcomes: dict[int, Outcome] = {}
        for step in sorted(batch.steps, key=lambda s: s.id):
            if step.journey_id in already:
                outcomes[step.id] = Outcome.drop("joined")
            else:
                already.add(step.journey_id)
                outcomes[step.id] = Outcome.follow()
        return outcomes
