"""The lanes layout's promises, checked on random valid journeys of up to 200 nodes."""

from __future__ import annotations

import copy
import itertools
import random
from collections import defaultdict
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.workflows.builder import edits
from apps.workflows.builder.layout import NODE_H, NODE_W, Layout, layout
from apps.workflows.graph import structure_issues
from tests.workflows.builder.graphs import Built, journey_graphs

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _positions(drawn: Layout) -> dict[str, tuple[int, int]]:
    return {node: (box.x, box.y) for node, box in drawn.boxes.items()}


def _downstream(graph: dict[str, Any], origin: str) -> set[str]:
    following = defaultdict(set)
    for e in graph["edges"]:
        following[e["from"]].add(e["to"])
    seen, todo = {origin}, [origin]
    while todo:
        for other in following[todo.pop()]:
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


@SETTINGS
@given(journey_graphs())
def test_generated_graphs_are_valid(built: Built) -> None:
    assert structure_issues(built.graph) == []
    assert len(built.graph["nodes"]) <= 200


@SETTINGS
@given(journey_graphs())
def test_nodes_never_overlap(built: Built) -> None:
    boxes = list(layout(built.graph).boxes.values())
    rows = defaultdict(list)
    for box in boxes:
        rows[box.y].append(box)
    assert len({b.y for b in boxes}) == len(rows)
    for row in rows.values():
        row.sort(key=lambda b: b.x)
        for left, right in itertools.pairwise(row):
            assert left.x + NODE_W <= right.x, f"{left.id} and {right.id} overlap"


def _crosses(segment: tuple[tuple[int, int], tuple[int, int]], box: Any) -> bool:
    (x1, y1), (x2, y2) = segment
    lo_x, hi_x, lo_y, hi_y = min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)
    # Open interiors: an edge may end on a node's border, never pass through it.
    return lo_x < box.x + NODE_W and hi_x > box.x and lo_y < box.y + NODE_H and hi_y > box.y


@SETTINGS
@given(journey_graphs())
def test_edges_never_cross_a_node(built: Built) -> None:
    drawn = layout(built.graph)
    assert len(drawn.routes) == len(built.graph["edges"])
    for route in drawn.routes:
        for segment in zip(route.points, route.points[1:], strict=False):
            assert segment[0][0] == segment[1][0] or segment[0][1] == segment[1][1], "segments are axis-aligned"
            for box in drawn.boxes.values():
                assert not _crosses(segment, box), f"edge {route.source}->{route.target} crosses {box.id}"


@SETTINGS
@given(journey_graphs())
def test_every_node_sits_below_its_parents_and_a_join_below_all_of_them(built: Built) -> None:
    drawn = layout(built.graph)
    loops = set(built.loops)
    for e in built.graph["edges"]:
        if (e["from"], e["to"]) in loops:
            continue
        assert drawn.boxes[e["to"]].y > drawn.boxes[e["from"]].y


@SETTINGS
@given(journey_graphs())
def test_lanes_sit_side_by_side_and_converge_at_their_join(built: Built) -> None:
    drawn = layout(built.graph)
    for branching in built.branchings:
        spans = []
        for handle in branching.handles if branching.handles != ["next"] else sorted(branching.lanes):
            members = branching.lanes.get(handle, set())
            if members:
                xs = [drawn.boxes[n].x for n in members]
                spans.append((min(xs), max(xs) + NODE_W))
        if branching.handles == ["next"]:
            spans.sort()  # parallel lanes of one handle go by their first node's id
        # In handle order, left to right, and no two lanes share a column.
        for left, right in itertools.pairwise(spans):
            assert left[1] <= right[0], f"lanes of {branching.node} overlap: {spans}"
        types = {n["id"]: n["type"] for n in built.graph["nodes"]}
        # Converging means every path out of the branch reaches the join: no lane ends on its own.
        ends_inside = any(types[n] in ("end", "stop") for lane in branching.lanes.values() for n in lane)
        if branching.join and branching.converges and not ends_inside:
            join, node = drawn.boxes[branching.join], drawn.boxes[branching.node]
            assert join.cx == node.cx, "a join is centred under the branch it closes"
            lowest = (
                max(drawn.boxes[n].y for lane in branching.lanes.values() for n in lane)
                if any(branching.lanes.values())
                else node.y
            )
            assert join.y > lowest


@SETTINGS
@given(journey_graphs())
def test_the_layout_is_deterministic_whatever_the_order_of_nodes(built: Built) -> None:
    shuffled = copy.deepcopy(built.graph)
    rng = random.Random(len(shuffled["nodes"]))
    rng.shuffle(shuffled["nodes"])
    # Edges of one handle keep their order (it is the order of parallel lanes); the rest may move.
    groups = defaultdict(list)
    for e in shuffled["edges"]:
        groups[(e["from"], e["handle"])].append(e)
    keys = list(groups)
    rng.shuffle(keys)
    shuffled["edges"] = [e for k in keys for e in groups[k]]
    assert _positions(layout(built.graph)) == _positions(layout(shuffled))
    first, again = layout(built.graph), layout(copy.deepcopy(built.graph))
    assert [r.points for r in first.routes] == [r.points for r in again.routes]


@SETTINGS
@given(journey_graphs(max_nodes=190), st.data())
def test_adding_a_node_in_one_lane_moves_nothing_outside_what_follows_it(built: Built, data: Any) -> None:
    graph = built.graph
    before = _positions(layout(graph))
    edge = data.draw(st.sampled_from(graph["edges"]))
    kind = data.draw(st.sampled_from(["email", "wait", "add_tag"]))
    edited = edits.add(graph, type_name=kind, on_edge=(edge["from"], edge["handle"], edge["to"]))
    new_node = edited.focus[0]
    after = _positions(layout(edited.graph))
    moved = {n for n in before if before[n] != after[n]}
    assert moved <= _downstream(edited.graph, new_node), f"inserting on {edge} moved {moved}"


@SETTINGS
@given(journey_graphs(max_nodes=190), st.data())
def test_a_condition_added_in_one_lane_widens_it_sideways_and_moves_nothing_above_it_down(
    built: Built, data: Any
) -> None:
    """A condition whose handles both lead on to where the edge went widens its lane by a
    column. Lanes share no column, so a lane beside it has to make room and the nodes above
    re-centre: that is sideways only. Nothing above the condition changes row, nothing
    overlaps, and the condition's own lanes sit side by side below it."""
    graph = built.graph
    before = layout(graph)
    # An edge that closes a loop is drawn up the side, outside every lane.
    forward = [e for e in graph["edges"] if (e["from"], e["to"]) not in set(built.loops)]
    edge = data.draw(st.sampled_from(forward))
    added = edits.add(graph, type_name="condition", on_edge=(edge["from"], edge["handle"], edge["to"]))
    condition = added.focus[0]
    edited = edits.connect(added.graph, source=condition, handle="no", target=edge["to"])
    after = layout(edited.graph)
    downstream = _downstream(edited.graph, condition)
    for node, box in before.boxes.items():
        if node not in downstream:
            assert after.boxes[node].y == box.y, f"{node} changed row"
    rows = defaultdict(list)
    for box in after.boxes.values():
        rows[box.y].append(box)
    for row in rows.values():
        row.sort(key=lambda b: b.x)
        for left, right in itertools.pairwise(row):
            assert left.x + NODE_W <= right.x, f"{left.id} and {right.id} overlap"
    lanes = sorted((s.left, s.right) for s in after.lanes if s.branch == condition)
    assert len(lanes) == 2 and lanes[0][1] <= lanes[1][0], f"the condition's lanes: {lanes}"
