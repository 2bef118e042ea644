"""Copy and paste of journey nodes through the system clipboard, within or across projects.

What is copied is a small JSON document: the nodes with their configs and the edges
between them, plus the names behind every id a config holds (segments, connectors) so
that another project can find its own. Pasting gives every node a new id; a template,
segment or connector that the target project has no match for is left for the staff
member to choose again and flagged on the node, never pointed at a wrong object.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from apps.projects.models import Project
from apps.workflows.builder.edits import Edited, EditError, distinct_nodes, finish, graph_copy, insert_copies
from apps.workflows.graph import GRAPH_SCHEMA
from apps.workflows.nodes.base import node_types

FORMAT = "tidings/journey-nodes"
VERSION = 1
MAX_PASTE_BYTES = 512 * 1024
NOT_NODES = (
    "The clipboard holds no copied journey nodes. Select nodes in a journey and copy them "
    "(Ctrl+C or ⌘C), then paste here."
)


def _predicate_lists(config: Mapping[str, Any]) -> Iterable[list[Any]]:
    if isinstance(config.get("predicates"), list):
        yield config["predicates"]
    for case in config.get("cases") or []:
        if isinstance(case, Mapping) and isinstance(case.get("predicates"), list):
            yield case["predicates"]


def _segment_ids(nodes: Iterable[Mapping[str, Any]]) -> set[int]:
    return {
        p["segment"]
        for node in nodes
        for predicates in _predicate_lists(node.get("config") or {})
        for p in predicates
        if isinstance(p, Mapping) and isinstance(p.get("segment"), int)
    }


def copy_payload(graph: Mapping[str, Any], *, project: Project, node_ids: list[Any]) -> dict[str, Any]:
    from apps.delivery.models import Connector
    from apps.subscribers.models import Segment

    wanted = distinct_nodes(graph, node_ids)
    by_id = {node["id"]: node for node in graph["nodes"]}
    nodes = [copy.deepcopy(by_id[n]) for n in wanted if by_id[n]["type"] != "start"]
    if not nodes:
        raise EditError("A journey has one start node: it cannot be copied.", code="copy_start", field="nodes")
    kept = {node["id"] for node in nodes}
    edges = [
        {"from": e["from"], "handle": e.get("handle") or "next", "to": e["to"]}
        for e in graph["edges"]
        if e["from"] in kept and e["to"] in kept
    ]
    segments = dict(Segment.objects.for_project(project).filter(pk__in=_segment_ids(nodes)).values_list("pk", "name"))
    connector_ids = {
        n["config"]["connector"] for n in nodes if isinstance((n.get("config") or {}).get("connector"), int)
    }
    connectors = {
        pk: {"channel": channel, "provider": provider, "name": name}
        for pk, channel, provider, name in Connector.objects.for_project(project)
        .filter(pk__in=connector_ids)
        .values_list("pk", "channel", "provider", "name")
    }
    return {
        "format": FORMAT,
        "version": VERSION,
        "project": project.pk,
        "nodes": nodes,
        "edges": edges,
        "references": {
            "segments": {str(pk): name for pk, name in segments.items()},
            "connectors": {str(pk): c for pk, c in connectors.items()},
        },
    }


def parse_payload(text: Any) -> dict[str, Any]:
    """The copied document, or ``EditError`` saying why this is not one."""
    if not isinstance(text, str) or not text.strip():
        raise EditError(NOT_NODES, code="clipboard_not_nodes", field="payload")
    if len(text.encode()) > MAX_PASTE_BYTES:
        raise EditError(
            f"The clipboard holds more than {MAX_PASTE_BYTES // 1024} KiB: that is not copied journey nodes.",
            code="clipboard_too_large",
            field="payload",
        )
    try:
        data = json.loads(text)
    except ValueError:
        raise EditError(NOT_NODES, code="clipboard_not_nodes", field="payload") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise EditError(NOT_NODES, code="clipboard_not_nodes", field="payload")
    if data.get("version") != VERSION:
        raise EditError(
            "These nodes were copied by another version of Tidings; copy them again.", code="clipboard_version"
        )
    nodes, edges = data.get("nodes"), data.get("edges")
    node_schema = GRAPH_SCHEMA["properties"]["nodes"]
    if not isinstance(nodes, list) or not nodes or len(nodes) > node_schema["maxItems"]:
        raise EditError(NOT_NODES, code="clipboard_not_nodes", field="payload")
    from apps.workflows.graph import shape_issues

    problems = shape_issues({"nodes": nodes, "edges": edges if isinstance(edges, list) else None})
    if problems:
        raise EditError(f"The copied nodes are damaged: {problems[0].message}", code="clipboard_damaged")
    ids = [n["id"] for n in nodes]
    if len(set(ids)) != len(ids):
        raise EditError("The copied nodes are damaged: two share an id.", code="clipboard_damaged")
    for node in nodes:
        if node["type"] not in node_types:
            raise EditError(f"The copied nodes include an unknown type {node['type']!r}.", code="clipboard_damaged")
        if node["type"] == "start":
            raise EditError("A journey has one start node: it cannot be pasted.", code="clipboard_start")
    if any(e["from"] not in ids or e["to"] not in ids for e in edges):
        raise EditError("The copied nodes are damaged: an edge leads outside them.", code="clipboard_damaged")
    references = data.get("references") if isinstance(data.get("references"), dict) else {}
    return {"project": data.get("project"), "nodes": nodes, "edges": edges, "references": references}


def paste(graph: Mapping[str, Any], *, project: Project, text: Any) -> Edited:
    payload = parse_payload(text)
    nodes = [copy.deepcopy(n) for n in payload["nodes"]]
    if payload["project"] != project.pk:
        _remap(nodes, project, payload["references"])
        _flag_templates(nodes, project)
    graph = graph_copy(graph)
    new_ids = insert_copies(graph, nodes, payload["edges"])
    label = "Paste 1 node" if len(new_ids) == 1 else f"Paste {len(new_ids)} nodes"
    return finish(graph, label, new_ids)


def _flag(node: dict[str, Any], message: str) -> None:
    flags = node.setdefault("flags", [])
    if message not in flags and len(flags) < 20:
        flags.append(message[:300])


def _remap(nodes: list[dict[str, Any]], project: Project, references: Mapping[str, Any]) -> None:
    """Another project's ids mean nothing here: find this project's object of the same name."""
    from apps.delivery.models import Connector
    from apps.subscribers.models import Segment

    segment_names = references.get("segments") if isinstance(references.get("segments"), dict) else {}
    here = dict(
        Segment.objects.for_project(project)
        .filter(name__in=[str(v) for v in segment_names.values()])
        .values_list("name", "pk")
    )
    connectors = references.get("connectors") if isinstance(references.get("connectors"), dict) else {}
    for node in nodes:
        config = node.get("config") or {}
        for predicates in _predicate_lists(config):
            for predicate in predicates:
                if not isinstance(predicate, dict) or "segment" not in predicate:
                    continue
                name = segment_names.get(str(predicate["segment"]))
                if name is not None and name in here:
                    predicate["segment"] = here[name]
                else:
                    del predicate["segment"]
                    what = f"segment {name!r}" if name else "a segment"
                    _flag(node, f"copied from another project, {what} has no match here: choose a segment.")
        if "connector" in config:
            source = connectors.get(str(config["connector"]))
            match = None
            if isinstance(source, dict):
                match = (
                    Connector.objects.for_project(project)
                    .filter(channel=source.get("channel"), provider=source.get("provider"), name=source.get("name"))
                    .values_list("pk", flat=True)
                    .first()
                )
            if match:
                config["connector"] = match
            else:
                del config["connector"]
                name = source.get("name") or source.get("provider") if isinstance(source, dict) else None
                _flag(
                    node,
                    f"copied from another project, connector {name!r} has no match here: it sends "
                    "through the channel's default connector unless you choose one.",
                )


def _flag_templates(nodes: list[dict[str, Any]], project: Project) -> None:
    from apps.delivery.models import Template

    wanted = {}
    for node in nodes:
        kind = node_types.get(node["type"])
        refs = kind.references(node.get("config") or {}) if hasattr(kind, "channel") else None
        for key, channel in refs.templates if refs else []:
            if key:
                wanted.setdefault((key, channel), []).append(node)
    if not wanted:
        return
    known = set(
        Template.objects.for_project(project).filter(key__in={key for key, _ in wanted}).values_list("key", "channel")
    )
    for (key, channel), holders in wanted.items():
        if (key, channel) not in known:
            for node in holders:
                _flag(
                    node, f"the {channel} template {key!r} does not exist in this project: create it or choose another."
                )
