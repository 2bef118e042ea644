"""Markdown both ways: API descriptions to HTML, page HTML to Markdown for llms-full.txt."""

from __future__ import annotations

import re

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdownify import markdownify

# API descriptions are Markdown written by us; raw HTML in them is still not passed through.
_markdown = MarkdownIt("commonmark", {"html": False})


def markdown_html(text: str) -> SafeString:
    return mark_safe(_markdown.render(text or ""))  # noqa: S308 - html is off, so only Markdown's own tags


_HEADING = re.compile(r"<(/?)h([1-6])\b", re.IGNORECASE)


def html_markdown(html: str, *, heading_shift: int = 0) -> str:
    """Markdown of rich text; ``heading_shift`` pushes its headings down under the page's own."""
    html = str(html)
    if heading_shift:
        html = _HEADING.sub(lambda m: f"<{m[1]}h{min(6, int(m[2]) + heading_shift)}", html)
    return markdownify(html, heading_style="ATX", bullets="-").strip()
