"""Proving, once per template, that its rendered HTML needs no cleaning per message.

Cleaning each rendered email with nh3 costs about 20 µs per KiB of HTML, a minute of CPU
per million 3 KiB messages. Most templates can instead be proved safe once, when they are
compiled:

1. Every template tag (``{{ … }}``, ``{% … %}``, ``{# … #}``, as Jinja's own lexer finds
   them) is replaced by a numbered marker written as an HTML comment, and the result is
   cleaned by nh3 with comments kept. The HTML between the tags comes out as nh3 wrote it:
   in the allow-list, every attribute quoted, ``<`` and ``&`` escaped in text.
2. Each marker must come back intact and in order, either as a comment of its own (the
   tag sits between elements, in text) or inside an attribute's value. A marker lost or
   mangled means the tag sat inside a tag name, an attribute name, a style, a comment or
   an element nh3 drops; one out of order means the parser moved it.
3. ``{% … %}`` and ``{# … #}`` must sit in text: there, whatever the branches and loops
   choose, the output is a sequence of whole elements and text, never half a tag.
4. ``{{ … }}`` in text is escaped (the renderer escapes every value, ``|safe`` and
   ``Markup`` included). In an attribute it is escaped too, and at the start of an
   ``href``/``src`` its value must also start like a safe URL (``tidings_url``).

The template compiled is then nh3's HTML with the tags put back. Anything the proof cannot
show (it answers ``None``) is rendered from the source as written and cleaned per message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jinja2 import Environment, TemplateSyntaxError

from apps.delivery.sanitiser import CLEAN_TEMPLATE_OPTIONS, URL_ATTRIBUTES, URL_SCHEMES, html_cleaner

OPEN, CLOSE = "\ue000", "\ue001"  # private-use characters: never in a template's own text
_MARK_IN_TEXT = re.compile(f"<!--(.*?)-->|&lt;!--{OPEN}(\\d+){CLOSE}--&gt;", re.DOTALL)
_MARK_IN_VALUE = re.compile(f"<!--{OPEN}(\\d+){CLOSE}-->")
_OWN_MARK = re.compile(f"{OPEN}(\\d+){CLOSE}")
_EXPRESSION = re.compile(r"\{\{([-+]?)(.*?)([-+]?)\}\}", re.DOTALL)
_BEGIN = {"variable_begin": "variable", "block_begin": "block", "comment_begin": "comment"}
_END = {"variable_end", "block_end", "comment_end"}
_SAFE_URL_START = (*(f"{scheme}:" for scheme in sorted(URL_SCHEMES)), "/", "?", "#")
UNSAFE_URL = "#unsafe-url"
# What a browser's URL parser strips first: C0 controls and spaces at the start.
_URL_IGNORED_LEADING = "".join(chr(c) for c in range(0x21))


@dataclass(frozen=True)
class _Tag:
    kind: str  # variable, block or comment
    text: str


def _split(env: Environment, source: str) -> tuple[list[str | _Tag], list[_Tag]] | None:
    pieces: list[str | _Tag] = []
    tags: list[_Tag] = []
    current: list[str] = []
    kind = ""
    try:
        for _, lexeme, value in env.lexer.tokeniter(source, None):
            if kind:
                current.append(value)
                if lexeme in _END:
                    tags.append(_Tag(kind, "".join(current)))
                    pieces.append(tags[-1])
                    kind, current = "", []
            elif lexeme in _BEGIN:
                kind, current = _BEGIN[lexeme], [value]
            elif lexeme in ("raw_begin", "raw_end"):
                tags.append(_Tag("block", value))
                pieces.append(tags[-1])
            elif lexeme == "data":
                pieces.append(value)
            else:
                return None
    except TemplateSyntaxError:
        return None
    return (pieces, tags) if not kind else None


def safe_url_value(value: object) -> str:
    """A value that starts an ``href``/``src``: kept when it starts like a safe URL."""
    text = str(value)
    if text.startswith(_SAFE_URL_START):  # the everyday case, already in the form the parser ends with
        return text
    start = text.lstrip(_URL_IGNORED_LEADING).replace("\t", "").replace("\n", "").replace("\r", "")
    return text if start.lower().startswith(_SAFE_URL_START) else UNSAFE_URL


def _in_attribute(tag: _Tag, guard: str) -> str | None:
    match = _EXPRESSION.fullmatch(tag.text)
    if tag.kind != "variable" or match is None:
        return None
    left, expression, right = match.groups()
    return f"{{{{{left} ({expression})|{guard} {right}}}}}"


def html_template_prove(env: Environment, source: str) -> str | None:
    """The template source to compile when its output is safe without cleaning, else None."""
    if OPEN in source or CLOSE in source:
        return None
    split = _split(env, source)
    if split is None:
        return None
    pieces, tags = split
    numbers = iter(range(len(tags)))
    marked = "".join(p if isinstance(p, str) else f"<!--{OPEN}{next(numbers)}{CLOSE}-->" for p in pieces)
    guards: dict[int, str] = {}
    unsafe: list[int] = []

    def attribute(element: str, name: str, value: str) -> str:
        for position, match in enumerate(_MARK_IN_VALUE.finditer(value)):
            index = int(match.group(1))
            if name == "style":
                unsafe.append(index)
            elif name in URL_ATTRIBUTES and position == 0:
                prefix = value[: match.start()].strip()
                if not prefix:
                    guards[index] = "tidings_url"
                elif not any(c in prefix for c in ":/?#"):
                    unsafe.append(index)  # the value decides the scheme; no guard can see it whole
                else:
                    guards[index] = "tidings_attr"
            else:
                guards[index] = "tidings_attr"
        return value

    cleaned = html_cleaner(**CLEAN_TEMPLATE_OPTIONS, attribute_filter=attribute).clean(marked)
    if unsafe:
        return None
    seen: list[int] = []
    restored: list[str] = []

    def restore(match: re.Match[str]) -> str:
        comment, in_value = match.group(1), match.group(2)
        if in_value is not None:
            index = int(in_value)
            seen.append(index)
            restored.append(_in_attribute(tags[index], guards.get(index, "tidings_attr")) or f"{OPEN}{CLOSE}")
            return restored[-1]
        own = _OWN_MARK.fullmatch(comment)
        if own is None:
            # The editor's own comment: dropped, or a tag inside it taints the proof.
            return f"{OPEN}{CLOSE}" if OPEN in comment or CLOSE in comment else ""
        seen.append(int(own.group(1)))
        restored.append(tags[int(own.group(1))].text)
        return restored[-1]

    proved = _MARK_IN_TEXT.sub(restore, cleaned)
    if OPEN in proved or CLOSE in proved or seen != list(range(len(tags))):
        return None
    # Text nh3 rewrote next to a tag must not have made another tag of it.
    again = _split(env, proved)
    if again is None or [t.text for t in again[1]] != restored:
        return None
    return proved
