"""What changed between two journey graphs: nodes and edges added, removed and changed,
and each changed node's settings field by field.

A pure function over two graph documents, so the journey page (draft against the last
published version), the versions list (any two versions) and publishing (is there
anything to publish?) all agree on what a change is. Node positions are left out: the
builder stores them but nothing that runs or is drawn from a version reads them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# Node keys a version's behaviour or drawing depends on; "position" is builder-only.
_NODE_FIELDS = ("type", "label", "flags")
_MISSING: Any = object()


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


@dataclass(frozen=True)
class FieldChange:
    """One setting of a node: ``path`` is dotted for nested config (``predicates`` stays whole)."""

    path: str
    before: Any = None
    after: Any = None
    added: bool = False
    removed: bool = False

    @property
    def before_text(self) -> str:
        return _shown(self.before)

    @property
    def after_text(self) -> str:
        return _shown(self.after)


@dataclass(frozen=True)
class NodeChange:
    id: str
    type: str
    fields: list[FieldChange]


@dataclass(frozen=True)
class EdgeRef:
    source: str
    handle: str
    target: str

    def __str__(self) -> str:
        return f"{self.source} —{self.handle}→ {self.target}"


@dataclass(frozen=True)
class EdgeChange:
    """The one edge leaving ``source`` by ``handle`` now leads elsewhere."""

    source: str
    handle: str
    before: str
    after: str


@dataclass(frozen=True)
class GraphDiff:
    nodes_added: list[dict[str, Any]] = field(default_factory=list)
    nodes_removed: list[dict[str, Any]] = field(default_factory=list)
    nodes_changed: list[NodeChange] = field(default_factory=list)
    edges_added: list[EdgeRef] = field(default_factory=list)
    edges_removed: list[EdgeRef] = field(default_factory=list)
    edges_changed: list[EdgeChange] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not any(
            (
                self.nodes_added,
                self.nodes_removed,
                self.nodes_changed,
                self.edges_added,
                self.edges_removed,
                self.edges_changed,
            )
        )

    def summary(self) -> str:
        parts = [
            (len(self.nodes_added), "node added", "nodes added"),
            (len(self.nodes_removed), "node removed", "nodes removed"),
            (len(self.nodes_changed), "node changed", "nodes changed"),
            (len(self.edges_added), "edge added", "edges added"),
            (len(self.edges_removed), "edge removed", "edges removed"),
            (len(self.edges_changed), "edge re-routed", "edges re-routed"),
        ]
        said = [f"{n} {one if n == 1 else many}" for n, one, many in parts if n]
        return ", ".join(said) if said else "no changes"


def _nodes(graph: Any) -> dict[str, Mapping[str, Any]]:
    nodes = graph.get("nodes", []) if isinstance(graph, Mapping) else []
    return {n["id"]: n for n in nodes if isinstance(n, Mapping) and "id" in n}


def _edges(graph: Any) -> list[EdgeRef]:
    edges = graph.get("edges", []) if isinstance(graph, Mapping) else []
    refs = (
        EdgeRef(str(e.get("from")), str(e.get("handle") or "next"), str(e.get("to")))
        for e in edges
        if isinstance(e, Mapping)
    )
    return list(dict.fromkeys(refs))


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    # Nested objects compare key by key; lists stay whole (an order change is a change).
    if isinstance(value, Mapping) and value:
        for key in sorted(value):
            yield from _flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def _field_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldChange]:
    changes: list[FieldChange] = []
    for name in _NODE_FIELDS:
        if old.get(name) != new.get(name):
            changes.append(FieldChange(name, old.get(name), new.get(name)))
    before = dict(_flatten(old.get("config") or {}))
    after = dict(_flatten(new.get("config") or {}))
    before.pop("", None)
    after.pop("", None)
    for path in sorted(before.keys() | after.keys()):
        was, now = before.get(path, _MISSING), after.get(path, _MISSING)
        if was is _MISSING:
            changes.append(FieldChange(f"config.{path}", None, now, added=True))
        elif now is _MISSING:
            changes.append(FieldChange(f"config.{path}", was, None, removed=True))
        elif was != now:
            changes.append(FieldChange(f"config.{path}", was, now))
    return changes


def _by_handle(edges: list[EdgeRef]) -> dict[tuple[str, str], list[EdgeRef]]:
    grouped: dict[tuple[str, str], list[EdgeRef]] = defaultdict(list)
    for edge in edges:
        grouped[(edge.source, edge.handle)].append(edge)
    return grouped


def workflow_version_diff(old_graph: Any, new_graph: Any) -> GraphDiff:
    """What ``new_graph`` changes against ``old_graph`` (either may be empty or None)."""
    old_nodes, new_nodes = _nodes(old_graph), _nodes(new_graph)
    changed = []
    for node_id in new_nodes.keys() & old_nodes.keys():
        fields = _field_changes(old_nodes[node_id], new_nodes[node_id])
        if fields:
            changed.append(NodeChange(node_id, str(new_nodes[node_id].get("type", "")), fields))
    old_edges, new_edges = _edges(old_graph), _edges(new_graph)
    added = [e for e in new_edges if e not in set(old_edges)]
    removed = [e for e in old_edges if e not in set(new_edges)]
    # One handle that led to one node and now leads to another reads as a re-route, not
    # as an unrelated removal and addition.
    rerouted: list[EdgeChange] = []
    added_by, removed_by = _by_handle(added), _by_handle(removed)
    for key, gone in removed_by.items():
        came = added_by.get(key, [])
        if len(gone) == 1 and len(came) == 1:
            rerouted.append(EdgeChange(key[0], key[1], gone[0].target, came[0].target))
            removed.remove(gone[0])
            added.remove(came[0])
    order = list(new_nodes) + [n for n in old_nodes if n not in new_nodes]
    return GraphDiff(
        nodes_added=[dict(new_nodes[n]) for n in new_nodes if n not in old_nodes],
        nodes_removed=[dict(old_nodes[n]) for n in old_nodes if n not in new_nodes],
        nodes_changed=sorted(changed, key=lambda c: order.index(c.id)),
        edges_added=added,
        edges_removed=removed,
        edges_changed=rerouted,
    )
