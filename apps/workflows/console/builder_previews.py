"""The builder's previews: when a wait resumes, a message as one subscriber would get it, a test send."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from apps.console.access import console_page
from apps.core.errors import ApplicationError
from apps.workflows.builder.previews import journey_test_send, message_render, moment, wait_sentence
from apps.workflows.console.builder_views import fragment, require_editor, workflow_or_404
from apps.workflows.preview import wait_preview_config


def _node(workflow: Any, node_id: str | None) -> dict[str, Any] | None:
    return next((n for n in (workflow.draft_graph or {}).get("nodes", []) if n["id"] == node_id), None)


def _answer(request: HttpRequest, template: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    return fragment(template, context, status=status)


@console_page
@require_GET
def wait_preview_view(request: HttpRequest, key: str) -> HttpResponse:
    workflow = workflow_or_404(request, key)
    node = _node(workflow, request.GET.get("node"))
    if node is None or node["type"] != "wait":
        return _answer(request, "_wait_preview.html", {"error": "Choose a wait node of this draft."}, 404)
    try:
        at = moment(request.GET.get("at") or None)
        preview = wait_preview_config(
            project=request.project,  # type: ignore[attr-defined]
            config=node.get("config") or {},
            at=at or timezone.now(),
            external_id=(request.GET.get("subscriber") or "").strip()[:255] or None,
            timezone_name=(request.GET.get("timezone") or "").strip()[:64] or None,
        )
    except ValueError:
        return _answer(request, "_wait_preview.html", {"error": "Give the moment as a date and time."}, 422)
    except ApplicationError as exc:
        return _answer(request, "_wait_preview.html", {"error": exc.message, "code": exc.code}, exc.status)
    return _answer(request, "_wait_preview.html", {"preview": preview, "sentence": wait_sentence(preview)})


@console_page
@require_GET
def message_preview_view(request: HttpRequest, key: str) -> HttpResponse:
    workflow = workflow_or_404(request, key)
    node = _node(workflow, request.GET.get("node"))
    if node is None:
        return _answer(request, "_message_preview.html", {"error": "Choose a node of this draft."}, 404)
    external_id = (request.GET.get("subscriber") or "").strip()
    try:
        rendered = message_render(project=request.project, node=node, external_id=external_id)  # type: ignore[attr-defined]
    except ApplicationError as exc:
        return _answer(request, "_message_preview.html", {"error": exc.message, "code": exc.code}, exc.status)
    return _answer(
        request,
        "_message_preview.html",
        {"rendered": rendered, "node": node, "subscriber": external_id, "workflow": workflow},
    )


@console_page
@require_POST
def test_send_view(request: HttpRequest, key: str) -> HttpResponse:
    require_editor(request)
    workflow = workflow_or_404(request, key)
    node = _node(workflow, request.POST.get("node"))
    if node is None:
        return _answer(request, "_test_send.html", {"error": "Choose a node of this draft."}, 404)
    external_id = (request.POST.get("subscriber") or "").strip()
    try:
        ids = journey_test_send(
            project=request.project,  # type: ignore[attr-defined]
            workflow_key=workflow.key,
            node=node,
            external_id=external_id,
            user=request.user,
        )
    except ApplicationError as exc:
        return _answer(request, "_test_send.html", {"error": exc.message, "code": exc.code}, exc.status)
    return _answer(request, "_test_send.html", {"deliveries": ids, "subscriber": external_id})
