"""Tag and segment predicates (all, any or none of them hold): leaves by "yes" or "no"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.workflows.nodes._predicates import (
    MATCH_SCHEMA,
    PREDICATES_SCHEMA,
    PredicateState,
    predicate_issues,
    predicate_references,
)
from apps.workflows.nodes.base import GraphIssue, NodeBatch, NodeType, Outcome, References, register_node


@register_node
class ConditionNode(NodeType):
    type = "condition"
    label = "Condition"
    description = "Checks tags and segments when the subscriber arrives: leaves by yes or no."
    starter_config = {"predicates": []}
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["predicates"],
        "properties": {"match": MATCH_SCHEMA, "predicates": PREDICATES_SCHEMA},
    }
    example_config = {"predicates": [{"op": "has_tag", "tag": "vip"}, {"op": "lacks_tag", "tag": "churned"}]}

    def handles(self, config: Mapping[str, Any]) -> list[str]:
        return ["yes", "no"]

    def semantic_issues(self, node_id: str, config: Mapping[str, Any]) -> list[GraphIssue]:
        return predicate_issues(node_id, config["predicates"], "the condition")

    def references(self, config: Mapping[str, Any]) -> References:
        return predicate_references(config.get("predicates", []))

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        # Read now, not when the journey started: a tag added a moment ago counts.
        predicates, match = batch.config["predicates"], str(batch.config.get("match") or "all")
        state = PredicateState(batch.ctx, (step.subscriber_id for step in batch.steps), predicates)
        return {
            step.id: Outcome.follow("yes" if state.holds(predicates, step.subscriber_id, match) else "no")
            for step in batch.steps
        }
