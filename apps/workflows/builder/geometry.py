"""Sizes and shapes of the lanes layout: where nodes, ports and edges are drawn."""

from __future__ import annotations

from dataclasses import dataclass, field

NODE_W, NODE_H = 176, 60
SLOT = 208  # a column: a node plus its gutter (32 px)
ROW = 116  # a row: a node plus the channel below it (56 px)
CHANNEL = ROW - NODE_H
MARGIN_X, MARGIN_Y = 24, 40
BACK_EDGE_STEP = 10


@dataclass(frozen=True)
class Box:
    id: str
    x: int
    y: int
    row: int
    center: float  # in columns: a lane of width w starting at L centres at L + w/2

    @property
    def cx(self) -> int:
        return self.x + NODE_W // 2

    @property
    def right(self) -> int:
        return self.x + NODE_W

    @property
    def bottom(self) -> int:
        return self.y + NODE_H


@dataclass(frozen=True)
class Port:
    node: str
    handle: str
    x: int
    y: int
    connected: bool


@dataclass(frozen=True)
class Route:
    index: int  # the edge's position in the graph's edge list
    source: str
    handle: str
    target: str
    points: tuple[tuple[int, int], ...]
    back: bool
    plus: tuple[int, int]  # where "insert a node on this edge" is drawn

    @property
    def path(self) -> str:
        return "M" + " L".join(f"{x},{y}" for x, y in self.points)


@dataclass(frozen=True)
class LaneSpan:
    branch: str
    handle: str
    left: int  # columns
    right: int
    empty: bool = False  # no node in it: a handle still open, or straight to the join


@dataclass
class Layout:
    boxes: dict[str, Box]
    routes: list[Route]
    ports: list[Port]
    lanes: list[LaneSpan]
    width: int
    height: int
    columns: int = 0
    back_edges: set[int] = field(default_factory=set)
