"""Rendering template versions in Jinja2's sandbox.

HTML is autoescaped; subject, text, SMS and the other plain fields are not. A missing
variable renders as "" unless the version (or the caller) asks for strict mode, where it
raises ``TemplateError`` naming the variable. Compiled templates are cached per published
version id: published versions never change, so the cache never goes stale.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import ChainableUndefined, StrictUndefined, Template, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment, SecurityError
from markupsafe import Markup

from apps.core.errors import ApplicationError

HTML_FIELDS = frozenset({"html"})
# Fields that are identifiers, not text to render (an approved WhatsApp template's name).
LITERAL_FIELDS = frozenset({"template", "language", "platform"})
_UNDEFINED_NAME = re.compile(r"'([^']+)' (?:is undefined|has no attribute '([^']+)')")


class TemplateError(ApplicationError):
    default_code = "template_error"


def _env(*, html: bool, strict: bool) -> SandboxedEnvironment:
    return SandboxedEnvironment(
        autoescape=html,
        undefined=StrictUndefined if strict else ChainableUndefined,
        keep_trailing_newline=True,
        auto_reload=False,
    )


_ENVS = {(html, strict): _env(html=html, strict=strict) for html in (True, False) for strict in (True, False)}


def _compile_tree(value: Any, *, strict: bool, path: str, html: bool = False) -> Any:
    if isinstance(value, str):
        try:
            return _ENVS[(html, strict)].from_string(value)
        except TemplateSyntaxError as exc:
            raise TemplateError(
                f"{path}: {exc.message} (line {exc.lineno}).", code="template_syntax", field=path
            ) from exc
    if isinstance(value, Mapping):
        return {
            key: (
                item
                if key in LITERAL_FIELDS
                else _compile_tree(item, strict=strict, path=f"{path}.{key}", html=key in HTML_FIELDS)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_compile_tree(item, strict=strict, path=f"{path}[{i}]") for i, item in enumerate(value)]
    return value


# Every environment has Jinja's default globals (range, dict, lipsum…): what
# ``Template.render`` would merge under the context for each template.
_GLOBALS: dict[str, Any] = dict(_ENVS[(False, False)].globals)


def _render_tree(compiled: Any, parent: dict[str, Any]) -> Any:
    """Render every template of a tree against one shared, read-only variable mapping.

    ``Template.render`` would copy the context twice per template; a message's fields
    (subject, text, html…) share one mapping instead. Each template still gets its own
    Context, so a ``{% set %}`` in one field never leaks into another.
    """
    if isinstance(compiled, Template):
        return compiled.environment.concat(compiled.root_render_func(compiled.new_context(parent, shared=True)))
    if isinstance(compiled, dict):
        return {key: _render_tree(item, parent) for key, item in compiled.items()}
    if isinstance(compiled, list):
        return [_render_tree(item, parent) for item in compiled]
    return compiled


class _CompiledCache:
    """A small LRU of compiled trees; key includes strictness and what makes a draft change."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self.items: OrderedDict[tuple, Any] = OrderedDict()

    def get_or_build(self, key: tuple, build: Any) -> Any:
        try:
            self.items.move_to_end(key)
            return self.items[key]
        except KeyError:
            value = build()
            self.items[key] = value
            if len(self.items) > self.size:
                self.items.popitem(last=False)
            return value


_cache = _CompiledCache()


def compile_content(content: Mapping[str, Any], *, strict: bool = False) -> dict[str, Any]:
    """Compile every channel's content; raises ``TemplateError`` for a syntax error."""
    return {channel: _compile_tree(block, strict=strict, path=channel) for channel, block in content.items()}


def _compiled_for(version: Any, channel: str, strict: bool) -> tuple[Any, Any]:
    if channel not in version.content:
        raise TemplateError(f"The template version has no {channel} content.", code="template_lacks_channel")
    # Drafts may still change: key them by their content too; published ones by id alone.
    stamp = version.published_at.timestamp() if version.published_at else repr(version.content)
    key = ("v", version.pk, channel, strict, stamp)
    tree = _cache.get_or_build(key, lambda: _compile_tree(version.content[channel], strict=strict, path=channel))
    layout = None
    if channel == "email" and getattr(version, "layout_id", None):
        lay = version.layout
        layout = _cache.get_or_build(
            ("l", lay.pk, strict, lay.updated_at.timestamp() if lay.updated_at else 0),
            lambda: _compile_tree(lay.html, strict=strict, path="layout", html=True),
        )
    return tree, layout


def renderer(version: Any, *, channel: str, strict: bool = False) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """Look the compiled version up once; the function returned renders one context.

    The dispatcher takes one per template version per batch, not one lookup per message.
    """
    strict = strict or bool(getattr(version, "strict", False))
    tree, layout = _compiled_for(version, channel, strict)

    def render_one(context: Mapping[str, Any]) -> dict[str, Any]:
        try:
            rendered = _render_tree(tree, {**_GLOBALS, **context})
            if layout is not None and "html" in rendered:
                # Already escaped by the autoescaping environment: mark it safe so it is not escaped twice.
                rendered["html"] = layout.render({**context, "content": Markup(rendered["html"])})  # noqa: S704
        except UndefinedError as exc:
            match = _UNDEFINED_NAME.search(str(exc))
            name = (match.group(2) or match.group(1)) if match else str(exc)
            raise TemplateError(
                f"The template uses the variable {name!r}, which this message does not have.",
                code="template_variable_missing",
                field=name,
            ) from exc
        except SecurityError as exc:
            raise TemplateError(f"The template did something unsafe: {exc}.", code="template_unsafe") from exc
        return rendered

    return render_one


def render(
    version: Any, context: Mapping[str, Any], strict: bool = False, channel: str | None = None
) -> dict[str, Any]:
    """Render one channel's content of ``version`` with ``context``.

    ``channel`` may be omitted when the version has content for one channel only.
    """
    if channel is None:
        if len(version.content) != 1:
            raise TemplateError("Say which channel to render.", code="channel_required")
        channel = next(iter(version.content))
    return renderer(version, channel=channel, strict=strict)(context)


def render_context(subscriber: Mapping[str, Any] | None, data: Mapping[str, Any] | None) -> dict[str, Any]:
    """Variables a template sees: the notification's data at the top level and under
    ``data``, and the subscriber's fields and attributes under ``subscriber``."""
    data = dict(data or {})
    context = dict(data)
    context["data"] = data
    if subscriber is not None:
        attributes = dict(subscriber.get("attributes") or {})
        person = {**attributes, **{k: v for k, v in subscriber.items() if k != "attributes"}}
        person["attributes"] = attributes
        context["subscriber"] = person
    return context
