"""What the builder shows about a draft: every issue, and each node's state (valid, warning, error).

The same rules as publishing (``graph_issues``), with one difference: a draft that is not
finished yet still gets its references checked for the nodes whose settings are sound, so
a template missing from this project shows on its node before the journey is complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apps.projects.models import Project
from apps.workflows.graph import reference_issues, structure_issues, timezone_issues
from apps.workflows.nodes.base import GraphIssue, node_types

# The journey is not finished yet (an open handle, a node not connected): publishing
# refuses these too, but nothing is wrong with what is there.
WARNING_CODES = frozenset({"dangling_handle", "unreachable", "no_way_out"})
_CONFIG_CODES = frozenset({"invalid_config", "unresolved_reference", "unknown_node_type", "duplicate_node"})


@dataclass(frozen=True)
class DraftStatus:
    issues: list[GraphIssue]
    node_state: dict[str, str]  # node id -> "valid" | "warning" | "error"

    def for_node(self, node_id: str) -> list[GraphIssue]:
        return [issue for issue in self.issues if issue.node == node_id]

    @property
    def errors(self) -> int:
        return sum(1 for issue in self.issues if severity(issue) == "error")


def severity(issue: GraphIssue) -> str:
    return "warning" if issue.code in WARNING_CODES else "error"


def draft_status(graph: Any, *, project: Project) -> DraftStatus:
    issues = structure_issues(graph)
    nodes = list(graph.get("nodes", [])) if isinstance(graph, dict) else []
    shape_broken = any(issue.code == "invalid_graph" for issue in issues)
    if not shape_broken:
        flawed = {issue.node for issue in issues if issue.code in _CONFIG_CODES or issue.code.startswith("duplicate")}
        kinds = {n["id"]: node_types.get(n["type"]) for n in nodes if n["type"] in node_types and n["id"] not in flawed}
        configs = {n["id"]: n.get("config") or {} for n in nodes}
        issues = issues + reference_issues(project, kinds, configs) + timezone_issues(project, kinds, configs)
    sources = {index: edge.get("from") for index, edge in enumerate(graph.get("edges", []) if nodes else [])}
    state = {n["id"]: "valid" for n in nodes}
    for issue in issues:
        node = issue.node if issue.node is not None else sources.get(issue.edge) if issue.edge is not None else None
        if node in state and state[node] != "error":
            state[node] = severity(issue)
    return DraftStatus(issues, state)
