"""Shared shape of the add-tag and remove-tag nodes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.workflows.nodes.base import GraphIssue, NodeBatch, NodeType, Outcome, References

TAGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["tags"],
    "properties": {
        "tags": {
            "type": "array",
            "minItems": 1,
            "maxItems": 20,
            "items": {"type": "string", "minLength": 1, "maxLength": 64},
        }
    },
}


class TaggingNode(NodeType):
    schema = TAGS_SCHEMA
    adds: bool = True

    def semantic_issues(self, node_id: str, config: Mapping[str, Any]) -> list[GraphIssue]:
        from apps.subscribers.validation import tag_problem

        tags = config["tags"]
        issues = [
            GraphIssue("invalid_tag", f"Node {node_id!r}: {problem}", node=node_id)
            for problem in map(tag_problem, tags)
            if problem
        ]
        if len(set(tags)) != len(tags):
            issues.append(GraphIssue("duplicate_tag", f"Node {node_id!r} lists a tag twice.", node=node_id))
        return issues

    def references(self, config: Mapping[str, Any]) -> References:
        return References(tags=list(config.get("tags", [])))

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        tags = list(batch.config["tags"])
        live = sorted({s.subscriber_id for s in batch.steps if batch.ctx.is_live(s.subscriber_id)})
        changes = [(sid, tags, []) if self.adds else (sid, [], tags) for sid in live]
        batch.ctx.change_tags(changes, source_ref=f"workflow node {batch.node_id}")
        return {
            step.id: Outcome.follow() if step.subscriber_id in live else Outcome.fail("subscriber_gone")
            for step in batch.steps
        }
