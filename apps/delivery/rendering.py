"""Rendering template versions in Jinja2's sandbox.

HTML is autoescaped; subject, text, SMS and the other plain fields are not. In HTML every
value is escaped, whatever the template does: ``|safe`` gives plain text and ``Markup``
from any filter is escaped again; only the rendered body a layout places with
``{{ content }}`` is inserted as HTML. An email's HTML carries nothing outside the
allow-list of ``apps.delivery.sanitiser``: proved once for the template
(``apps.delivery.html_templates``), or cleaned per message when that cannot be proved.

A missing variable renders as "" unless the version (or the caller) asks for strict mode,
where it raises ``TemplateError`` naming the variable. Resource limits
(``apps.delivery.render_limits``) bound every render. Compiled templates are cached per
published version id: published versions never change, so the cache never goes stale.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from jinja2 import ChainableUndefined, StrictUndefined, Template, TemplateSyntaxError, UndefinedError, nodes
from jinja2.sandbox import SandboxedEnvironment, SecurityError
from jinja2.utils import pass_eval_context
from markupsafe import Markup, escape

from apps.delivery.html_templates import html_template_prove, safe_url_value
from apps.delivery.render_limits import (
    BoundedSandbox,
    RenderBudget,
    TemplateError,
    budget_release,
    budget_use,
    template_bound,
)
from apps.delivery.sanitiser import html_sanitise

__all__ = ["TemplateError", "compile_content", "layout_render", "render", "render_context", "renderer"]

HTML_FIELDS = frozenset({"html"})
# The email body sent as text/html: the field the allow-list governs.
EMAIL_HTML = "email.html"
# Fields that are identifiers, not text to render (an approved WhatsApp template's name).
LITERAL_FIELDS = frozenset({"template", "language", "platform"})
# Tidings' own markup around escaped text: it needs no proof and no cleaning.
PREHEADER_HTML = '<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">{}</div>'
_UNDEFINED_NAME = re.compile(r"'([^']+)' (?:is undefined|has no attribute '([^']+)')")


class TrustedHtml(Markup):
    """HTML Tidings produced itself: the rendered (and safe) body a layout places."""


# Taking the eval context keeps Jinja from folding constant output at compile time, so
# every value, ``('<scr'~'ipt>')|safe`` included, passes through here and is escaped.
@pass_eval_context
def _finalize(_eval_ctx: Any, value: Any) -> Any:
    if type(value) is TrustedHtml:
        return value
    return str(value) if isinstance(value, Markup) else value


def _plain(value: Any) -> str:
    return str(value)


def _env(*, html: bool, strict: bool) -> SandboxedEnvironment:
    env = BoundedSandbox(
        autoescape=html,
        undefined=StrictUndefined if strict else ChainableUndefined,
        keep_trailing_newline=True,
        auto_reload=False,
        finalize=_finalize if html else None,  # plain text shows Markup as the text it is
    )
    env.filters["safe"] = _plain
    env.filters["tidings_attr"] = _plain
    env.filters["tidings_url"] = safe_url_value
    return env


_ENVS = {(html, strict): _env(html=html, strict=strict) for html in (True, False) for strict in (True, False)}


@dataclass(frozen=True)
class CompiledHtml:
    """An email body or layout; ``proven``: its output needs no cleaning per message."""

    template: Template
    proven: bool


def _compile_text(source: str, *, html: bool, strict: bool, path: str) -> Template:
    env = _ENVS[(html, strict)]
    try:
        tree = env.parse(source)
        if html and next(tree.find_all(nodes.EvalContextModifier), None) is not None:
            raise TemplateError(
                f"{path}: {{% autoescape %}} is not available: every value in HTML is escaped.",
                code="template_unsafe",
                field=path,
            )
        return env.from_string(template_bound(tree))
    except TemplateSyntaxError as exc:
        raise TemplateError(f"{path}: {exc.message} (line {exc.lineno}).", code="template_syntax", field=path) from exc
    except TemplateError:
        raise
    except RecursionError as exc:
        raise TemplateError(f"{path}: the template nests too deeply.", code="template_too_deep", field=path) from exc
    except Exception as exc:
        # Whatever the parser or compiler trips on in a user's text (a literal too long
        # to convert…) is a fault of that text: say so, never fail the page or the save.
        raise TemplateError(
            f"{path}: the template cannot be compiled: {type(exc).__name__}: {exc}"[:500],
            code="template_syntax",
            field=path,
        ) from exc


def _compile_html(source: str, *, strict: bool, path: str) -> CompiledHtml:
    as_written = _compile_text(source, html=True, strict=strict, path=path)
    proved = html_template_prove(_ENVS[(True, strict)], source)
    if proved is not None:
        try:
            return CompiledHtml(_compile_text(proved, html=True, strict=strict, path=path), proven=True)
        except TemplateError:
            pass  # what nh3 rewrote no longer compiles: clean each message instead
    return CompiledHtml(as_written, proven=False)


def _compile_tree(value: Any, *, strict: bool, path: str, html: bool = False) -> Any:
    if isinstance(value, str):
        if path == EMAIL_HTML:
            return _compile_html(value, strict=strict, path=path)
        return _compile_text(value, html=html, strict=strict, path=path)
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


# Every environment has the same globals (range, dict, cycler…): what ``Template.render``
# would merge under the context for each template.
_GLOBALS: dict[str, Any] = dict(_ENVS[(False, False)].globals)


def _render_template(template: Template, parent: dict[str, Any], budget: RenderBudget) -> str:
    """Render one template against a shared, read-only variable mapping, within ``budget``.

    ``Template.render`` would copy the context twice per template; a message's fields
    (subject, text, html…) share one mapping instead. Each template still gets its own
    Context, so a ``{% set %}`` in one field never leaks into another.
    """
    parts: list[str] = []
    chars, limit = budget.chars, budget.max_chars
    # Output pieces are counted, not timed: only loops and calls can run long, and they tick.
    for piece in template.root_render_func(template.new_context(parent, shared=True)):
        chars += len(piece)
        if chars > limit:
            budget.over()
        parts.append(piece)
    budget.chars = chars
    return "".join(parts)


def _render_tree(compiled: Any, parent: dict[str, Any], budget: RenderBudget) -> Any:
    if isinstance(compiled, Template):
        return _render_template(compiled, parent, budget)
    if isinstance(compiled, CompiledHtml):
        return _render_template(compiled.template, parent, budget)
    if isinstance(compiled, dict):
        return {key: _render_tree(item, parent, budget) for key, item in compiled.items()}
    if isinstance(compiled, list):
        return [_render_tree(item, parent, budget) for item in compiled]
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


def compile_layout(html: str, *, strict: bool = False) -> CompiledHtml:
    return _compile_html(html, strict=strict, path="layout")


def _compiled_for(version: Any, channel: str, strict: bool) -> tuple[Any, CompiledHtml | None]:
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
            ("l", lay.pk, strict, lay.updated_at.timestamp() if lay.updated_at else 0, lay.html),
            lambda: compile_layout(lay.html, strict=strict),
        )
    return tree, layout


def _email_html(tree: Any, rendered: dict[str, Any], layout: CompiledHtml | None, parent: dict, budget: Any) -> str:
    body = tree["html"]
    html = rendered["html"]
    proven = body.proven
    if layout is not None:
        html = _render_template(layout.template, {**parent, "content": TrustedHtml(html)}, budget)
        proven = proven and layout.proven
    html = html if proven else html_sanitise(html)
    preheader = rendered.get("preheader")
    if isinstance(preheader, str) and preheader.strip():
        # Inboxes show the first text of the body after the subject; hidden, it shows only there.
        html = PREHEADER_HTML.format(escape(preheader)) + html
    return html


def renderer(version: Any, *, channel: str, strict: bool = False) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """Look the compiled version up once; the function returned renders one context.

    The dispatcher takes one per template version per batch, not one lookup per message.
    """
    strict = strict or bool(getattr(version, "strict", False))
    tree, layout = _compiled_for(version, channel, strict)
    email_html = isinstance(tree, dict) and isinstance(tree.get("html"), CompiledHtml)
    limit_ms, max_chars = settings.TIDINGS_RENDER_TIME_LIMIT_MS, settings.TIDINGS_RENDER_MAX_CHARS

    def render_one(context: Mapping[str, Any]) -> dict[str, Any]:
        budget = RenderBudget(limit_ms=limit_ms, max_chars=max_chars)
        token = budget_use(budget)
        parent = {**_GLOBALS, **context}
        try:
            rendered = _render_tree(tree, parent, budget)
            if email_html:
                rendered["html"] = _email_html(tree, rendered, layout, parent, budget)
        except TemplateError:
            raise
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
        except RecursionError as exc:
            raise TemplateError("The template calls itself too deeply.", code="template_too_deep") from exc
        except Exception as exc:
            # Data the template did not expect (a zero divisor, a list where a mapping was
            # due, a filter's own assertion): whatever a user's template raises is that
            # template's fault, so this message fails with the reason, the others still
            # render, and a preview shows the reason instead of failing the page.
            raise TemplateError(
                f"The template failed to render: {type(exc).__name__}: {exc}"[:500], code="template_render_failed"
            ) from exc
        finally:
            budget_release(token)
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


def layout_render(html: str, context: Mapping[str, Any], *, body: str) -> str:
    """A layout around an already rendered, safe ``body``: the layout editor's preview."""
    layout = compile_layout(html)
    budget = RenderBudget(limit_ms=settings.TIDINGS_RENDER_TIME_LIMIT_MS, max_chars=settings.TIDINGS_RENDER_MAX_CHARS)
    token = budget_use(budget)
    try:
        out = _render_template(layout.template, {**_GLOBALS, **context, "content": TrustedHtml(body)}, budget)
    except TemplateError:
        raise
    except Exception as exc:
        # As for a template: whatever the layout raises is the layout's fault, told, never a 500.
        raise TemplateError(
            f"The layout failed to render: {type(exc).__name__}: {exc}"[:500], code="template_render_failed"
        ) from exc
    finally:
        budget_release(token)
    return out if layout.proven else html_sanitise(out)


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
