"""Refuse email layouts that carry active content, naming what was found.

Email clients strip or block most of this anyway, but a layout is shared by every message
of a project: refusing it at save time keeps a pasted tracking snippet or an injected
handler from ever reaching a recipient.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

FORBIDDEN_TAGS = {"script", "iframe", "frame", "frameset", "object", "embed", "applet"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "background", "poster", "data", "srcset"}
_IGNORED_IN_SCHEME = re.compile(r"[\x00-\x20]+")


class _Finder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.findings: list[str] = []

    def _note(self, finding: str) -> None:
        if finding not in self.findings:
            self.findings.append(finding)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in FORBIDDEN_TAGS:
            self._note(f"<{tag}> element")
        for name, value in attrs:
            if name.startswith("on"):
                self._note(f"inline event handler {name}= on <{tag}>")
            # Browsers ignore whitespace and control characters inside the scheme.
            if name in URL_ATTRIBUTES and value and _IGNORED_IN_SCHEME.sub("", value).lower().startswith("javascript:"):
                self._note(f"javascript: URL in {name}= on <{tag}>")

    handle_startendtag = handle_starttag


def layout_findings(html: str) -> list[str]:
    """Everything unsafe in ``html``, each named once, in document order."""
    finder = _Finder()
    finder.feed(html)
    finder.close()
    return finder.findings
