"""Graph builders and data helpers for workflow tests."""

from __future__ import annotations

from itertools import pairwise
from typing import Any


def node(node_id: str, type_: str, **config: Any) -> dict[str, Any]:
    return {"id": node_id, "type": type_, "config": config}


def edge(source: str, target: str, handle: str = "next") -> dict[str, Any]:
    return {"from": source, "handle": handle, "to": target}


def chain(*nodes: dict[str, Any]) -> dict[str, Any]:
    """Nodes in a line, each leaving by "next"."""
    return {"nodes": list(nodes), "edges": [edge(a["id"], b["id"]) for a, b in pairwise(nodes)]}


def tag_branch_graph(tag: str = "vip") -> dict[str, Any]:
    """start -> add tag "seen" -> condition(has tag) -> yes: add "yes" -> end ; no: add "no" -> end."""
    return {
        "nodes": [
            node("start", "start"),
            node("mark", "add_tag", tags=["seen"]),
            node("check", "condition", predicates=[{"op": "has_tag", "tag": tag}]),
            node("tag_yes", "add_tag", tags=["went_yes"]),
            node("tag_no", "add_tag", tags=["went_no"]),
            node("end", "end"),
        ],
        "edges": [
            edge("start", "mark"),
            edge("mark", "check"),
            edge("check", "tag_yes", "yes"),
            edge("check", "tag_no", "no"),
            edge("tag_yes", "end"),
            edge("tag_no", "end"),
        ],
    }
