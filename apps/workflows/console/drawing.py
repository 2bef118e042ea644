"""A read-only drawing of a version's graph: layers by distance from the start, as SVG data.

The visual builder comes later; this layout only has to be legible: each node sits in the
row of its shortest distance from the start, nodes of a row side by side, edges as lines
labelled with their handle.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

NODE_W, NODE_H, GAP_X, GAP_Y, MARGIN = 170, 54, 40, 70, 20


@dataclass
class DrawnNode:
    id: str
    type: str
    label: str
    x: int
    y: int
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def cx(self) -> int:
        return self.x + NODE_W // 2


@dataclass
class DrawnEdge:
    x1: int
    y1: int
    x2: int
    y2: int
    handle: str

    @property
    def label_x(self) -> int:
        return (self.x1 + self.x2) // 2

    @property
    def label_y(self) -> int:
        return (self.y1 + self.y2) // 2


@dataclass
class Drawing:
    nodes: list[DrawnNode]
    edges: list[DrawnEdge]
    width: int
    height: int
    node_w: int = NODE_W
    node_h: int = NODE_H


def draw(graph: dict[str, Any], counts: dict[str, dict[str, int]] | None = None) -> Drawing:
    nodes = {n["id"]: n for n in graph.get("nodes", [])}
    links: dict[str, list[str]] = defaultdict(list)
    for edge in graph.get("edges", []):
        links[edge["from"]].append(edge["to"])
    start = next((n for n, v in nodes.items() if v["type"] == "start"), next(iter(nodes), None))
    depth: dict[str, int] = {}
    if start is not None:
        depth[start] = 0
        queue = deque([start])
        while queue:
            current = queue.popleft()
            for target in links[current]:
                if target in nodes and target not in depth:
                    depth[target] = depth[current] + 1
                    queue.append(target)
    bottom = max(depth.values(), default=-1) + 1
    for node_id in nodes:
        depth.setdefault(node_id, bottom)  # unreachable nodes sit in a last row
    rows: dict[int, list[str]] = defaultdict(list)
    for node_id in nodes:
        rows[depth[node_id]].append(node_id)
    widest = max((len(r) for r in rows.values()), default=1)
    width = MARGIN * 2 + widest * NODE_W + (widest - 1) * GAP_X
    drawn: dict[str, DrawnNode] = {}
    for row, members in sorted(rows.items()):
        row_width = len(members) * NODE_W + (len(members) - 1) * GAP_X
        left = (width - row_width) // 2
        for index, node_id in enumerate(members):
            node = nodes[node_id]
            drawn[node_id] = DrawnNode(
                id=node_id,
                type=node["type"],
                label=node.get("label") or node_id,
                x=left + index * (NODE_W + GAP_X),
                y=MARGIN + row * (NODE_H + GAP_Y),
                counts=(counts or {}).get(node_id, {}),
            )
    edges = []
    for edge in graph.get("edges", []):
        source, target = drawn.get(edge["from"]), drawn.get(edge["to"])
        if source and target:
            edges.append(DrawnEdge(source.cx, source.y + NODE_H, target.cx, target.y, edge.get("handle") or "next"))
    height = MARGIN * 2 + (max(rows, default=0) + 1) * (NODE_H + GAP_Y) - GAP_Y
    return Drawing(nodes=list(drawn.values()), edges=edges, width=width, height=height)
