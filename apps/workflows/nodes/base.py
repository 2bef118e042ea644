"""The node contract: what every node type declares and how the engine calls it.

A node type is a small registered class. It declares a JSON schema for its config, an
example config (fed to one contract test over every type), the handles it leaves by,
and ``execute(batch)`` which answers one ``Outcome`` per step. The engine knows only this
module; adding a type means adding one module under ``apps/workflows/nodes/``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

import jsonschema

from apps.core.registry import Registry

if TYPE_CHECKING:
    from apps.workflows.context import BatchContext


class OutcomeKind(enum.StrEnum):
    FOLLOW = "follow"  # leave by ``handle`` now
    WAIT = "wait"  # pause until ``until``, then resume the same node
    STOP = "stop"  # this subscriber's journey ends here
    FAIL = "fail"  # the step failed; leave by ``handle`` if given, else the journey fails
    END = "end"  # this path is finished (the journey completes when no path is left)
    DROP = "drop"  # this arrival ends quietly (a join already let this subscriber through)


@dataclass(frozen=True)
class Outcome:
    kind: OutcomeKind
    handle: str = ""
    until: datetime | None = None
    reason: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def follow(cls, handle: str = "next", **detail: Any) -> Outcome:
        return cls(OutcomeKind.FOLLOW, handle=handle, detail=detail)

    @classmethod
    def wait(cls, until: datetime, reason: str = "wait", **detail: Any) -> Outcome:
        return cls(OutcomeKind.WAIT, until=until, reason=reason, detail=detail)

    @classmethod
    def stop(cls, reason: str = "stopped", **detail: Any) -> Outcome:
        return cls(OutcomeKind.STOP, reason=reason, detail=detail)

    @classmethod
    def fail(cls, reason: str, handle: str = "", **detail: Any) -> Outcome:
        return cls(OutcomeKind.FAIL, handle=handle, reason=reason, detail=detail)

    @classmethod
    def end(cls) -> Outcome:
        return cls(OutcomeKind.END, reason="end")

    @classmethod
    def drop(cls, reason: str) -> Outcome:
        return cls(OutcomeKind.DROP, reason=reason)


@dataclass(frozen=True)
class StepRef:
    """What a node sees of one step it runs."""

    id: int
    journey_id: int
    subscriber_id: int
    execution_id: int
    # True when a waiting step came due again (a wait elapsed, a delivery finished).
    resumed: bool = False
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeBatch:
    """Steps of the same node of the same version, run together."""

    node_id: str
    config: Mapping[str, Any]
    steps: Sequence[StepRef]
    ctx: BatchContext


@dataclass(frozen=True)
class GraphIssue:
    """One publish error. ``node`` or ``edge`` (its index) says where."""

    code: str
    message: str
    node: str | None = None
    edge: int | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.node is not None:
            data["node"] = self.node
        if self.edge is not None:
            data["edge"] = self.edge
        return data


@dataclass
class References:
    """Project objects a node config names; checked to exist on publish."""

    templates: list[tuple[str, str]] = field(default_factory=list)  # (key, channel)
    tags: list[str] = field(default_factory=list)
    segments: list[int] = field(default_factory=list)
    connectors: list[tuple[int, str]] = field(default_factory=list)  # (id, channel)


_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}


def schema_validator(schema: dict[str, Any]) -> Any:
    """One validator per long-lived schema (a node type's, the graph's): building one costs
    more than validating a small config with it."""
    cached = _VALIDATORS.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _VALIDATORS[id(schema)] = (schema, jsonschema.Draft202012Validator(schema))
    return cached[1]


class NodeType:
    type: ClassVar[str]
    label: ClassVar[str]
    # One sentence for the builder's palette: what the node does to a subscriber.
    description: ClassVar[str] = ""
    # What a node added in the builder starts with; it may be incomplete (a draft is).
    starter_config: ClassVar[dict[str, Any]] = {}
    schema: ClassVar[dict[str, Any]] = {"type": "object", "additionalProperties": False, "properties": {}}
    example_config: ClassVar[dict[str, Any]] = {}
    # A path may finish here (end, stop): no outgoing edges allowed.
    terminal: ClassVar[bool] = False
    # Only a node that waits for time may sit on a cycle.
    waits_for_time: ClassVar[bool] = False

    # Needs a timezone (subscriber's or project's) with this config.
    def needs_timezone(self, config: Mapping[str, Any]) -> bool:
        return False

    def handles(self, config: Mapping[str, Any]) -> list[str]:
        """Handles this node leaves by; each needs an edge on publish."""
        return [] if self.terminal else ["next"]

    def config_issues(self, node_id: str, config: Mapping[str, Any]) -> list[GraphIssue]:
        """Schema errors, then rules a schema cannot say (duplicates, impossible dates)."""
        validator = schema_validator(self.schema)
        issues = [
            GraphIssue(
                "invalid_config",
                f"Node {node_id!r} ({self.type}): {'/'.join(str(p) for p in error.absolute_path) or 'config'}: "
                f"{error.message}",
                node=node_id,
            )
            for error in sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
        ]
        if not issues:
            issues += self.semantic_issues(node_id, config)
        return issues

    def semantic_issues(self, node_id: str, config: Mapping[str, Any]) -> list[GraphIssue]:
        return []

    def references(self, config: Mapping[str, Any]) -> References:
        return References()

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        raise NotImplementedError


node_types: Registry[NodeType] = Registry("node type")


def register_node(cls: type[NodeType]) -> type[NodeType]:
    node_types.add(cls.type, cls())
    return cls


def load_node_modules() -> None:
    """Import every module in this package so each type registers itself."""
    import importlib
    import pkgutil

    import apps.workflows.nodes as package

    for module in pkgutil.iter_modules(package.__path__):
        if not module.name.startswith("_") and module.name != "base":
            importlib.import_module(f"{package.__name__}.{module.name}")
