"""The graph format and its validation on publish.

A graph is ``{"nodes": [{id, type, config, position?, label?, flags?}], "edges": [{from,
handle, to}]}``. ``position``, ``label`` and ``flags`` are for the builder and ignored by the
engine. One handle may lead to several nodes (parallel branches, merged again by a join).

``graph_issues`` answers every problem at once, each naming its node or edge, so a
builder or CI job can show them all.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apps.projects.models import Project
from apps.workflows.nodes.base import GraphIssue, NodeType, node_types, schema_validator

GRAPH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["nodes", "edges"],
    "properties": {
        "nodes": {
            "type": "array",
            "maxItems": 500,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "type"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
                    "type": {"type": "string", "minLength": 1, "maxLength": 32},
                    "config": {"type": "object"},
                    "label": {"type": "string", "maxLength": 200},
                    "position": {"type": "object"},
                    # What the builder could not carry over (a pasted node's template or segment
                    # with no match in this project); publishing is refused while any is left.
                    "flags": {"type": "array", "maxItems": 20, "items": {"type": "string", "maxLength": 300}},
                },
            },
        },
        "edges": {
            "type": "array",
            "maxItems": 2000,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["from", "to"],
                "properties": {
                    "from": {"type": "string"},
                    "to": {"type": "string"},
                    "handle": {"type": "string", "maxLength": 32},
                },
            },
        },
    },
}

EMPTY_GRAPH: dict[str, Any] = {"nodes": [], "edges": []}


_NODE_KEYS = frozenset(GRAPH_SCHEMA["properties"]["nodes"]["items"]["properties"])
_EDGE_KEYS = frozenset(GRAPH_SCHEMA["properties"]["edges"]["items"]["properties"])
_NODE_ID = re.compile(GRAPH_SCHEMA["properties"]["nodes"]["items"]["properties"]["id"]["pattern"])


def _plainly_sound(graph: Any) -> bool:
    """``GRAPH_SCHEMA`` checked by hand for the common case of a sound graph: the builder
    checks a 100-node draft on every edit, and jsonschema takes tens of milliseconds for it.
    Any doubt answers False, and jsonschema then names the problem."""
    if not isinstance(graph, dict) or set(graph) != {"nodes", "edges"}:
        return False
    nodes, edges = graph["nodes"], graph["edges"]
    if not isinstance(nodes, list) or not isinstance(edges, list) or len(nodes) > 500 or len(edges) > 2000:
        return False
    for node in nodes:
        if not isinstance(node, dict) or not node.keys() <= _NODE_KEYS:
            return False
        node_id, kind = node.get("id"), node.get("type")
        if not isinstance(node_id, str) or not _NODE_ID.fullmatch(node_id):
            return False
        if not isinstance(kind, str) or not 1 <= len(kind) <= 32:
            return False
        if not isinstance(node.get("config", {}), dict) or not isinstance(node.get("position", {}), dict):
            return False
        if not isinstance(node.get("label", ""), str) or len(node.get("label", "")) > 200:
            return False
        flags = node.get("flags", [])
        if (
            not isinstance(flags, list)
            or len(flags) > 20
            or not all(isinstance(f, str) and len(f) <= 300 for f in flags)
        ):
            return False
    for edge in edges:
        if not isinstance(edge, dict) or not edge.keys() <= _EDGE_KEYS or not {"from", "to"} <= edge.keys():
            return False
        if not isinstance(edge["from"], str) or not isinstance(edge["to"], str):
            return False
        handle = edge.get("handle", "")
        if not isinstance(handle, str) or len(handle) > 32:
            return False
    return True


def shape_issues(graph: Any) -> list[GraphIssue]:
    if _plainly_sound(graph):
        return []
    validator = schema_validator(GRAPH_SCHEMA)
    issues = []
    for error in sorted(validator.iter_errors(graph), key=lambda e: list(e.absolute_path)):
        path = list(error.absolute_path)
        where = "/".join(str(p) for p in path) or "graph"
        node = edge = None
        if len(path) >= 2 and path[0] == "nodes":
            node = _node_label(graph, int(path[1]))
        if len(path) >= 2 and path[0] == "edges":
            edge = int(path[1])
        issues.append(GraphIssue("invalid_graph", f"{where}: {error.message}", node=node, edge=edge))
    return issues


def _node_label(graph: Any, index: int) -> str:
    try:
        return str(graph["nodes"][index].get("id") or f"#{index}")
    except (KeyError, IndexError, AttributeError, TypeError):
        return f"#{index}"


@dataclass(frozen=True)
class Graph:
    """A validated graph, indexed for the engine."""

    nodes: dict[str, dict[str, Any]]
    # (node id, handle) -> target node ids, in edge order
    next: dict[tuple[str, str], list[str]]

    @classmethod
    def parse(cls, graph: Mapping[str, Any]) -> Graph:
        nodes = {node["id"]: {"type": node["type"], "config": node.get("config") or {}} for node in graph["nodes"]}
        following: dict[tuple[str, str], list[str]] = defaultdict(list)
        for edge in graph["edges"]:
            following[(edge["from"], edge.get("handle") or "next")].append(edge["to"])
        return cls(nodes=nodes, next=dict(following))

    @property
    def start(self) -> str:
        return next(node_id for node_id, node in self.nodes.items() if node["type"] == "start")

    def node_type(self, node_id: str) -> str:
        return self.nodes[node_id]["type"]

    def config(self, node_id: str) -> dict[str, Any]:
        return self.nodes[node_id]["config"]

    def targets(self, node_id: str, handle: str) -> list[str]:
        return self.next.get((node_id, handle), [])

    @property
    def single_path(self) -> bool:
        """No handle leads to two nodes: a journey then has one open step at a time."""
        return all(len(targets) <= 1 for targets in self.next.values())


def graph_issues(graph: Any, *, project: Project) -> list[GraphIssue]:
    issues = structure_issues(graph)
    if issues:
        return issues
    kinds = {node["id"]: node_types.get(node["type"]) for node in graph["nodes"]}
    configs = {node["id"]: node.get("config") or {} for node in graph["nodes"]}
    return reference_issues(project, kinds, configs) + timezone_issues(project, kinds, configs)


def structure_issues(graph: Any) -> list[GraphIssue]:
    """Every rule that needs no project: shape, configs, edges, paths and loops."""
    issues = shape_issues(graph)
    if issues:
        return issues
    kinds: dict[str, NodeType] = {}
    seen: set[str] = set()
    for node in graph["nodes"]:
        node_id, type_name = node["id"], node["type"]
        if node_id in seen:
            issues.append(GraphIssue("duplicate_node", f"Two nodes share the id {node_id!r}.", node=node_id))
            continue
        seen.add(node_id)
        if type_name not in node_types:
            known = ", ".join(node_types)
            issues.append(
                GraphIssue(
                    "unknown_node_type", f"Node {node_id!r} has unknown type {type_name!r} ({known}).", node=node_id
                )
            )
            continue
        kinds[node_id] = node_types.get(type_name)
        issues += kinds[node_id].config_issues(node_id, node.get("config") or {})
        issues += [
            GraphIssue("unresolved_reference", f"Node {node_id!r}: {flag}", node=node_id)
            for flag in node.get("flags", [])
        ]
    configs = {node["id"]: node.get("config") or {} for node in graph["nodes"]}

    starts = [node_id for node_id, kind in kinds.items() if kind.type == "start"]
    if len(starts) != 1:
        issues.append(
            GraphIssue(
                "start_count",
                f"A workflow needs exactly one start node; this one has {len(starts)}"
                + (f" ({', '.join(starts)})." if starts else "."),
                node=starts[1] if len(starts) > 1 else None,
            )
        )
    config_ok = {n for n in kinds if not any(i.node == n and i.code != "unknown_node_type" for i in issues)}
    issues += _edge_issues(graph["edges"], kinds, configs, config_ok)
    if issues:
        # Paths and cycles are only meaningful once nodes and edges are individually sound.
        return issues
    return _path_issues(Graph.parse(graph), kinds, configs, starts[0])


def _edge_issues(
    edges: list[dict[str, Any]], kinds: dict[str, NodeType], configs: dict[str, Any], config_ok: set[str]
) -> list[GraphIssue]:
    issues: list[GraphIssue] = []
    seen: set[tuple[str, str, str]] = set()
    used: set[tuple[str, str]] = set()
    for index, edge in enumerate(edges):
        source, target, handle = edge["from"], edge["to"], edge.get("handle") or "next"
        label = f"Edge {index} ({source} -[{handle}]-> {target})"
        if source not in kinds or target not in kinds:
            missing = source if source not in kinds else target
            issues.append(GraphIssue("unknown_node", f"{label} names the unknown node {missing!r}.", edge=index))
            continue
        if kinds[source].terminal:
            issues.append(GraphIssue("edge_from_terminal", f"{label} leaves a {kinds[source].type} node.", edge=index))
            continue
        if kinds[target].type == "start":
            issues.append(GraphIssue("edge_into_start", f"{label} leads back into the start node.", edge=index))
            continue
        if source in config_ok and handle not in kinds[source].handles(configs[source]):
            allowed = ", ".join(kinds[source].handles(configs[source]))
            issues.append(
                GraphIssue(
                    "unknown_handle",
                    f"{label}: a {kinds[source].type} node has no handle {handle!r} ({allowed}).",
                    edge=index,
                )
            )
            continue
        if (source, handle, target) in seen:
            issues.append(GraphIssue("duplicate_edge", f"{label} repeats an earlier edge.", edge=index))
        seen.add((source, handle, target))
        used.add((source, handle))
    for node_id in sorted(config_ok):
        kind = kinds[node_id]
        for handle in kind.handles(configs[node_id]):
            if (node_id, handle) not in used:
                issues.append(
                    GraphIssue(
                        "dangling_handle",
                        f"Node {node_id!r} ({kind.type}) has no edge for its handle {handle!r}: "
                        "every path must end in an end or stop node.",
                        node=node_id,
                    )
                )
    return issues


def _path_issues(graph: Graph, kinds: dict[str, NodeType], configs: dict[str, Any], start: str) -> list[GraphIssue]:
    issues: list[GraphIssue] = []
    forward: dict[str, set[str]] = defaultdict(set)
    backward: dict[str, set[str]] = defaultdict(set)
    for (source, _), targets in graph.next.items():
        for target in targets:
            forward[source].add(target)
            backward[target].add(source)
    reachable = _walk(start, forward)
    for node_id in kinds:
        if node_id not in reachable:
            issues.append(
                GraphIssue("unreachable", f"Node {node_id!r} cannot be reached from the start.", node=node_id)
            )
    finishing: set[str] = set()
    for node_id, kind in kinds.items():
        if kind.terminal:
            finishing |= _walk(node_id, backward)
    for node_id in kinds:
        if node_id in reachable and node_id not in finishing:
            issues.append(
                GraphIssue("no_way_out", f"From node {node_id!r} no path reaches an end or stop node.", node=node_id)
            )
    # A cycle is only safe when a wait sits on it; otherwise a subscriber could loop at full speed.
    instant = {n for n, kind in kinds.items() if not kind.waits_for_time}
    for component in _cycles({n: forward[n] & instant for n in instant}):
        names = ", ".join(sorted(component))
        issues.append(
            GraphIssue(
                "cycle_without_wait", f"Nodes {names} form a loop with no wait on it.", node=sorted(component)[0]
            )
        )
    return issues


def _walk(origin: str, links: Mapping[str, set[str]]) -> set[str]:
    seen = {origin}
    todo = [origin]
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def _cycles(links: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components that contain a cycle (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0
    for root in sorted(links):
        if root in index:
            continue
        work = [(root, iter(sorted(links[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(links.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in links.get(node, ()):
                    found.append(component)
    return found


def reference_issues(project: Project, kinds: Mapping[str, NodeType], configs: Mapping[str, Any]) -> list[GraphIssue]:
    """Templates, tags and segments the configs name that the project does not have."""
    from apps.subscribers.models import Segment, Tag

    wanted = {node_id: kind.references(configs[node_id]) for node_id, kind in kinds.items()}
    # Tags an add-tag node creates count as existing for the rest of the graph.
    created = {tag for node_id, kind in kinds.items() if kind.type == "add_tag" for tag in configs[node_id]["tags"]}
    all_tags = {tag for refs in wanted.values() for tag in refs.tags}
    known_tags = set(Tag.objects.for_project(project).filter(name__in=all_tags).values_list("name", flat=True))
    all_segments = {s for refs in wanted.values() for s in refs.segments}
    known_segments = set(Segment.objects.for_project(project).filter(pk__in=all_segments).values_list("pk", flat=True))
    all_templates = {t for refs in wanted.values() for t in refs.templates}
    known_templates = _known_templates(project, all_templates)
    known_connectors = _known_connectors(project, {c for refs in wanted.values() for c, _ in refs.connectors})
    issues = []
    for node_id, refs in wanted.items():
        for tag in refs.tags:
            if tag not in known_tags and tag not in created:
                issues.append(
                    GraphIssue(
                        "unknown_tag",
                        f"Node {node_id!r} names the tag {tag!r}, which this project does not have.",
                        node=node_id,
                    )
                )
        for segment in refs.segments:
            if segment not in known_segments:
                issues.append(
                    GraphIssue(
                        "unknown_segment",
                        f"Node {node_id!r} names segment {segment}, which this project does not have.",
                        node=node_id,
                    )
                )
        for key, channel in refs.templates:
            if (key, channel) not in known_templates:
                issues.append(
                    GraphIssue(
                        "unknown_template",
                        f"Node {node_id!r} names the {channel} template {key!r}, which this project does not have.",
                        node=node_id,
                    )
                )
        for connector, channel in refs.connectors:
            if known_connectors.get(connector) != channel:
                issues.append(
                    GraphIssue(
                        "unknown_connector",
                        f"Node {node_id!r} names connector {connector}, which this project has no {channel} "
                        "connector by.",
                        node=node_id,
                    )
                )
    return issues


def _known_connectors(project: Project, wanted: set[int]) -> dict[int, str]:
    if not wanted:
        return {}
    from apps.delivery.models import Connector

    return dict(Connector.objects.for_project(project).filter(pk__in=wanted).values_list("pk", "channel"))


def _known_templates(project: Project, wanted: set[tuple[str, str]]) -> set[tuple[str, str]]:
    if not wanted:
        return set()
    from apps.delivery.models import Template

    keys = {key for key, _ in wanted}
    return set(Template.objects.filter(project=project, key__in=keys).values_list("key", "channel"))


def timezone_issues(project: Project, kinds: Mapping[str, NodeType], configs: Mapping[str, Any]) -> list[GraphIssue]:
    if project.timezone:
        return []
    return [
        GraphIssue(
            "timezone_required",
            f"Node {node_id!r} waits until a local time, but the project has no timezone; "
            "set one (subscribers without their own would have none).",
            node=node_id,
        )
        for node_id, kind in kinds.items()
        if kind.needs_timezone(configs[node_id])
    ]
