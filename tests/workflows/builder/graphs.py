"""Random valid journey graphs for property tests, with what the generator knows about them.

A graph grows from the start node: steps in a line, conditions and multi-conditions whose
lanes end or meet again (at a join or straight at the next node), parallel branches from
one handle, and loops back through a wait. Every graph passes ``structure_issues``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

STEP_TYPES = ("email", "push", "sms", "add_tag", "remove_tag", "wait")


def _config(type_: str, n: int) -> dict[str, Any]:
    return {
        "email": {"template": f"t{n}"},
        "push": {"template": f"t{n}"},
        "sms": {"template": f"t{n}"},
        "add_tag": {"tags": [f"tag{n}"]},
        "remove_tag": {"tags": [f"tag{n}"]},
        "wait": {"mode": "duration", "hours": 1},
        "condition": {"predicates": [{"op": "has_tag", "tag": f"tag{n}"}]},
        "stop": {"reason": "done"},
    }.get(type_, {})


@dataclass
class Branching:
    node: str
    handles: list[str]
    join: str | None  # where the lanes meet again; None when every lane ends
    lanes: dict[str, set[str]] = field(default_factory=dict)  # handle -> nodes in that lane
    converges: bool = True  # every lane reaches the join (none ends on its own)


@dataclass
class Built:
    graph: dict[str, Any]
    branchings: list[Branching]
    loops: list[tuple[str, str]]  # (from, to) edges that go back up


class _Builder:
    def __init__(self, draw: Any, size: int) -> None:
        self.draw = draw
        self.size = size
        self.nodes: list[dict[str, Any]] = []
        self.edges: list[dict[str, Any]] = []
        self.branchings: list[Branching] = []
        self.loops: list[tuple[str, str]] = []
        self.lane_stack: list[set[str]] = []

    def add(self, type_: str, config: dict[str, Any] | None = None) -> str:
        node_id = f"{type_}-{len(self.nodes)}"
        self.nodes.append(
            {"id": node_id, "type": type_, "config": config if config is not None else _config(type_, len(self.nodes))}
        )
        for lane in self.lane_stack:
            lane.add(node_id)
        return node_id

    def link(self, sources: list[tuple[str, str]], target: str) -> None:
        for source, handle in sources:
            self.edges.append({"from": source, "handle": handle, "to": target})

    def full(self) -> bool:
        return len(self.nodes) >= self.size

    def sequence(self, sources: list[tuple[str, str]], depth: int) -> list[tuple[str, str]]:
        """Grow from ``sources``; answers the handles still open (empty when every path ended)."""
        while sources:
            if self.full():
                return sources
            choice = self.draw(st.sampled_from(["step", "step", "branch", "multi", "parallel", "loop", "end", "open"]))
            if choice == "open" and depth > 0:
                return sources
            if choice == "end":
                node = self.add(self.draw(st.sampled_from(["end", "stop"])))
                self.link(sources, node)
                return []
            if choice in ("branch", "multi") and depth < 4:
                sources = self.branch(sources, depth, multi=choice == "multi")
            elif choice == "parallel" and depth < 4:
                sources = self.parallel(sources, depth)
            elif choice == "loop":
                wait = self.add("wait")
                self.link(sources, wait)
                check = self.add("condition")
                self.link([(wait, "next")], check)
                self.edges.append({"from": check, "handle": "no", "to": wait})
                self.loops.append((check, wait))
                sources = [(check, "yes")]
            else:
                node = self.add(self.draw(st.sampled_from(STEP_TYPES)))
                self.link(sources, node)
                sources = [(node, "next")]
        return sources

    def branch(self, sources: list[tuple[str, str]], depth: int, multi: bool) -> list[tuple[str, str]]:
        if multi:
            count = self.draw(st.integers(min_value=1, max_value=3))
            cases = [{"handle": f"c{i}", "predicates": [{"op": "has_tag", "tag": f"x{i}"}]} for i in range(count)]
            node = self.add("multi_condition", {"cases": cases})
            handles = [c["handle"] for c in cases] + ["default"]
        else:
            node = self.add("condition")
            handles = ["yes", "no"]
        self.link(sources, node)
        info = Branching(node, handles, None)
        self.branchings.append(info)
        open_ends: list[tuple[str, str]] = []
        direct: list[tuple[str, str]] = []
        for handle in handles:
            lane: set[str] = set()
            info.lanes[handle] = lane
            self.lane_stack.append(lane)
            if self.draw(st.booleans()) and self.draw(st.booleans()):
                direct.append((node, handle))  # straight to the join
                ends: list[tuple[str, str]] = []
            else:
                ends = self.sequence([(node, handle)], depth + 1)
                info.converges = info.converges and bool(ends)
            self.lane_stack.pop()
            open_ends += ends
        open_ends += direct
        if not open_ends:
            return []
        if len(open_ends) == len(direct) == len(handles):
            # Every lane empty: close one with an end so the branch means something.
            end = self.add("end")
            self.link([open_ends.pop()], end)
            info.converges = False
        join = self.add("join")
        info.join = join
        self.link(open_ends, join)
        return [(join, "next")]

    def parallel(self, sources: list[tuple[str, str]], depth: int) -> list[tuple[str, str]]:
        fork = self.add("add_tag")
        self.link(sources, fork)
        info = Branching(fork, ["next"], None)
        self.branchings.append(info)
        open_ends: list[tuple[str, str]] = []
        for i in range(self.draw(st.integers(min_value=2, max_value=3))):
            lane: set[str] = set()
            info.lanes[f"next#{i}"] = lane
            self.lane_stack.append(lane)
            head = self.add(self.draw(st.sampled_from(STEP_TYPES)))
            self.link([(fork, "next")], head)
            ends = self.sequence([(head, "next")], depth + 1)
            info.converges = info.converges and bool(ends)
            open_ends += ends
            self.lane_stack.pop()
        if not open_ends:
            return []
        join = self.add("join")
        info.join = join
        self.link(open_ends, join)
        return [(join, "next")]


@st.composite
def journey_graphs(draw: Any, max_nodes: int = 200) -> Built:
    size = draw(st.integers(min_value=2, max_value=max_nodes - 12))
    builder = _Builder(draw, size)
    start = builder.add("start", {})
    open_ends = builder.sequence([(start, "next")], 0)
    if open_ends:
        end = builder.add("end", {})
        builder.link(open_ends, end)
    return Built({"nodes": builder.nodes, "edges": builder.edges}, builder.branchings, builder.loops)
