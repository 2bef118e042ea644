"""Running one node for a group of steps, so that one step's failure stays that step's.

The group runs in a savepoint. When it raises (a node that trips over one subscriber's
data, a config it cannot read, a graph it cannot parse), the savepoint is rolled back and
each step runs alone in its own savepoint, with a context of its own subscriber only:
the steps that fail alone are answered as faults, the others carry on as if nothing
happened. The happy path pays one savepoint per group, not per step.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import transaction

from apps.workflows.context import BatchContext
from apps.workflows.graph import Graph
from apps.workflows.nodes.base import NodeBatch, Outcome, StepRef, node_types

if TYPE_CHECKING:
    from apps.workflows.work import Work

log = logging.getLogger(__name__)


@dataclass
class GroupResult:
    outcomes: dict[int, Outcome] = field(default_factory=dict)
    # Steps whose node raised even when run alone, with what it raised.
    faults: dict[int, Exception] = field(default_factory=dict)


def node_run_guarded(
    node_id: str,
    members: list[Work],
    context: Callable[[], BatchContext],
    graph: Callable[[], Graph],
) -> GroupResult:
    """Outcomes of ``members`` at ``node_id``; ``context`` and ``graph`` are built lazily, and
    a failure building them is a failure of the group too."""
    if not members:
        return GroupResult()
    try:
        with transaction.atomic():
            return GroupResult(outcomes=node_execute(graph(), node_id, members, context()))
    except Exception:
        log.warning("node %s failed for a group of %d steps; running each alone", node_id, len(members), exc_info=True)
    result = GroupResult()
    try:
        with transaction.atomic():
            ctx, parsed = context(), graph()
    except Exception as error:  # noqa: BLE001 - recorded on every step of the group
        result.faults = dict.fromkeys((w.id for w in members), error)
        return result
    # The rolled-back savepoint may have left tags in the cache that are no longer true.
    ctx.forget_tags()
    for work in members:
        try:
            with transaction.atomic():
                result.outcomes.update(node_execute(parsed, node_id, [work], ctx.alone(work.subscriber_id)))
        except Exception as error:  # noqa: BLE001 - recorded on the step as its failure
            log.warning("step %s failed at node %s: %r", work.id, node_id, error)
            result.faults[work.id] = error
    ctx.forget_tags()
    return result


def node_execute(graph: Graph, node_id: str, members: list[Work], ctx: BatchContext) -> dict[int, Outcome]:
    node = node_types.get(graph.node_type(node_id))
    refs = [
        StepRef(
            id=w.id,
            journey_id=w.journey_id,
            subscriber_id=w.subscriber_id,
            execution_id=w.execution_id,
            resumed=w.resumed,
            detail=w.detail,
        )
        for w in members
    ]
    outcomes = node.execute(NodeBatch(node_id=node_id, config=graph.config(node_id), steps=refs, ctx=ctx))
    missing = [w.id for w in members if w.id not in outcomes]
    if missing:
        raise RuntimeError(f"node type {node.type!r} answered no outcome for steps {missing[:5]}")
    return outcomes
