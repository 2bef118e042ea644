"""Edges of the lanes layout: each runs through the channels between rows and the gutters
between columns, and a vertical stretch is drawn only where no node stands."""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict

from apps.workflows.builder.geometry import (
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
    Port,
    Route,
)

Edges = dict[str, list[tuple[str, str, int]]]  # node -> (handle, target, edge index)


class _Rows:
    """Node extents per row, to ask whether a vertical line at x meets a node."""

    def __init__(self, boxes: dict[str, Box]) -> None:
        rows: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for box in boxes.values():
            rows[box.row].append((box.x, box.right))
        self.lefts: dict[int, list[int]] = {}
        self.rights: dict[int, list[int]] = {}
        for row, spans in rows.items():
            spans.sort()
            self.lefts[row] = [s[0] for s in spans]
            self.rights[row] = [s[1] for s in spans]

    def free(self, x: int, first_row: int, last_row: int) -> bool:
        for row in range(first_row, last_row + 1):
            lefts = self.lefts.get(row)
            if not lefts:
                continue
            i = bisect_right(lefts, x - 1) - 1  # the last node starting left of x
            if i >= 0 and self.rights[row][i] > x:
                return False
        return True


def _channel_below(row: int) -> int:
    return MARGIN_Y + row * ROW + NODE_H + CHANNEL // 2


def route_edges(
    out: Edges,
    handles: dict[str, list[str]],
    boxes: dict[str, Box],
    spans: list[LaneSpan],
    back: set[int],
    columns: int,
) -> tuple[list[Route], list[Port], int]:
    """Every edge's route, every handle's port, and how many edges loop back up the right side."""
    free = _Rows(boxes)
    empty_lane_x = {(s.branch, s.handle): MARGIN_X + round((s.left + s.right) / 2 * SLOT) for s in spans if s.empty}
    right_edge = MARGIN_X + columns * SLOT
    ports, port_x = _ports(out, handles, boxes)
    routes: list[Route] = []
    back_count = 0
    per_port = defaultdict(int)
    for source, edges in out.items():
        for handle, _, _ in edges:
            per_port[(source, handle)] += 1
    for source, edges in out.items():
        for handle, target, index in edges:
            s, t = boxes[source], boxes[target]
            px = port_x[(source, handle)]
            if index in back or t.row <= s.row:
                back_count += 1
                x = right_edge + back_count * BACK_EDGE_STEP
                y_out, y_in = _channel_below(s.row), _channel_below(t.row - 1)
                points = ((px, s.bottom), (px, y_out), (x, y_out), (x, y_in), (t.cx, y_in), (t.cx, t.y))
                routes.append(Route(index, source, handle, target, points, True, (px, y_out)))
                continue
            y_in = _channel_below(t.row - 1)
            hint = empty_lane_x.get((source, handle))
            if hint is None and free.free(px, s.row + 1, t.row - 1):
                points = ((px, s.bottom), (px, y_in), (t.cx, y_in), (t.cx, t.y))
            else:
                x = _free_column(free, [hint, px, t.cx], columns, s.row + 1, t.row - 1, px, right_edge)
                y_out = _channel_below(s.row)
                points = ((px, s.bottom), (px, y_out), (x, y_out), (x, y_in), (t.cx, y_in), (t.cx, t.y))
            single = per_port[(source, handle)] == 1
            plus = (px, _channel_below(s.row)) if single else (t.cx, y_in)
            routes.append(Route(index, source, handle, target, _dedupe(points), False, plus))
    routes.sort(key=lambda r: r.index)
    return routes, ports, back_count


def _ports(
    out: Edges, handles: dict[str, list[str]], boxes: dict[str, Box]
) -> tuple[list[Port], dict[tuple[str, str], int]]:
    ports: list[Port] = []
    port_x: dict[tuple[str, str], int] = {}
    for node_id, box in boxes.items():
        used = [h for h, _, _ in out.get(node_id, ())]
        own = list(handles[node_id]) + sorted({h for h in used if h not in handles[node_id]})
        for i, handle in enumerate(own):
            x = box.x + round((i + 1) * NODE_W / (len(own) + 1))
            port_x[(node_id, handle)] = x
            ports.append(Port(node_id, handle, x, box.bottom, handle in used))
    return ports, port_x


def _free_column(
    free: _Rows, preferred: list[int | None], columns: int, first: int, last: int, near: int, right_edge: int
) -> int:
    for x in preferred:
        if x is not None and free.free(x, first, last):
            return x
    gutters = sorted((MARGIN_X + k * SLOT for k in range(columns + 1)), key=lambda x: (abs(x - near), x))
    for x in gutters:
        if free.free(x, first, last):
            return x
    return right_edge  # right of every node: always free


def _dedupe(points: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    out = [points[0]]
    for point in points[1:]:
        if point != out[-1]:
            out.append(point)
    return tuple(out)
