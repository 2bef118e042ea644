"""The lanes layout: where each node of a journey graph sits on the canvas, and how each edge runs.

A layered (Sugiyama-family) layout specialised for journey graphs:

- Rows: a node sits one row below the lowest of its parents (longest path from the
  roots), so a join is always below every branch that reaches it. Edges that close a
  loop (back to a node still open in a depth-first walk) are drawn up the right side
  and take no part in the rows.
- Lanes: every node whose outgoing edges lead to several nodes opens lanes, one per
  target in handle order, side by side; they converge at the node's immediate
  post-dominator (its join), which is centred below them. A lane is as wide as the
  widest lane nesting inside it, so lanes never share columns between their branch
  and their join, and a node added inside one lane moves nothing in another.
- Edges run through the channels between rows and the gutters between columns; a
  vertical stretch is only ever drawn where no node stands, so no edge crosses a node.

Everything is computed from the graph alone, ordered by handle order, edge order and
node id, so the same graph always gets the same picture.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apps.workflows.builder.geometry import (  # noqa: F401 - the layout's shapes are named from here too
    BACK_EDGE_STEP,
    CHANNEL,
    MARGIN_X,
    MARGIN_Y,
    NODE_H,
    NODE_W,
    ROW,
    SLOT,
    Box,
    LaneSpan,
    Layout,
    Port,
    Route,
)
from apps.workflows.builder.routing import route_edges
from apps.workflows.nodes.base import node_types

_SINK = "\x00sink"


@dataclass
class _Lane:
    handle: str
    target: str
    chain: list[Any]  # node ids and _Lanes


@dataclass
class _Lanes:
    branch: str
    lanes: list[_Lane]


def handle_order(node: Mapping[str, Any]) -> list[str]:
    """The node type's own handles for this config; an unknown type or a broken config has none."""
    try:
        kind = node_types.get(str(node.get("type")))
        return [str(h) for h in kind.handles(node.get("config") or {})]
    except Exception:  # noqa: BLE001 - a draft may hold any config; the layout must still draw it
        return []


class _Graph:
    def __init__(self, graph: Mapping[str, Any]) -> None:
        self.nodes: dict[str, Mapping[str, Any]] = {}
        for node in graph.get("nodes") or []:
            if isinstance(node, Mapping) and isinstance(node.get("id"), str) and node["id"] not in self.nodes:
                self.nodes[node["id"]] = node
        self.handles = {node_id: handle_order(node) for node_id, node in self.nodes.items()}
        # node -> [(handle, target, edge index)] in handle order, then target id
        self.out: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
        for index, edge in enumerate(graph.get("edges") or []):
            if not isinstance(edge, Mapping):
                continue
            source, target = edge.get("from"), edge.get("to")
            if source in self.nodes and target in self.nodes:
                self.out[source].append((str(edge.get("handle") or "next"), target, index))
        for node_id, edges in self.out.items():
            known = self.handles[node_id]
            rank = {handle: i for i, handle in enumerate(known)}
            # Handles in the type's order; one handle's targets in edge order (parallel lanes
            # keep the order they were drawn in).
            edges.sort(key=lambda e: (rank.get(e[0], len(known)), e[0], e[2]))

    def roots(self) -> list[str]:
        starts = sorted(n for n, node in self.nodes.items() if node.get("type") == "start")
        has_parent = {target for edges in self.out.values() for _, target, _ in edges}
        orphans = sorted(n for n in self.nodes if n not in has_parent and n not in starts)
        return starts + orphans + sorted(self.nodes)


def _classify(graph: _Graph) -> tuple[set[int], list[str]]:
    """Back edges (to a node still on the depth-first stack) and a topological order."""
    state: dict[str, int] = {}  # 1 open, 2 done
    back: set[int] = set()
    finished: list[str] = []
    for root in graph.roots():
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(graph.out.get(root, ())))]
        while stack:
            node, children = stack[-1]
            for _, target, index in children:
                seen = state.get(target)
                if seen == 1:
                    back.add(index)
                elif seen is None:
                    state[target] = 1
                    stack.append((target, iter(graph.out.get(target, ()))))
                    break
            else:
                stack.pop()
                state[node] = 2
                finished.append(node)
    finished.reverse()
    return back, finished


def _post_dominators(successors: dict[str, list[str]], order: list[str]) -> dict[str, str]:
    """Immediate post-dominator of every node (``_SINK`` when branches never meet again).

    Cooper, Harvey and Kennedy's iterative algorithm on the reversed graph, whose root is
    a virtual sink that every node without a successor leads to.
    """
    # Numbered so that a post-dominator always outnumbers the nodes it post-dominates:
    # in a topological order every successor comes after its node.
    po = {node: i for i, node in enumerate(order)}
    po[_SINK] = len(order)
    ipdom: dict[str, str] = {_SINK: _SINK}

    def intersect(a: str, b: str) -> str:
        while a != b:
            while po[a] < po[b]:
                a = ipdom[a]
            while po[b] < po[a]:
                b = ipdom[b]
        return a

    changed = True
    while changed:
        changed = False
        for node in reversed(order):  # reverse post-order of the reversed graph
            new = None
            for succ in successors.get(node, ()):
                if succ in ipdom:
                    new = succ if new is None else intersect(succ, new)
            if new is not None and ipdom.get(node) != new:
                ipdom[node] = new
                changed = True
    return ipdom


def _build_chain(entry: str, until: str | None, flow: _Flow, placed: set[str]) -> list[Any]:
    chain: list[Any] = []
    node: str | None = entry
    while node is not None and node != until and node not in placed:
        placed.add(node)
        chain.append(node)
        lanes = flow.lanes_of(node)
        if lanes is None:
            targets = flow.targets(node)
            node = targets[0] if targets else None
            continue
        join = flow.ipdom.get(node, _SINK)
        join_id = None if join == _SINK else join
        built = []
        for handle, target in lanes:
            if target is None or target == join_id or target in placed:
                # A lane kept open: a handle with no edge yet, one straight to the join, or one
                # to a node drawn elsewhere. It keeps its width, so filling it moves nothing.
                built.append(_Lane(handle, target or "", []))
            else:
                built.append(_Lane(handle, target, _build_chain(target, join_id, flow, placed)))
        chain.append(_Lanes(node, built))
        node = join_id
    return chain


class _Flow:
    """The graph without the edges that close loops: what rows, lanes and joins are made of."""

    def __init__(self, g: _Graph, back: set[int]) -> None:
        self.handles: dict[str, list[str]] = {}
        self.by_handle: dict[str, dict[str, list[str]]] = defaultdict(dict)
        self.successors: dict[str, list[str]] = {}
        for node in g.nodes:
            used = [h for h, _, _ in g.out.get(node, ())]
            handles = list(g.handles[node]) + sorted({h for h in used if h not in g.handles[node]})
            self.handles[node] = handles
            for handle in handles:
                self.by_handle[node][handle] = []
            for handle, target, index in g.out.get(node, ()):
                if index not in back and target not in self.by_handle[node][handle]:
                    self.by_handle[node][handle].append(target)
            # A handle with nowhere to go yet is a way out of the graph (so is a node that
            # ends the path); one that only goes back up a loop leaves through the loop.
            looping = {h for h, _, index in g.out.get(node, ()) if index in back}
            succ: list[str] = [] if handles else [_SINK]
            for handle in handles:
                targets = self.by_handle[node][handle]
                if targets:
                    succ += [t for t in targets if t not in succ]
                elif handle not in looping and _SINK not in succ:
                    succ.append(_SINK)
            self.successors[node] = succ
        self.ipdom: dict[str, str] = {}

    def targets(self, node: str) -> list[str]:
        return [t for t in self.successors[node] if t != _SINK]

    def lanes_of(self, node: str) -> list[tuple[str, str | None]] | None:
        """(handle, first node) of each lane below ``node``, or None when it opens none.

        A node with several handles (a condition) keeps one lane per handle, used or not,
        so filling one in never moves another; one handle leading to several nodes
        (parallel branches) opens a lane per node.
        """
        handles = self.handles[node]
        if len(handles) < 2 and len(self.targets(node)) < 2:
            return None
        lanes: list[tuple[str, str | None]] = []
        seen: set[str] = set()
        for handle in handles:
            targets = self.by_handle[node][handle]
            if not targets:
                lanes.append((handle, None))
            for target in targets:
                if target not in seen:
                    seen.add(target)
                    lanes.append((handle, target))
                elif len(handles) >= 2:
                    lanes.append((handle, None))
        return lanes


def _width(chain: list[Any], memo: dict[int, int]) -> int:
    widest = 1
    for item in chain:
        if isinstance(item, _Lanes):
            widest = max(widest, _lanes_width(item, memo))
    memo[id(chain)] = widest
    return widest


def _lanes_width(item: _Lanes, memo: dict[int, int]) -> int:
    return sum(_width(lane.chain, memo) if lane.chain else 1 for lane in item.lanes)


def _assign(
    chain: list[Any], left: int, memo: dict[int, int], centers: dict[str, float], spans: list[LaneSpan]
) -> None:
    width = memo[id(chain)]
    for item in chain:
        if isinstance(item, str):
            centers[item] = left + width / 2
            continue
        total = sum(memo[id(lane.chain)] if lane.chain else 1 for lane in item.lanes)
        x = left + (width - total) // 2
        for lane in item.lanes:
            lane_width = memo[id(lane.chain)] if lane.chain else 1
            spans.append(LaneSpan(item.branch, lane.handle, x, x + lane_width, not lane.chain))
            if lane.chain:
                _assign(lane.chain, x, memo, centers, spans)
            x += lane_width


def layout(graph: Mapping[str, Any]) -> Layout:
    g = _Graph(graph)
    back, order = _classify(g)
    flow = _Flow(g, back)
    parents: dict[str, set[str]] = defaultdict(set)
    for source in g.nodes:
        for target in flow.targets(source):
            parents[target].add(source)
    rows: dict[str, int] = {}
    for node in order:
        rows[node] = max((rows[p] + 1 for p in parents.get(node, ())), default=0)
    flow.ipdom = _post_dominators(flow.successors, order)

    placed: set[str] = set()
    chains = []
    for root in g.roots():
        if root not in placed:
            chains.append(_build_chain(root, None, flow, placed))
    memo: dict[int, int] = {}
    centers: dict[str, float] = {}
    spans: list[LaneSpan] = []
    left = 0
    for chain in chains:
        width = _width(chain, memo)
        _assign(chain, left, memo, centers, spans)
        left += width
    columns = left

    boxes = {
        node: Box(
            node,
            x=MARGIN_X + round(centers[node] * SLOT) - NODE_W // 2,
            y=MARGIN_Y + rows[node] * ROW,
            row=rows[node],
            center=centers[node],
        )
        for node in g.nodes
    }
    routes, ports, back_count = route_edges(g.out, g.handles, boxes, spans, back, columns)
    height = MARGIN_Y + (max(rows.values(), default=0) + 1) * ROW + MARGIN_Y
    width = MARGIN_X + columns * SLOT + (back_count + 1) * BACK_EDGE_STEP + MARGIN_X
    return Layout(boxes, routes, ports, spans, width, height, columns, back)
