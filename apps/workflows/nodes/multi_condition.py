"""Ordered cases of tag predicates: the first case that holds wins, else "default"."""

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

DEFAULT = "default"


@register_node
class MultiConditionNode(NodeType):
    type = "multi_condition"
    label = "Multi-condition"
    description = "Ordered cases of tag and segment checks: the first that holds wins, else default."
    starter_config = {"cases": [{"handle": "case-1", "predicates": []}]}
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["cases"],
        "properties": {
            "cases": {
                "type": "array",
                "minItems": 1,
                "maxItems": 20,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["handle", "predicates"],
                    "properties": {
                        "handle": {"type": "string", "pattern": "^[a-z0-9_-]{1,32}$"},
                        "match": MATCH_SCHEMA,
                        "predicates": PREDICATES_SCHEMA,
                    },
                },
            }
        },
    }
    example_config = {
        "cases": [
            {"handle": "vip", "predicates": [{"op": "has_tag", "tag": "vip"}]},
            {"handle": "active", "predicates": [{"op": "has_tag", "tag": "active"}]},
        ]
    }

    def handles(self, config: Mapping[str, Any]) -> list[str]:
        return [case["handle"] for case in config.get("cases", [])] + [DEFAULT]

    def semantic_issues(self, node_id: str, config: Mapping[str, Any]) -> list[GraphIssue]:
        issues: list[GraphIssue] = []
        seen: set[str] = set()
        for index, case in enumerate(config["cases"]):
            handle = case["handle"]
            if handle in seen or handle == DEFAULT:
                issues.append(
                    GraphIssue(
                        "duplicate_case",
                        f"Node {node_id!r}: case {index + 1} reuses the handle {handle!r}"
                        + (" (reserved for the fallback)." if handle == DEFAULT else "."),
                        node=node_id,
                    )
                )
            seen.add(handle)
            issues += predicate_issues(node_id, case["predicates"], f"case {handle!r}")
        return issues

    def references(self, config: Mapping[str, Any]) -> References:
        refs = References()
        for case in config.get("cases", []):
            found = predicate_references(case.get("predicates", []))
            refs.tags += found.tags
            refs.segments += found.segments
        return refs

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        cases = batch.config["cases"]
        every = [p for case in cases for p in case["predicates"]]
        state = PredicateState(batch.ctx, (step.subscriber_id for step in batch.steps), every)
        outcomes = {}
        for step in batch.steps:
            sid = step.subscriber_id
            handle = next(
                (
                    case["handle"]
                    for case in cases
                    if state.holds(case["predicates"], sid, str(case.get("match") or "all"))
                ),
                DEFAULT,
            )
            outcomes[step.id] = Outcome.follow(handle)
        return outcomes
