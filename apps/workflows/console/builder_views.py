"""The journey builder: the editor page, and one request per edit answering the new canvas.

Every edit names the draft revision it was made on. The answer is the whole workspace
fragment (toolbar, canvas, issues, the selected node's form), so the page never holds
state the server does not. A refused edit answers 4xx with a message and changes nothing.
Who may edit is decided in ``require_editor`` alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, retarget

from apps.console.access import console_page, require_role
from apps.core.errors import ApplicationError, NotFound
from apps.governance.models import Role
from apps.workflows import selectors
from apps.workflows.builder import clipboard, edits
from apps.workflows.builder.forms import MAX_ROWS, FormInputError, Pickers, config_from_post, inline_errors, node_form
from apps.workflows.builder.history import workflow_draft_edit, workflow_draft_redo, workflow_draft_undo
from apps.workflows.console.canvas import palette, workspace
from apps.workflows.console.canvas_svg import canvas_svg
from apps.workflows.models import Workflow
from apps.workflows.nodes.base import node_types
from apps.workflows.services import workflow_save_draft

EDITOR_ROLES = frozenset({Role.OWNER, Role.ADMIN, Role.EDITOR})
# An edit is a few fields, a node's settings or a paste (at most 512 KiB of it).
MAX_EDIT_BODY = 1024 * 1024
MAX_IDS = 500


def can_edit(request: HttpRequest) -> bool:
    return request.membership.role in EDITOR_ROLES  # type: ignore[attr-defined]


def require_editor(request: HttpRequest) -> None:
    require_role(request, EDITOR_ROLES)


def workflow_or_404(request: HttpRequest, key: str) -> Workflow:
    try:
        return selectors.workflow_get(request.project, key)  # type: ignore[attr-defined]
    except NotFound as exc:
        raise Http404(exc.message) from exc


def _context(request: HttpRequest, workflow: Workflow, focus: list[str], **extra: Any) -> dict[str, Any]:
    project = request.project  # type: ignore[attr-defined]
    context = workspace(workflow, project, history=extra.pop("history", None))
    editable = can_edit(request)
    context.update(can_edit=editable, focus=focus, **extra)
    context["canvas_svg"] = canvas_svg(context["layout"], context["nodes"], can_edit=editable)
    graph = workflow.draft_graph or {"nodes": [], "edges": []}
    node = next((n for n in graph.get("nodes", []) if focus and n["id"] == focus[0]), None) if len(focus) == 1 else None
    context["inspector"] = inspector(request, workflow, node, errors=extra.get("form_errors")) if node else None
    return context


def inspector(
    request: HttpRequest,
    workflow: Workflow,
    node: dict[str, Any],
    errors: dict[str, list[str]] | None = None,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The selected node's form: its fields, their errors, and what the node type offers."""
    project = request.project  # type: ignore[attr-defined]
    kind = node_types.get(node["type"]) if node["type"] in node_types else None
    current = config if config is not None else node.get("config") or {}
    found = inline_errors(kind, current) if kind else {}
    for name, messages_ in (errors or {}).items():
        found.setdefault(name, []).extend(messages_)
    graph = workflow.draft_graph or {"nodes": [], "edges": []}
    connections = [
        (
            handle,
            [
                e["to"]
                for e in graph.get("edges", [])
                if e["from"] == node["id"] and (e.get("handle") or "next") == handle
            ],
        )
        for handle in edits.handles_of(node, graph)
    ]
    others = [
        (n["id"], f"{n.get('label') or n['id']} ({n['type']})")
        for n in graph.get("nodes", [])
        if n["id"] != node["id"] and n["type"] != "start"
    ]
    return {
        "node": node,
        "kind": kind,
        "connections": connections,
        "others": others,
        "fields": node_form(kind, current, Pickers.load(project, kind.schema), found) if kind else [],
        "form_errors": found.get("", []),
        "flags": node.get("flags", []),
        "is_wait": node["type"] == "wait",
        "is_message": bool(kind and hasattr(kind, "channel") and node["type"] != "webhook"),
        "project_timezone": project.timezone,
    }


def fragment(template: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    """A piece of the page for htmx to swap in. Rendered without the request's context
    processors: the console shell's (projects for the switcher, messages) belong to whole
    pages, and would cost each edit their queries."""
    return HttpResponse(render_to_string(f"workflows/builder/{template}", context), status=status)


def _fragment(
    request: HttpRequest, workflow: Workflow, focus: list[str], status: int = 200, **extra: Any
) -> HttpResponse:
    return fragment("_workspace.html", _context(request, workflow, focus, **extra), status=status)


def _refusal(request: HttpRequest, exc: ApplicationError) -> HttpResponse:
    response = fragment(
        "_alert.html",
        {"message": exc.message, "code": exc.code, "extra": exc.extra},
        status=exc.status if exc.status >= 400 else 422,
    )
    response["X-Tidings-Code"] = exc.code
    return reswap(retarget(response, "#builder-alert"), "innerHTML")


@console_page
def builder_new(request: HttpRequest) -> HttpResponse:
    """A new journey: its draft begins with the start node, as every journey does."""
    require_editor(request)
    project = request.project  # type: ignore[attr-defined]
    error = ""
    if request.method == "POST":
        key = str(request.POST.get("key", "")).strip().lower()
        name = str(request.POST.get("name", "")).strip()[:200] or key
        from django.core.validators import validate_slug

        try:
            validate_slug(key)
            if len(key) > 64:
                raise ValueError
        except Exception:  # noqa: BLE001 - any refusal of the key reads the same
            error = "A key is 1-64 letters, digits, hyphens or underscores."
        else:
            if Workflow.objects.for_project(project).filter(key=key).exists():
                error = f"This project already has a journey {key!r}."
            else:
                graph = {"nodes": [{"id": "start", "type": "start", "config": {}}], "edges": []}
                workflow_save_draft(project=project, key=key, name=name, graph=graph, changed_by=request.user)
                return redirect("workflows_console:builder", key=key)
    return render(
        request,
        "workflows/builder/new.html",
        {"section": "workflows", "error": error, "values": request.POST},
        status=400 if error else 200,
    )


@console_page
@require_GET
def builder_editor(request: HttpRequest, key: str) -> HttpResponse:
    workflow = workflow_or_404(request, key)
    focus = [n for n in request.GET.getlist("node") if isinstance(n, str)][:1]
    context = _context(request, workflow, focus, section="workflows", palette=palette())
    return render(request, "workflows/builder/editor.html", context)


def _ids(request: HttpRequest) -> list[str]:
    raw = request.POST.getlist("nodes")
    ids = [part for value in raw for part in str(value).split(",") if part]
    if len(ids) > MAX_IDS:
        raise edits.EditError(f"At most {MAX_IDS} nodes at once.", code="too_many_nodes", field="nodes")
    return ids


def _edit_for(request: HttpRequest, op: str) -> Callable[[dict[str, Any]], edits.Edited]:
    post = request.POST
    project = request.project  # type: ignore[attr-defined]
    if op == "add":
        on_edge = (
            (post.get("edge_from"), post.get("edge_handle"), post.get("edge_to")) if post.get("edge_from") else None
        )
        after = (post.get("after_node"), post.get("after_handle")) if post.get("after_node") else None
        return lambda g: edits.add(g, type_name=post.get("type"), on_edge=on_edge, after=after)
    if op == "delete":
        ids = _ids(request)
        return lambda g: edits.delete(g, node_ids=ids)
    if op == "duplicate":
        ids = _ids(request)
        return lambda g: edits.duplicate(g, node_ids=ids)
    if op in ("connect", "disconnect"):
        fn = edits.connect if op == "connect" else edits.disconnect
        return lambda g: fn(g, source=post.get("node"), handle=post.get("handle"), target=post.get("target"))
    if op == "rename":
        return lambda g: edits.rename(g, node_id=post.get("node"), label=post.get("label", ""))
    if op == "paste":
        return lambda g: clipboard.paste(g, project=project, text=post.get("payload"))
    if op == "configure":
        return lambda g: _configure(g, request)
    raise edits.EditError(f"Unknown edit {op[:32]!r}.", code="unknown_edit", field="op")


def _configure(graph: dict[str, Any], request: HttpRequest) -> edits.Edited:
    project = request.project  # type: ignore[attr-defined]
    node = edits.node_get(graph, request.POST.get("node"))
    kind = node_types.get(node["type"]) if node["type"] in node_types else None
    if kind is None:
        raise edits.EditError(f"Node {node['id']!r} has an unknown type; delete it.", code="unknown_node_type")
    try:
        config = config_from_post(kind, request.POST)
    except FormInputError as exc:
        raise edits.EditError(str(exc), code="invalid_form", extra={"errors": exc.errors}) from None
    if kind.needs_timezone(config) and not project.timezone:
        raise edits.EditError(
            "Waiting until a local time needs the project's timezone (for subscribers who have none): set one first.",
            code="timezone_required",
            field="cfg.mode",
        )
    return edits.configure(graph, node_id=node["id"], config=config, label=request.POST.get("label"))


@console_page
@require_POST
def builder_edit(request: HttpRequest, key: str) -> HttpResponse:
    require_editor(request)
    declared = str(request.META.get("CONTENT_LENGTH") or "0")
    if not declared.isdigit() or int(declared) > MAX_EDIT_BODY:
        # Refused before the body is read: nothing of it is parsed, nothing changes.
        return _refusal(
            request,
            edits.EditError("This edit is larger than 1 MiB; nothing was changed.", code="edit_too_large", status=413),
        )
    # Only its id: the edit reads the draft itself, under the row lock.
    workflow = Workflow.objects.for_project(request.project).only("pk", "key", "project").filter(key=key).first()  # type: ignore[attr-defined]
    if workflow is None:
        raise Http404(f"No workflow {key!r} in this project.")
    op = str(request.POST.get("op", ""))
    try:
        revision = int(request.POST.get("revision", ""))
    except ValueError:
        return _refusal(
            request, edits.EditError("This edit names no draft revision: reload the page.", code="revision_required")
        )
    project = request.project  # type: ignore[attr-defined]
    try:
        if op == "undo":
            saved = workflow_draft_undo(project=project, workflow=workflow, revision=revision, user=request.user)
        elif op == "redo":
            saved = workflow_draft_redo(project=project, workflow=workflow, revision=revision, user=request.user)
        else:
            saved = workflow_draft_edit(
                project=project, workflow=workflow, revision=revision, user=request.user, edit=_edit_for(request, op)
            )
    except edits.EditError as exc:
        if exc.code in ("invalid_form", "timezone_required") and request.POST.get("node"):
            return _form_refusal(request, workflow, exc)
        return _refusal(request, exc)
    except ApplicationError as exc:
        return _refusal(request, exc)
    selected = [part for value in request.POST.getlist("selected") for part in str(value).split(",") if part]
    focus = saved.focus or selected[:MAX_IDS]
    graph_ids = {n["id"] for n in saved.workflow.draft_graph.get("nodes", [])}
    return _fragment(
        request, saved.workflow, [n for n in focus if n in graph_ids], done=saved.label, history=saved.history
    )


def _form_refusal(request: HttpRequest, workflow: Workflow, exc: edits.EditError) -> HttpResponse:
    """The node form again, with the input errors beside their fields; the draft is unchanged."""
    node = next((n for n in workflow.draft_graph.get("nodes", []) if n["id"] == request.POST.get("node")), None)
    if node is None:
        return _refusal(request, exc)
    kind = node_types.get(node["type"])
    errors = dict(exc.extra.get("errors") or {})
    if exc.code == "timezone_required":
        errors = {"": [exc.message]}
    config = config_from_post(kind, request.POST, strict=False)
    context = {
        "can_edit": True,
        "workflow": workflow,
        "inspector": inspector(request, workflow, node, errors=errors, config=config),
        "refused": exc.message,
        "timezone_link": exc.code == "timezone_required",
    }
    response = fragment("_inspector.html", context, status=422)
    response["X-Tidings-Code"] = exc.code
    return reswap(retarget(response, "#builder-inspector"), "innerHTML")


@console_page
@require_POST
def builder_form(request: HttpRequest, key: str) -> HttpResponse:
    """Redraw a node's form with a row or case added, removed or moved; nothing is saved."""
    require_editor(request)
    workflow = workflow_or_404(request, key)
    node = next((n for n in workflow.draft_graph.get("nodes", []) if n["id"] == request.POST.get("node")), None)
    if node is None or node["type"] not in node_types:
        raise Http404("This draft has no such node; reload the page.")
    kind = node_types.get(node["type"])
    config = config_from_post(kind, request.POST, strict=False)
    _form_action(config, str(request.POST.get("_form", "")))
    context = {"can_edit": True, "workflow": workflow, "inspector": inspector(request, workflow, node, config=config)}
    return fragment("_inspector.html", context)


def _form_action(config: dict[str, Any], action: str) -> None:
    """``add_row:<holder>``, ``remove_row:<holder>|<i>``, ``add_case``, ``remove_case:<i>``,
    ``up:<i>``, ``down:<i>``; a holder is "" (the node) or "cases.<i>"."""
    verb, _, arg = action.partition(":")
    holder_path, _, index = arg.partition("|")
    holder: Any = config
    cases = config.get("cases") if isinstance(config.get("cases"), list) else []
    if holder_path and verb in ("add_row", "remove_row"):
        head, _, number = holder_path.partition(".")
        if head != "cases" or not number.isdigit() or int(number) >= len(cases):
            return
        holder = cases[int(number)]
    if verb == "add_row":
        rows = holder.setdefault("predicates", [])
        if len(rows) < MAX_ROWS:
            rows.append({"op": "has_tag", "tag": ""})
    elif verb == "remove_row" and index.isdigit() and int(index) < len(holder.get("predicates") or []):
        holder["predicates"].pop(int(index))
    elif verb == "add_case" and len(cases) < MAX_ROWS:
        taken = {c.get("handle") for c in cases}
        n = len(cases) + 1
        while f"case-{n}" in taken:
            n += 1
        config["cases"] = [*cases, {"handle": f"case-{n}", "predicates": [{"op": "has_tag", "tag": ""}]}]
    elif verb in ("remove_case", "up", "down") and arg.isdigit():
        i = int(arg)
        if verb == "remove_case" and i < len(cases):
            cases.pop(i)
        elif verb == "up" and 0 < i < len(cases):
            cases[i - 1], cases[i] = cases[i], cases[i - 1]
        elif verb == "down" and i + 1 < len(cases):
            cases[i + 1], cases[i] = cases[i], cases[i + 1]


@console_page
@require_GET
def builder_inspector(request: HttpRequest, key: str) -> HttpResponse:
    workflow = workflow_or_404(request, key)
    wanted = request.GET.getlist("node")
    node = next((n for n in workflow.draft_graph.get("nodes", []) if len(wanted) == 1 and n["id"] == wanted[0]), None)
    context = {
        "can_edit": can_edit(request),
        "workflow": workflow,
        "inspector": inspector(request, workflow, node) if node else None,
        "selected_count": len(wanted),
    }
    return fragment("_inspector.html", context)


@console_page
@require_GET
def builder_copy(request: HttpRequest, key: str) -> HttpResponse:
    """The clipboard document for the selected nodes (the page writes it to the system clipboard)."""
    workflow = workflow_or_404(request, key)
    ids = [part for value in request.GET.getlist("nodes") for part in str(value).split(",") if part][:MAX_IDS]
    try:
        payload = clipboard.copy_payload(workflow.draft_graph, project=request.project, node_ids=ids)  # type: ignore[attr-defined]
    except ApplicationError as exc:
        return JsonResponse({"error": exc.message, "code": exc.code}, status=exc.status)
    return HttpResponse(json.dumps(payload, indent=1), content_type="text/plain; charset=utf-8")
