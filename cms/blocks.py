"""StreamField blocks of the docs: rich text, highlighted code, callouts, images, API operations.

Every block renders to HTML for the site and to Markdown for llms-full.txt
(``block_markdown``), so the machine-readable copy never drifts from the page.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils.safestring import mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from wagtail import blocks
from wagtail.blocks.struct_block import StructBlockValidationError
from wagtail.images.blocks import ImageBlock
from wagtail.rich_text import expand_db_html

from cms.markdown import html_markdown
from cms.openapi import ApiOperation, api_operation, api_operation_choices

LANGUAGES = [
    ("bash", "Shell"),
    ("python", "Python"),
    ("javascript", "JavaScript"),
    ("typescript", "TypeScript"),
    ("json", "JSON"),
    ("http", "HTTP"),
    ("yaml", "YAML"),
    ("html", "HTML"),
    ("go", "Go"),
    ("ruby", "Ruby"),
    ("php", "PHP"),
    ("text", "Plain text"),
]
# The editor's features for docs prose: no raw HTML, embeds or anything that runs.
RICH_TEXT_FEATURES = ["h2", "h3", "h4", "bold", "italic", "ol", "ul", "link", "document-link", "code", "blockquote"]


class CodeBlock(blocks.StructBlock):
    language = blocks.ChoiceBlock(choices=LANGUAGES, default="bash")
    caption = blocks.CharBlock(required=False, max_length=120, help_text="Shown above the code, e.g. a file name.")
    code = blocks.TextBlock()

    class Meta:
        icon = "code"
        template = "cms/blocks/code.html"

    def get_context(self, value: Any, parent_context: dict[str, Any] | None = None) -> dict[str, Any]:
        context = super().get_context(value, parent_context)
        lexer = get_lexer_by_name(value["language"], stripall=False)
        context["highlighted"] = mark_safe(highlight(value["code"], lexer, HtmlFormatter(cssclass="highlight")))  # noqa: S308 - Pygments escapes the code
        context["language_label"] = dict(LANGUAGES).get(value["language"], value["language"])
        return context

    def markdown(self, value: Any) -> str:
        caption = f"{value['caption']}:\n\n" if value["caption"] else ""
        return f"{caption}```{value['language']}\n{value['code'].rstrip()}\n```"


class CalloutBlock(blocks.StructBlock):
    kind = blocks.ChoiceBlock(choices=[("note", "Note"), ("tip", "Tip"), ("warning", "Warning")], default="note")
    title = blocks.CharBlock(required=False, max_length=120)
    body = blocks.RichTextBlock(features=RICH_TEXT_FEATURES)

    class Meta:
        icon = "warning"
        template = "cms/blocks/callout.html"

    def markdown(self, value: Any) -> str:
        title = value["title"] or value["kind"].title()
        lines = html_markdown(expand_db_html(value["body"].source)).splitlines()
        return "\n".join([f"> **{title}:**", ">", *[f"> {line}".rstrip() for line in lines]])


class ApiOperationBlock(blocks.StructBlock):
    operation_id = blocks.ChoiceBlock(
        choices=api_operation_choices, label="Operation", help_text="An operation of the live API document."
    )

    class Meta:
        icon = "link-external"
        template = "cms/blocks/api_operation.html"

    def clean(self, value: Any) -> Any:
        value = super().clean(value)
        # The choices were read when the form was built; the API may have changed since.
        if api_operation(value["operation_id"]) is None:
            message = f"The API has no operation {value['operation_id']!r}."
            raise StructBlockValidationError(block_errors={"operation_id": ValidationError(message)})
        return value

    def get_context(self, value: Any, parent_context: dict[str, Any] | None = None) -> dict[str, Any]:
        context = super().get_context(value, parent_context)
        context["operation"] = api_operation(value["operation_id"])
        return context

    def markdown(self, value: Any) -> str:
        operation = api_operation(value["operation_id"])
        return operation_markdown(operation) if operation else ""


def operation_markdown(operation: ApiOperation) -> str:
    lines = [f"### `{operation.method} {operation.path}` — {operation.summary}", "", operation.description.strip()]
    if operation.parameters:
        lines += ["", "Parameters:", ""]
        lines += [
            f"- `{p['name']}` ({p['in']}, {p['type']}{', required' if p['required'] else ''}) "
            f"{p['description']}".rstrip()
            for p in operation.parameters
        ]
    if operation.request_fields:
        lines += ["", "Request body (JSON):", ""]
        lines += [
            f"- `{f.name}` ({f.type}{', required' if f.required else ''}) {f.description}".rstrip()
            for f in operation.request_fields
        ]
    if operation.responses:
        lines += ["", "Responses:", ""]
        lines += [f"- {code}: {description}".rstrip(": ") for code, description in operation.responses]
    return "\n".join(lines)


class DocsStreamBlock(blocks.StreamBlock):
    text = blocks.RichTextBlock(features=RICH_TEXT_FEATURES, icon="pilcrow")
    code = CodeBlock()
    callout = CalloutBlock()
    image = ImageBlock()
    api_operation = ApiOperationBlock()


def stream_markdown(stream: Any, *, heading_shift: int = 0) -> str:
    """The Markdown of a docs body, block by block."""
    parts: list[str] = []
    for child in stream:
        block = child.block
        if isinstance(block, blocks.RichTextBlock):
            parts.append(html_markdown(expand_db_html(child.value.source), heading_shift=heading_shift))
        elif isinstance(block, ImageBlock):
            alt = getattr(child.value, "contextual_alt_text", "") or child.value.title
            parts.append(f"![{alt}]({child.value.file.url})")
        elif hasattr(block, "markdown"):
            parts.append(block.markdown(child.value))
    return "\n\n".join(part for part in parts if part)
