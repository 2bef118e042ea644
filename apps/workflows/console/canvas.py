"""What the builder's templates draw: the laid-out canvas, the palette and the issues, as plain data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apps.projects.models import Project
from apps.workflows.builder import layout as lanes
from apps.workflows.builder.history import history_state
from apps.workflows.builder.status import DraftStatus, draft_status, severity
from apps.workflows.models import Workflow
from apps.workflows.nodes.base import node_types

SEND_GROUP, FLOW_GROUP = "Messages", "Flow and data"


@dataclass
class PaletteEntry:
    type: str
    label: str
    description: str
    handles: list[str]
    group: str


@dataclass
class CanvasNode:
    id: str
    type: str
    title: str  # the type's label
    name: str  # the node's own label, else its id
    summary: str
    box: lanes.Box
    state: str
    issues: list[str] = field(default_factory=list)

    @property
    def subtitle(self) -> str:
        text = f"{self.title} · {self.summary}" if self.summary else self.title
        return text if len(text) <= 27 else text[:26] + "…"

    @property
    def w(self) -> int:
        return lanes.NODE_W

    @property
    def h(self) -> int:
        return lanes.NODE_H


def palette() -> list[PaletteEntry]:
    entries = []
    for name, kind in node_types.items():
        try:
            handles = list(kind.handles(kind.starter_config))
        except Exception:  # noqa: BLE001 - one odd type must not hide the palette
            handles = []
        group = SEND_GROUP if hasattr(kind, "channel") else FLOW_GROUP
        entries.append(PaletteEntry(name, kind.label, kind.description, handles, group))
    return sorted(entries, key=lambda e: (e.group != FLOW_GROUP, e.type != "start", e.label))


def summary(node: Mapping[str, Any]) -> str:
    """A line about the node's settings, read from the keys configs share (any node type)."""
    config = node.get("config") if isinstance(node.get("config"), Mapping) else {}
    if config.get("template"):
        return f"template {config['template']}"
    if isinstance(config.get("predicates"), list):
        return _predicates(config["predicates"], str(config.get("match") or "all"))
    if isinstance(config.get("cases"), list):
        return f"{len(config['cases'])} case{'s' if len(config['cases']) != 1 else ''} + default"
    if config.get("mode") == "duration":
        parts = [
            f"{config[u]} {u if config[u] != 1 else u[:-1]}"
            for u in ("weeks", "days", "hours", "minutes", "seconds")
            if config.get(u)
        ]
        return "for " + " ".join(parts) if parts else "for —"
    if config.get("mode") == "datetime":
        return f"until {config.get('at', '—')}"
    if config.get("mode"):
        when = {"weekday": str(config.get("weekday", "")).capitalize(), "day_of_month": f"day {config.get('day', '—')}"}
        prefix = when.get(str(config["mode"]), "")
        return f"until {prefix + ' ' if prefix else ''}{config.get('time', '—')}"
    if isinstance(config.get("tags"), list):
        return ", ".join(str(t) for t in config["tags"]) or "no tags yet"
    if config.get("reason"):
        return str(config["reason"])
    return ""


def _predicates(predicates: list[Any], match: str) -> str:
    words = {"has_tag": "has", "lacks_tag": "lacks", "in_segment": "in segment", "not_in_segment": "not in segment"}
    parts = []
    for p in predicates:
        if isinstance(p, Mapping):
            parts.append(f"{words.get(str(p.get('op')), p.get('op'))} {p.get('tag') or p.get('segment') or '—'}")
    if not parts:
        return "no conditions yet"
    joiner = {"any": " or ", "none": " nor "}.get(match, " and ")
    return ("none: " if match == "none" else "") + joiner.join(parts)


def workspace(
    workflow: Workflow, project: Project, status: DraftStatus | None = None, history: dict[str, Any] | None = None
) -> dict[str, Any]:
    graph = workflow.draft_graph or {"nodes": [], "edges": []}
    status = status or draft_status(graph, project=project)
    drawn = lanes.layout(graph)
    by_node: dict[str, list[str]] = {}
    for issue in status.issues:
        if issue.node:
            by_node.setdefault(issue.node, []).append(issue.message)
    nodes = []
    for node in graph.get("nodes", []):
        kind = node_types.get(node["type"]) if node["type"] in node_types else None
        nodes.append(
            CanvasNode(
                id=node["id"],
                type=node["type"],
                title=kind.label if kind else node["type"],
                name=node.get("label") or node["id"],
                summary=summary(node),
                box=drawn.boxes[node["id"]],
                state=status.node_state.get(node["id"], "error"),
                issues=by_node.get(node["id"], []),
            )
        )
    edge_sources = {i: e.get("from") for i, e in enumerate(graph.get("edges", []))}
    issues = [
        {
            "code": issue.code,
            "message": issue.message,
            "severity": severity(issue),
            "node": issue.node or (edge_sources.get(issue.edge) if issue.edge is not None else None),
        }
        for issue in status.issues
    ]
    return {
        "workflow": workflow,
        "layout": drawn,
        "nodes": nodes,
        "issues": issues,
        "errors": sum(1 for i in issues if i["severity"] == "error"),
        "warnings": sum(1 for i in issues if i["severity"] == "warning"),
        "history": history if history is not None else history_state(workflow),
        "node_w": lanes.NODE_W,
        "node_h": lanes.NODE_H,
    }
