"""An execution in the console: the drawing with live per-node counts, and who is at a node.

The page polls a small fragment (htmx, every second) while the execution can still move;
the fragment of a finished execution carries no trigger, so polling stops by itself.
"""

from __future__ import annotations

from datetime import datetime

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.console.access import console_page
from apps.core.errors import NotFound
from apps.workflows import selectors
from apps.workflows.console.drawing import draw
from apps.workflows.console.views import can_publish
from apps.workflows.models import Execution
from apps.workflows.progress import FINISHED, execution_progress


def _execution(request: HttpRequest, execution_id: int) -> Execution:
    try:
        return selectors.execution_get(request.project, execution_id)  # type: ignore[attr-defined]
    except NotFound as exc:
        raise Http404(exc.message) from exc


def _live_context(request: HttpRequest, execution: Execution) -> dict[str, object]:
    progress = execution_progress(request.project, execution)  # type: ignore[attr-defined]
    return {
        "execution": execution,
        "progress": progress,
        "drawing": draw(execution.version.graph, progress["nodes"]),
        "live": execution.state not in FINISHED,
    }


def cursor_encode(cursor: selectors.AtNodeCursor | None) -> str:
    return f"{cursor[1]}_{cursor[0].isoformat()}" if cursor else ""


def cursor_decode(raw: str) -> selectors.AtNodeCursor | None:
    """A cursor from the query string; anything unreadable starts from the first page."""
    pk, _, due_at = raw.partition("_")
    try:
        moment = datetime.fromisoformat(due_at)
        return (moment, int(pk)) if moment.tzinfo else None
    except ValueError:
        return None


@console_page
def execution_detail(request: HttpRequest, execution_id: int) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    execution = _execution(request, execution_id)
    node = request.GET.get("node") or None
    at_node, next_cursor = [], None
    if node:
        after = cursor_decode(request.GET.get("after", ""))
        at_node, next_cursor = selectors.subscribers_at_node(project, execution, node, after=after)
    return render(
        request,
        "workflows/execution.html",
        {
            "section": "workflows",
            **_live_context(request, execution),
            "node": node,
            "at_node": at_node,
            "next_cursor": cursor_encode(next_cursor),
            "paged": bool(request.GET.get("after")),
            "can_publish": can_publish(request),
        },
    )


@console_page
def execution_live(request: HttpRequest, execution_id: int) -> HttpResponse:
    """The polled fragment: state, totals, the drawing with counts and the per-node table."""
    execution = _execution(request, execution_id)
    return render(request, "workflows/_execution_live.html", _live_context(request, execution))
