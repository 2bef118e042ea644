"""Predicates shared by condition and multi-condition nodes: tags and segment membership."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from apps.workflows.context import BatchContext
from apps.workflows.nodes.base import GraphIssue, References

PREDICATE_SCHEMA: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["op", "tag"],
            "properties": {
                "op": {"enum": ["has_tag", "lacks_tag"]},
                "tag": {"type": "string", "minLength": 1, "maxLength": 64},
            },
        },
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["op", "segment"],
            "properties": {
                "op": {"enum": ["in_segment", "not_in_segment"]},
                "segment": {"type": "integer", "minimum": 1},
            },
        },
    ]
}

PREDICATES_SCHEMA: dict[str, Any] = {"type": "array", "minItems": 1, "maxItems": 20, "items": PREDICATE_SCHEMA}
# How the predicates combine: every one holds (the default), at least one, or none.
MATCH_SCHEMA: dict[str, Any] = {"enum": ["all", "any", "none"]}


def _key(predicate: Mapping[str, Any]) -> tuple[str, str]:
    return predicate["op"], str(predicate.get("tag", predicate.get("segment")))


def predicate_issues(node_id: str, predicates: Sequence[Mapping[str, Any]], where: str) -> list[GraphIssue]:
    seen: set[tuple[str, str]] = set()
    issues = []
    for predicate in predicates:
        key = _key(predicate)
        if key in seen:
            issues.append(
                GraphIssue(
                    "duplicate_predicate",
                    f"Node {node_id!r}: {where} repeats the predicate {key[0]} {key[1]!r}.",
                    node=node_id,
                )
            )
        seen.add(key)
    return issues


class PredicateState:
    """Tags and segment memberships of a batch's subscribers, read at execution time."""

    def __init__(self, ctx: BatchContext, subscriber_ids: Iterable[int], predicates: Iterable[Mapping[str, Any]]):
        ids = list(subscriber_ids)
        ops = {p["op"] for p in predicates}
        self.tags = ctx.tags(ids) if ops & {"has_tag", "lacks_tag"} else {}
        self.segments = ctx.segments(ids) if ops & {"in_segment", "not_in_segment"} else {}

    def holds(self, predicates: Sequence[Mapping[str, Any]], subscriber_id: int, match: str = "all") -> bool:
        results = (self._holds(predicate, subscriber_id) for predicate in predicates)
        if match == "any":
            return any(results)
        if match == "none":
            return not any(results)
        return all(results)

    def _holds(self, predicate: Mapping[str, Any], subscriber_id: int) -> bool:
        op = predicate["op"]
        if op in ("has_tag", "lacks_tag"):
            return (predicate["tag"] in self.tags.get(subscriber_id, set())) == (op == "has_tag")
        return (predicate["segment"] in self.segments.get(subscriber_id, set())) == (op == "in_segment")


def predicate_references(predicates: Sequence[Mapping[str, Any]]) -> References:
    return References(
        tags=[p["tag"] for p in predicates if "tag" in p],
        segments=[p["segment"] for p in predicates if "segment" in p],
    )
