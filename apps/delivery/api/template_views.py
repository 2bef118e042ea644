"""Templates and email layouts as code: the console editor's services behind API keys.

Views only translate: every rule (what a channel's content needs, safe HTML, render
limits) is the services', so the API refuses exactly what the console editor refuses."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api_schema import problem_responses
from apps.core.query import query_data
from apps.delivery import selectors
from apps.delivery.api import template_serializers as s
from apps.delivery.rendering import render, render_context
from apps.delivery.services import layout_save, template_create, template_version_create, template_version_publish
from apps.governance.api.base import ProjectAPIView
from apps.governance.scopes import READ, TEMPLATES_WRITE
from apps.notifications.template_refs import template_cache_clear
from apps.subscribers.api.base import decode_cursor, page
from apps.subscribers.selectors import subscriber_get

TAGS = ["templates"]
WRITE_OR_READ = {"GET": READ, "POST": TEMPLATES_WRITE, "PUT": TEMPLATES_WRITE}
WHO = "Needs a secret (or restricted) key with `templates:write`; public keys are refused with 403."
KEY = OpenApiParameter("key", str, OpenApiParameter.PATH, description="The template's key.")
NUMBER = OpenApiParameter("number", int, OpenApiParameter.PATH, description="The version number.")
LAYOUT_ID = OpenApiParameter("layout_id", int, OpenApiParameter.PATH, description="The layout's id.")
CONTENT_ERRORS = (
    "Refused with 422 and the editor's codes: `invalid_content` (not one block per known "
    "channel), `content_incomplete` (a block lacks what its channel needs, e.g. WhatsApp "
    "without the approved template's name), `unsafe_html` (script, event handlers or other "
    "active content in email HTML; `findings` lists each), `template_syntax`; 404 "
    "`layout_not_found` for a layout id this project does not have."
)


def valid(serializer_class: type, data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class TemplatesView(ProjectAPIView):
    required_scopes = WRITE_OR_READ

    @extend_schema(
        operation_id="templates_list",
        tags=TAGS,
        summary="List templates, oldest first, one cursor page at a time",
        description="Each with its newest version and the published one a send by key uses. Needs `read`.",
        parameters=[s.ListQuery],
        responses={200: s.TemplatePageOut},
    )
    def get(self, request: Request) -> Response:
        q = valid(s.ListQuery, query_data(request.query_params))
        rows, next_cursor = page(
            selectors.template_list(self.project, after_id=decode_cursor(q.get("cursor"))), q["limit"]
        )
        return Response({"results": [s.template_out(t) for t in rows], "next_cursor": next_cursor})

    @extend_schema(
        operation_id="templates_create",
        tags=TAGS,
        summary="Create a template (its content comes in versions)",
        description=(
            f"{WHO} Refused with 409 `template_exists` when the key is taken in this project. "
            "Write the content next with `POST /templates/{key}/versions`."
        ),
        request=s.TemplateIn,
        responses={201: s.TemplateOut},
        examples=[
            OpenApiExample(
                "Welcome email", request_only=True, value={"key": "welcome", "channel": "email", "name": "Welcome"}
            )
        ],
    )
    def post(self, request: Request) -> Response:
        template = template_create(project=self.project, **valid(s.TemplateIn, request.data))
        return Response(s.template_out(template), status=201)


class TemplateDetailView(ProjectAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="templates_get",
        tags=TAGS,
        summary="One template with its newest and published version numbers",
        description="Needs `read`. Another project's key answers 404 `template_not_found`.",
        parameters=[KEY],
        responses={200: s.TemplateOut},
    )
    def get(self, request: Request, key: str) -> Response:
        return Response(s.template_out(selectors.template_get(self.project, key)))


class TemplateVersionsView(ProjectAPIView):
    required_scopes = WRITE_OR_READ

    @extend_schema(
        operation_id="templates_versions_list",
        tags=TAGS,
        summary="Every version of a template, newest first",
        description=(
            "Every version of the template, newest first, drafts included, each with its number, layout and "
            "publish time. Another project's key answers 404 `template_not_found`. Needs `read`."
        ),
        parameters=[KEY],
        responses={200: s.VersionOut(many=True)},
    )
    def get(self, request: Request, key: str) -> Response:
        template = selectors.template_get(self.project, key)
        versions = selectors.template_versions(self.project, template)
        return Response([s.version_out(v, template) for v in versions])

    @extend_schema(
        operation_id="templates_versions_create",
        tags=TAGS,
        summary="Write a new version: a draft, or published at once with publish: true",
        description=(
            f"{WHO} The content is checked as the console editor checks it, before anything "
            f"is stored. {CONTENT_ERRORS} A published version never changes; a draft is "
            "published later with `POST …/versions/{number}/publish`."
        ),
        parameters=[KEY],
        request=s.VersionIn,
        responses={201: s.VersionOut},
        examples=[
            OpenApiExample(
                "Email draft",
                request_only=True,
                value={
                    "content": {
                        "email": {
                            "subject": "Welcome, {{ subscriber.first_name }}",
                            "text": "Your code is {{ code }}.",
                            "html": "<p>Your code is <b>{{ code }}</b>.</p>",
                        }
                    },
                    "strict": True,
                },
            ),
            OpenApiExample(
                "WhatsApp",
                request_only=True,
                value={
                    "content": {"whatsapp": {"template": "order_ready", "language": "en", "variables": ["{{ n }}"]}}
                },
            ),
        ],
    )
    def post(self, request: Request, key: str) -> Response:
        data = valid(s.VersionIn, request.data)
        template = selectors.template_get(self.project, key)
        layout = selectors.layout_get(self.project, data["layout"], field="layout") if data.get("layout") else None
        version = template_version_create(
            template=template, content=data["content"], layout=layout, strict=data["strict"], publish=data["publish"]
        )
        if version.published_at:
            template_cache_clear()  # this process sends the new version by key at once
        return Response(s.version_out(version, template), status=201)


class TemplateVersionView(ProjectAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="templates_version_get",
        tags=TAGS,
        summary="One version of a template, with its content",
        description=(
            "One version of the template with its full content per channel, as stored (not rendered). 404 "
            "`template_not_found` or `template_version_not_found`. Needs `read`."
        ),
        parameters=[KEY, NUMBER],
        responses={200: s.VersionOut},
    )
    def get(self, request: Request, key: str, number: int) -> Response:
        template = selectors.template_get(self.project, key)
        return Response(s.version_out(selectors.template_version_get(self.project, template, number), template))


class TemplateVersionPublishView(ProjectAPIView):
    required_scope = TEMPLATES_WRITE

    @extend_schema(
        operation_id="templates_version_publish",
        tags=TAGS,
        summary="Publish a draft: sends by key use it from now on",
        description=(
            f"{WHO} The draft is checked again by today's rules, so one saved before a channel "
            f"requirement existed is refused rather than failing at send time. {CONTENT_ERRORS} "
            "Publishing a version that is already published changes nothing and answers it."
        ),
        parameters=[KEY, NUMBER],
        request=None,
        responses={200: s.VersionOut},
    )
    def post(self, request: Request, key: str, number: int) -> Response:
        template = selectors.template_get(self.project, key)
        version = template_version_publish(version=selectors.template_version_get(self.project, template, number))
        template_cache_clear()
        return Response(s.version_out(version, template))


class TemplatePreviewView(ProjectAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="templates_preview",
        tags=TAGS,
        summary="Render a version for given data: every channel, as it would be sent",
        description=(
            "Needs `read`; nothing is stored or sent. Renders `version` (the newest, draft "
            "included, when left out) with `data` as a publish would carry it and, given "
            "`subscriber`, that subscriber's fields under `subscriber` (404 when the external "
            "id is unknown). Email HTML comes through its layout and the sanitiser, as sent. "
            "A render that fails answers 422 with the sender's code: `template_variable_missing` "
            "(strict versions), `template_too_slow`, `template_output_too_large`, "
            "`template_render_failed`."
        ),
        parameters=[KEY],
        request=s.PreviewIn,
        responses={200: s.PreviewOut},
        examples=[
            OpenApiExample(
                "With data and a subscriber",
                request_only=True,
                value={"data": {"code": "4242"}, "subscriber": "user-1"},
            ),
            OpenApiExample(
                "Rendered",
                response_only=True,
                value={
                    "template": "welcome",
                    "version": 2,
                    "published": False,
                    "rendered": {
                        "email": {"subject": "Welcome, Ada", "text": "Your code is 4242.", "html": "<p>…</p>"}
                    },
                },
            ),
        ],
    )
    def post(self, request: Request, key: str) -> Response:
        data = valid(s.PreviewIn, request.data)
        template = selectors.template_get(self.project, key)
        version = selectors.template_version_get(self.project, template, data.get("version"))
        person = None
        if data.get("subscriber"):
            person = selectors.subscriber_render_fields(subscriber_get(self.project, data["subscriber"]))
        context = render_context(person, data.get("data") or {})
        rendered = {channel: render(version, context, channel=channel) for channel in version.channels}
        return Response(
            {
                "template": template.key,
                "version": version.number,
                "published": version.published_at is not None,
                "rendered": rendered,
            }
        )


class LayoutsView(ProjectAPIView):
    required_scopes = WRITE_OR_READ

    @extend_schema(
        operation_id="layouts_list",
        tags=TAGS,
        summary="List email layouts, oldest first, one cursor page at a time",
        description=(
            "The project's email layouts, oldest first, with their HTML; `next_cursor` pages on, and an unknown "
            "query parameter is refused with 422. Needs `read`."
        ),
        parameters=[s.ListQuery],
        responses={200: s.LayoutPageOut},
    )
    def get(self, request: Request) -> Response:
        q = valid(s.ListQuery, query_data(request.query_params))
        rows, next_cursor = page(
            selectors.layout_list(self.project, after_id=decode_cursor(q.get("cursor"))), q["limit"]
        )
        return Response({"results": [s.layout_out(layout) for layout in rows], "next_cursor": next_cursor})

    @extend_schema(
        operation_id="layouts_create",
        tags=TAGS,
        summary="Create an email layout: the shell a version's HTML is placed in",
        description=(
            f"{WHO} Refused with 422 `unsafe_layout` for active content (script, event "
            "handlers…; `findings` lists each), `invalid_layout` without `{{ content }}`, "
            "`template_syntax`; 409 `layout_exists` for a name already taken."
        ),
        request=s.LayoutIn,
        responses={201: s.LayoutOut},
        examples=[
            OpenApiExample(
                "Plain shell",
                request_only=True,
                value={"name": "Default", "html": '<div style="max-width: 600px">{{ content }}</div>'},
            )
        ],
    )
    def post(self, request: Request) -> Response:
        layout = layout_save(project=self.project, **valid(s.LayoutIn, request.data))
        return Response(s.layout_out(layout), status=201)


class LayoutDetailView(ProjectAPIView):
    required_scopes = WRITE_OR_READ

    @extend_schema(
        operation_id="layouts_get",
        tags=TAGS,
        summary="One email layout",
        description=(
            "One email layout with its HTML. Another project's layout id answers 404 `layout_not_found`. Needs `read`."
        ),
        parameters=[LAYOUT_ID],
        responses={200: s.LayoutOut},
    )
    def get(self, request: Request, layout_id: int) -> Response:
        return Response(s.layout_out(selectors.layout_get(self.project, layout_id)))

    @extend_schema(
        operation_id="layouts_update",
        tags=TAGS,
        summary="Rename an email layout or replace its HTML",
        description=(
            f"{WHO} Every version placed in this layout sends the new HTML from now on. "
            "Refused as creating one is (`unsafe_layout`, `invalid_layout`, `template_syntax`, "
            "409 `layout_exists`)."
        ),
        parameters=[LAYOUT_ID],
        request=s.LayoutIn,
        responses={200: s.LayoutOut, **problem_responses(409)},
    )
    def put(self, request: Request, layout_id: int) -> Response:
        data = valid(s.LayoutIn, request.data)
        layout = layout_save(project=self.project, layout=selectors.layout_get(self.project, layout_id), **data)
        return Response(s.layout_out(layout))
