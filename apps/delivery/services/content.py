"""Checking template content and layouts before they are stored.

The one place that says what a channel's content must hold (what its adapters in
``apps.delivery.channels`` read) and what email HTML may carry. The console and every API
that stores templates or layouts call ``template_content_validate`` and
``layout_html_validate``; both raise ``ApplicationError`` (``UnsafeHtml`` for active
content) naming the field, and change nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment

from apps.core.errors import ApplicationError
from apps.delivery.rendering import compile_content, compile_layout
from apps.delivery.sanitiser import html_findings
from apps.subscribers.models import Channel

CHANNELS = {c.value for c in Channel}
_PARSER = SandboxedEnvironment()


class UnsafeHtml(ApplicationError):
    default_code = "unsafe_html"


def _filled(block: Mapping[str, Any], name: str) -> bool:
    value = block.get(name)
    return value not in (None, "", [], {})


def _email(block: Mapping[str, Any]) -> str | None:
    if not _filled(block, "subject"):
        return "subject: an email needs a subject"
    if not (_filled(block, "text") or _filled(block, "html")):
        return "text: an email needs a text or an html body"
    return None


def _push(block: Mapping[str, Any]) -> str | None:
    if not any(_filled(block, name) for name in ("title", "body", "data")):
        return "title: a push needs a title, a body or data"
    return None


def _sms(block: Mapping[str, Any]) -> str | None:
    return None if _filled(block, "text") else "text: an SMS needs text"


def _whatsapp(block: Mapping[str, Any]) -> str | None:
    # Business-initiated WhatsApp messages are approved templates only: the adapters
    # refuse a message without the template's name ("missing_template").
    if not isinstance(block.get("template"), str) or not block["template"].strip():
        return "template: WhatsApp needs the name of an approved template"
    if "variables" in block and not isinstance(block["variables"], list):
        return "variables: must be a list, one value per placeholder of the approved template"
    return None


def _slack(block: Mapping[str, Any]) -> str | None:
    return None if _filled(block, "text") or _filled(block, "blocks") else "text: a Slack message needs text or blocks"


def _teams(block: Mapping[str, Any]) -> str | None:
    if _filled(block, "card"):
        return None if isinstance(block["card"], dict) else "card: an Adaptive Card is a JSON object"
    return None if _filled(block, "text") else "text: a Teams message needs text or a card"


def _webhook(block: Mapping[str, Any]) -> str | None:
    return None  # the body is whatever JSON the receiver expects; none is an empty object


CHANNEL_REQUIREMENTS: dict[str, Callable[[Mapping[str, Any]], str | None]] = {
    Channel.EMAIL: _email,
    Channel.PUSH: _push,
    Channel.SMS: _sms,
    Channel.WHATSAPP: _whatsapp,
    Channel.SLACK: _slack,
    Channel.TEAMS: _teams,
    Channel.WEBHOOK: _webhook,
}
TEXT_FIELDS = {"subject", "preheader", "text", "html", "title", "template", "language"}


def _template_findings(source: str) -> list[str]:
    """What Tidings will not do in HTML, found in the template itself."""
    found = []
    try:
        tree = _PARSER.parse(source)
    except Exception:  # noqa: BLE001 — compiling reports syntax errors with their line
        return []
    if any(f.name == "safe" for f in tree.find_all(nodes.Filter)):
        found.append("the |safe filter (every value is escaped in HTML; it would show as text)")
    return found


def html_validate(html: str, *, field: str, code: str, template: bool = True) -> None:
    """Refuse HTML that carries anything outside the allow-list, naming each finding;
    ``template``: the HTML is a template's source (not HTML sent as it is)."""
    findings = html_findings(html) + (_template_findings(html) if template else [])
    if findings:
        raise UnsafeHtml(
            f"The HTML contains active content that email must not carry: {'; '.join(findings)}.",
            code=code,
            field=field,
            extra={"findings": findings},
        )


def template_content_validate(*, content: Any, strict: bool = False) -> None:
    """One block per known channel, each holding what its channel needs, safe HTML, valid syntax."""
    if not isinstance(content, dict):
        raise ApplicationError(
            "Content must be a JSON object, one block per channel.", code="invalid_content", field="content"
        )
    unknown = set(content) - CHANNELS
    if not content or unknown:
        raise ApplicationError(
            f"Content needs one block per channel; unknown: {', '.join(sorted(unknown)) or 'none given'}.",
            code="invalid_content",
            field="content",
        )
    for channel, block in content.items():
        if not isinstance(block, dict):
            raise ApplicationError(
                f"{channel}: the block must be a JSON object.", code="invalid_content", field=channel
            )
        for name in TEXT_FIELDS & set(block):
            if not isinstance(block[name], str):
                raise ApplicationError(
                    f"{channel}.{name}: must be text.", code="invalid_content", field=f"{channel}.{name}"
                )
        problem = CHANNEL_REQUIREMENTS[channel](block)
        if problem:
            name, _, sentence = problem.partition(": ")
            raise ApplicationError(
                f"{channel}.{name}: {sentence}.", code="content_incomplete", field=f"{channel}.{name}"
            )
    if isinstance(content.get("email", {}).get("html"), str):
        html_validate(content["email"]["html"], field="email.html", code="unsafe_html")
    compile_content(content, strict=strict)


def layout_html_validate(*, html: str) -> None:
    """A layout places the message with ``{{ content }}`` and carries no active content."""
    html_validate(html, field="html", code="unsafe_layout")
    if "content" not in html:
        raise ApplicationError(
            "A layout must place the message with {{ content }}.", code="invalid_layout", field="html"
        )
    compile_layout(html)
