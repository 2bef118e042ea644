"""The builder's edits: pure functions from a draft graph to the next one.

Each edit takes a copy of the graph and either answers the changed graph (with a label
for the undo history and the node to select next) or raises ``EditError`` naming what
was wrong, so a refused edit changes nothing. Node ids come from the client and are
never trusted: every id, handle and type is checked against the draft itself.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from apps.core.errors import ApplicationError
from apps.workflows.builder.layout import handle_order
from apps.workflows.graph import GRAPH_SCHEMA, shape_issues
from apps.workflows.nodes.base import node_types

MAX_LABEL = 200
MAX_CONFIG_BYTES = 64 * 1024


class EditError(ApplicationError):
    default_code = "invalid_edit"


@dataclass(frozen=True)
class Edited:
    graph: dict[str, Any]
    label: str  # what the undo history shows: "Add Email", "Delete 2 nodes"
    focus: list[str]  # nodes to select after the edit


def empty_graph() -> dict[str, Any]:
    return {"nodes": [], "edges": []}


def graph_copy(graph: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "nodes": copy.deepcopy(list(graph.get("nodes") or [])),
        "edges": copy.deepcopy(list(graph.get("edges") or [])),
    }


def _nodes(graph: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {node["id"]: node for node in graph["nodes"]}


def node_get(graph: Mapping[str, Any], node_id: Any) -> dict[str, Any]:
    if not isinstance(node_id, str) or not node_id:
        raise EditError("Say which node.", code="node_required", field="node")
    for node in graph["nodes"]:
        if node["id"] == node_id:
            return node
    raise EditError(
        f"This draft has no node {node_id[:64]!r}; reload to see the current draft.", code="unknown_node", field="node"
    )


def _kind(type_name: Any) -> Any:
    if not isinstance(type_name, str) or type_name not in node_types:
        known = ", ".join(node_types)
        raise EditError(
            f"There is no node type {str(type_name)[:32]!r} ({known}).", code="unknown_node_type", field="type"
        )
    return node_types.get(type_name)


def handles_of(node: Mapping[str, Any], graph: Mapping[str, Any]) -> list[str]:
    """The node type's handles, plus any an existing edge already uses (a broken config keeps its edges)."""
    handles = handle_order(node)
    for edge in graph["edges"]:
        if edge["from"] == node["id"] and (edge.get("handle") or "next") not in handles:
            handles.append(edge.get("handle") or "next")
    return handles


def _check_handle(node: Mapping[str, Any], handle: Any, graph: Mapping[str, Any]) -> str:
    handles = handles_of(node, graph)
    if not isinstance(handle, str) or handle not in handles:
        allowed = ", ".join(handles) or "none: it ends the path"
        raise EditError(
            f"A {node['type']} node has no handle {str(handle)[:32]!r} ({allowed}).",
            code="unknown_handle",
            field="handle",
        )
    return handle


def new_node_id(graph: Mapping[str, Any], type_name: str, taken: Iterable[str] = ()) -> str:
    used = {node["id"] for node in graph["nodes"]} | set(taken)
    stem = type_name.replace("_", "-")
    n = 1
    while f"{stem}-{n}" in used:
        n += 1
    return f"{stem}-{n}"


def _edge(source: str, handle: str, target: str) -> dict[str, Any]:
    return {"from": source, "handle": handle, "to": target}


def _has_edge(graph: Mapping[str, Any], source: str, handle: str, target: str) -> bool:
    return any(
        e["from"] == source and (e.get("handle") or "next") == handle and e["to"] == target for e in graph["edges"]
    )


def _find_edge(graph: Mapping[str, Any], source: Any, handle: Any, target: Any) -> int:
    for index, e in enumerate(graph["edges"]):
        if e["from"] == source and (e.get("handle") or "next") == (handle or "next") and e["to"] == target:
            return index
    raise EditError(
        f"This draft has no edge {str(source)[:64]} -[{str(handle)[:32]}]-> {str(target)[:64]}; reload to see it.",
        code="unknown_edge",
        field="edge",
    )


def finish(graph: dict[str, Any], label: str, focus: list[str]) -> Edited:
    """Refuse an edit whose result breaks the graph format (too many nodes, a bad id)."""
    limits = GRAPH_SCHEMA["properties"]
    for part, noun in (("nodes", "nodes"), ("edges", "connections")):
        most = limits[part]["maxItems"]
        if len(graph[part]) > most:
            raise EditError(
                f"A journey has at most {most} {noun}; this edit would make {len(graph[part])}.",
                code="graph_too_large",
            )
    issues = shape_issues(graph)
    if issues:
        raise EditError(issues[0].message[:300], code="invalid_graph")
    return Edited(graph, label, focus)


def add(
    graph: Mapping[str, Any],
    *,
    type_name: Any,
    on_edge: tuple[Any, Any, Any] | None = None,
    after: tuple[Any, Any] | None = None,
) -> Edited:
    """A new node of ``type_name``: alone, on an edge (between its ends) or after a handle."""
    kind = _kind(type_name)
    graph = graph_copy(graph)
    node_id = new_node_id(graph, kind.type)
    node = {"id": node_id, "type": kind.type, "config": copy.deepcopy(kind.starter_config)}
    continues: list[str] = []
    if on_edge is not None or after is not None:
        if kind.type == "start":
            raise EditError("A start node has no way in: add it on its own.", code="start_has_no_input", field="type")
        if on_edge is not None:
            index = _find_edge(graph, *on_edge)
            edge = graph["edges"][index]
            source, handle, continues = edge["from"], edge.get("handle") or "next", [edge["to"]]
            replaced = [index]
        else:
            assert after is not None
            source_node = node_get(graph, after[0])
            handle = _check_handle(source_node, after[1], graph)
            source = source_node["id"]
            replaced = [
                i for i, e in enumerate(graph["edges"]) if e["from"] == source and (e.get("handle") or "next") == handle
            ]
            continues = [graph["edges"][i]["to"] for i in replaced]
        out = handle_order(node)
        if continues and not out:
            raise EditError(
                f"A {kind.label} node ends the path, so nothing can follow it: add it after a free handle.",
                code="terminal_in_path",
                field="type",
            )
        # The new edge takes the old one's place: edge order is lane order for parallel branches.
        entry = _edge(source, handle, node_id)
        kept = (
            [entry if i == replaced[0] else e for i, e in enumerate(graph["edges"]) if i not in replaced[1:]]
            if replaced
            else [*graph["edges"], entry]
        )
        graph["edges"] = kept
        graph["edges"] += [_edge(node_id, out[0], target) for target in continues]
    graph["nodes"].append(node)
    return finish(graph, f"Add {kind.label}", [node_id])


def delete(graph: Mapping[str, Any], *, node_ids: list[Any]) -> Edited:
    """Remove nodes and their edges. A removed node with one way on is bridged: what led
    into it now leads where it led, so deleting a step in a path keeps the path whole."""
    graph = graph_copy(graph)
    wanted = distinct_nodes(graph, node_ids)
    for node_id in wanted:
        incoming = [e for e in graph["edges"] if e["to"] == node_id and e["from"] != node_id]
        onward = list(dict.fromkeys(e["to"] for e in graph["edges"] if e["from"] == node_id and e["to"] != node_id))
        graph["edges"] = [e for e in graph["edges"] if node_id not in (e["from"], e["to"])]
        graph["nodes"] = [n for n in graph["nodes"] if n["id"] != node_id]
        if len(onward) == 1:
            for e in incoming:
                handle = e.get("handle") or "next"
                if not _has_edge(graph, e["from"], handle, onward[0]):
                    graph["edges"].append(_edge(e["from"], handle, onward[0]))
    label = "Delete 1 node" if len(wanted) == 1 else f"Delete {len(wanted)} nodes"
    return finish(graph, label, [])


def distinct_nodes(graph: Mapping[str, Any], node_ids: Any) -> list[str]:
    if not isinstance(node_ids, list) or not node_ids:
        raise EditError("Select at least one node.", code="node_required", field="nodes")
    if len(node_ids) > 500:
        raise EditError("A draft has at most 500 nodes.", code="too_many_nodes", field="nodes")
    return list(dict.fromkeys(node_get(graph, node_id)["id"] for node_id in node_ids))


def connect(graph: Mapping[str, Any], *, source: Any, handle: Any, target: Any) -> Edited:
    graph = graph_copy(graph)
    source_node, target_node = node_get(graph, source), node_get(graph, target)
    handle = _check_handle(source_node, handle, graph)
    if target_node["type"] == "start":
        raise EditError("Nothing can lead into the start node.", code="edge_into_start", field="target")
    if source_node["id"] == target_node["id"]:
        raise EditError("A node cannot lead to itself.", code="self_edge", field="target")
    if _has_edge(graph, source_node["id"], handle, target_node["id"]):
        raise EditError(
            f"{source_node['id']} already leads to {target_node['id']} by {handle}.",
            code="duplicate_edge",
            field="target",
        )
    graph["edges"].append(_edge(source_node["id"], handle, target_node["id"]))
    return finish(graph, f"Connect {source_node['id']} ({handle}) to {target_node['id']}", [target_node["id"]])


def disconnect(graph: Mapping[str, Any], *, source: Any, handle: Any, target: Any) -> Edited:
    graph = graph_copy(graph)
    index = _find_edge(graph, source, handle, target)
    graph["edges"].pop(index)
    return finish(graph, f"Disconnect {source} ({handle or 'next'}) from {target}", [str(source)])


def rename(graph: Mapping[str, Any], *, node_id: Any, label: Any) -> Edited:
    graph = graph_copy(graph)
    node = node_get(graph, node_id)
    if not isinstance(label, str) or len(label) > MAX_LABEL:
        raise EditError(f"A name has at most {MAX_LABEL} characters.", code="invalid_label", field="label")
    label = " ".join(label.split())
    if label:
        node["label"] = label
    else:
        node.pop("label", None)
    return finish(graph, f"Rename {node['id']}", [node["id"]])


def configure(graph: Mapping[str, Any], *, node_id: Any, config: Any, label: Any = None) -> Edited:
    """Replace a node's config (a draft may keep an incomplete one: the canvas shows its errors)."""
    graph = graph_copy(graph)
    node = node_get(graph, node_id)
    if not isinstance(config, dict):
        raise EditError("A node's settings must be an object.", code="invalid_config", field="config")
    if len(json.dumps(config)) > MAX_CONFIG_BYTES:
        raise EditError("These settings are too large (at most 64 KiB).", code="config_too_large", field="config")
    node["config"] = config
    # Saving the form is looking at the node again: what a paste flagged is now the form's errors.
    node.pop("flags", None)
    if label is not None:
        if not isinstance(label, str) or len(label) > MAX_LABEL:
            raise EditError(f"A name has at most {MAX_LABEL} characters.", code="invalid_label", field="label")
        if " ".join(label.split()):
            node["label"] = " ".join(label.split())
        else:
            node.pop("label", None)
    # Edges by a handle the new config no longer has (a removed case) go with it.
    handles = handle_order(node)
    if handles or _kind(node["type"]).terminal:
        graph["edges"] = [
            e for e in graph["edges"] if e["from"] != node["id"] or (e.get("handle") or "next") in handles
        ]
    return finish(graph, f"Change {node['id']}", [node["id"]])


def duplicate(graph: Mapping[str, Any], *, node_ids: list[Any]) -> Edited:
    """Copies of the nodes with the edges between them, beside the original (not connected to it)."""
    graph = graph_copy(graph)
    wanted = distinct_nodes(graph, node_ids)
    nodes = _nodes(graph)
    if any(nodes[n]["type"] == "start" for n in wanted):
        raise EditError("A journey has one start node: it cannot be duplicated.", code="duplicate_start", field="nodes")
    copies = insert_copies(
        graph, [nodes[n] for n in wanted], [e for e in graph["edges"] if e["from"] in wanted and e["to"] in wanted]
    )
    label = "Duplicate 1 node" if len(wanted) == 1 else f"Duplicate {len(wanted)} nodes"
    return finish(graph, label, copies)


def insert_copies(graph: dict[str, Any], nodes: list[Mapping[str, Any]], edges: list[Mapping[str, Any]]) -> list[str]:
    """Add copies of ``nodes`` under new ids, with ``edges`` remapped; answers the new ids in order."""
    renamed: dict[str, str] = {}
    for node in nodes:
        renamed[node["id"]] = new_node_id(graph, node["type"], renamed.values())
    for node in nodes:
        fresh = copy.deepcopy(dict(node))
        fresh["id"] = renamed[node["id"]]
        fresh.pop("position", None)
        graph["nodes"].append(fresh)
    for e in edges:
        graph["edges"].append(_edge(renamed[e["from"]], e.get("handle") or "next", renamed[e["to"]]))
    return [renamed[node["id"]] for node in nodes]
