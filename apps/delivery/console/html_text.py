"""An email's plain-text part drafted from its HTML, for the editor's "generate" button.

Template tags pass through as the text they are, so ``{{ name }}`` stays a variable of
the text part too.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCKS = frozenset(
    {"p", "div", "table", "tr", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "section", "hr"}
)
_SKIPPED = frozenset({"head", "style", "script", "title"})


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.links: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
        elif tag in _BLOCKS:
            self.parts.append("\n\n")
        elif tag == "br":
            self.parts.append("\n")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in ("td", "th"):
            self.parts.append(" ")
        elif tag == "a":
            self.links.append(dict(attrs).get("href"))

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n\n")
        elif tag == "a" and self.links:
            href = self.links.pop()
            if href and not href.startswith("#") and not self._ends_with(href):
                self.parts.append(f" ({href})")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(re.sub(r"\s+", " ", data))

    def _ends_with(self, href: str) -> bool:
        return "".join(self.parts[-3:]).strip().endswith(href)


def html_to_text(html: str) -> str:
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    lines = [line.strip() for line in "".join(parser.parts).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
