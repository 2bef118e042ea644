"""Graph builders and data helpers for workflow tests."""

from __future__ import annotations

from itertools import pairwise
from typing import Any


def node(node_id: str, type_: str, **config: Any) -> dict[str, Any]:
    return {"id": node_id, "type": type_, "config": config}


def edge(source: str, target: str, handle: str = "next") -> dict[str, Any]:
    return {"from": source, "handle": handle, "to": target}


def chain(*nodes: dict[str, Any]) -> dict[str, Any]:
    """Nodes in a line, each leaving by "next"."""
    return {"nodes": list(nodes), "edges": [edge(a["id"], b["id"]) for a, b in pairwise(nodes)]}


def tag_branch_graph(tag: str = "vip") -> dict[str, Any]:
    """start -> add tag "seen" -> condition(has tag) -> yes: add "yes" -> end ; no: add "no" -> end."""
    return {
        "nodes": [
            node("start", "start"),
            node("mark", "add_tag", tags=["seen"]),
            node("check", "condition", predicates=[{"op": "has_tag", "tag": tag}]),
            node("tag_yes", "add_tag", tags=["went_yes"]),
            node("tag_no", "add_tag", tags=["went_no"]),
            node("end", "end"),
        ],
        "edges": [
            edge("start", "mark"),
            edge("mark", "check"),
            edge("check", "tag_yes", "yes"),
            edge("check", "tag_no", "no"),
            edge("tag_yes", "end"),
            edge("tag_no", "end"),
        ],
    }


def publish(project: Any, key: str, graph: dict[str, Any], **kwargs: Any) -> Any:
    from apps.workflows.services import workflow_publish, workflow_save_draft

    workflow, _ = workflow_save_draft(project=project, key=key, name=key, graph=graph, **kwargs)
    return workflow_publish(project=project, workflow=workflow)


def subscribers(project: Any, count: int, prefix: str = "u", **fields: Any) -> list[Any]:
    from apps.subscribers.models import Subscriber

    return Subscriber.objects.bulk_create(
        [Subscriber(project=project, external_id=f"{prefix}{i}", **fields) for i in range(count)]
    )


def start_and_expand(project: Any, version: Any, **audience: Any) -> Any:
    """Start an execution and expand it in this process (unit tests run no worker)."""
    from apps.workflows.services import execution_expand_chunk, execution_start

    execution = execution_start(project=project, workflow=version.workflow, audience=audience or {"everyone": True})
    while execution_expand_chunk(project=project, execution_id=execution.pk):
        pass
    execution.refresh_from_db()
    return execution


def run_until_idle(limit: int = 100) -> int:
    from apps.workflows.engine import steps_run_batch

    total = 0
    for _ in range(limit):
        claimed = steps_run_batch()
        total += claimed
        if not claimed:
            return total
    raise AssertionError("runner never went idle")


def make_due(**filters: Any) -> int:
    from django.utils import timezone

    from apps.workflows.models import Step

    return Step.objects.filter(state="waiting", **filters).update(due_at=timezone.now())
