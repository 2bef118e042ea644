"""Project data the builder tests pick from: tags, segments and published templates."""

from __future__ import annotations

from typing import Any

from apps.delivery.services import template_create, template_version_create
from apps.subscribers.models import Segment, Tag


def published_template(project: Any, key: str, channel: str, content: dict[str, Any] | None = None) -> Any:
    template = template_create(project=project, key=key, channel=channel, name=key)
    default = {
        "email": {
            "subject": "Hi {{ subscriber.first_name }}",
            "text": "Hello",
            "html": "<p>Hello {{ subscriber.first_name }}</p>",
        },
        "push": {"title": "Hi {{ subscriber.first_name }}", "body": "Welcome aboard", "data": {}},
        "sms": {"text": "Hi {{ subscriber.first_name }}"},
    }
    return template_version_create(template=template, content={channel: (content or default[channel])}, publish=True)


def tag(project: Any, name: str) -> Tag:
    return Tag.objects.create(project=project, name=name)


def segment(project: Any, name: str, tags: list[str]) -> Segment:
    from apps.subscribers.services import segment_create

    return segment_create(project=project, name=name, rules={"op": "and", "groups": [{"all": tags}]})


def sign_in(page: Any, user: Any) -> None:
    page.goto("/console/login/")
    page.fill("#id_login", user.email)
    page.fill("#id_password", "correct-horse-battery")
    page.click("button[type=submit]")
    page.wait_for_url("**/console/")
