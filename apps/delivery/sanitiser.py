"""What email HTML may carry, checked by nh3 (ammonia's HTML5 parser, html5ever).

One allow-list serves three uses, so the browser, the check at save time and the cleaning
at send time all read the same tree:

- ``html_findings``: what a layout or template would lose, named for the editor, who is
  refused with them (``<script>``, ``onerror=``, ``javascript:`` links, SVG, forms…).
- ``html_sanitise``: the last step of rendering an email whose template could not be
  proved safe once for all messages (see ``apps.delivery.html_templates``).
- ``html_cleaner(**CLEAN_TEMPLATE_OPTIONS)``: the same list, keeping comments, for that proof.

The allow-list (email-friendly, deliberately small):

- Elements: text structure and formatting (p, div, span, h1 to h6, b, i, u, s, em, strong,
  small, sub, sup, br, hr, blockquote, pre, code, lists, center, font…), tables (table,
  caption, colgroup, col, thead, tbody, tfoot, tr, th, td), images (img) and links (a).
  ``html``, ``head``, ``body``, ``meta`` and ``title`` are dropped without complaint: an
  email is the body's content, so page styles belong on a wrapper element. Everything
  else is dropped: scripts, styles, frames, objects, forms, SVG and MathML, media, and
  the elements browsers parse as raw text (``xmp``, ``noscript``, ``textarea``…).
- Attributes: presentation attributes email clients still honour (align, valign,
  bgcolor, width, height, border, cellpadding, cellspacing, colspan, rowspan…), class,
  id, dir, lang, title, alt, role and a few aria-*; ``href`` on links and ``src`` on
  images. No event handler (``on*``), no ``srcset``, ``srcdoc``, ``background``,
  ``formaction`` or ``xlink:href``.
- URLs: ``http``, ``https``, ``mailto`` and ``tel`` only; ``rel="noopener noreferrer"``
  is added to every link.
- Inline ``style``: only the layout and typography properties listed below survive
  (ammonia parses the declarations); ``position``, ``z-index``, ``behavior``,
  ``-moz-binding``, transforms and animations do not. CSS values are not inspected: no
  client still executes script from CSS (IE7's ``expression()`` was the last).
- Comments are dropped, Outlook's conditional comments with them.
"""

from __future__ import annotations

import re
from functools import cache

import nh3

ALLOWED_TAGS = frozenset(
    {
        "a", "abbr", "address", "article", "aside", "b", "bdi", "bdo", "big", "blockquote", "br",
        "caption", "center", "cite", "code", "col", "colgroup", "dd", "del", "dfn", "div", "dl", "dt",
        "em", "figcaption", "figure", "font", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header",
        "hgroup", "hr", "i", "img", "ins", "kbd", "li", "main", "mark", "nav", "ol", "p", "pre", "q",
        "rp", "rt", "ruby", "s", "samp", "section", "small", "span", "strike", "strong", "sub", "sup",
        "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "tt", "u", "ul", "var", "wbr",
    }
)  # fmt: skip
# Dropped with what they contain: a title or a style sheet shown as text helps nobody.
DROPPED_WITH_CONTENT = frozenset({"script", "style", "title", "head", "template"})
GENERIC_ATTRIBUTES = frozenset(
    {"align", "valign", "bgcolor", "class", "dir", "id", "lang", "role", "style", "title", "width", "height"}
    | {"aria-label", "aria-hidden", "aria-describedby", "aria-labelledby"}
)
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "*": set(GENERIC_ATTRIBUTES),
    "a": {"href", "name", "target"},
    "img": {"src", "alt", "border", "hspace", "vspace"},
    "table": {"border", "cellpadding", "cellspacing", "summary"},
    "td": {"colspan", "rowspan", "nowrap", "scope", "headers"},
    "th": {"colspan", "rowspan", "nowrap", "scope", "headers", "abbr"},
    "col": {"span"},
    "colgroup": {"span"},
    "font": {"color", "face", "size"},
    "ol": {"start", "type", "reversed"},
    "ul": {"type"},
    "li": {"value"},
    "hr": {"size", "noshade", "color"},
    "time": {"datetime"},
    "del": {"datetime"},
    "ins": {"datetime"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto", "tel"})
STYLE_PROPERTIES = frozenset(
    {
        "background", "background-color", "background-image", "background-position", "background-repeat",
        "background-size", "border", "border-bottom", "border-bottom-color", "border-bottom-style",
        "border-bottom-width", "border-collapse", "border-color", "border-left", "border-left-color",
        "border-left-style", "border-left-width", "border-radius", "border-right", "border-right-color",
        "border-right-style", "border-right-width", "border-spacing", "border-style", "border-top",
        "border-top-color", "border-top-style", "border-top-width", "border-width", "box-sizing", "clear",
        "color", "direction", "display", "float", "font", "font-family", "font-size", "font-style",
        "font-variant", "font-weight", "height", "letter-spacing", "line-height", "list-style",
        "list-style-position", "list-style-type", "margin", "margin-bottom", "margin-left", "margin-right",
        "margin-top", "max-height", "max-width", "min-height", "min-width", "mso-hide",
        "mso-line-height-rule", "mso-table-lspace", "mso-table-rspace", "opacity", "overflow",
        "overflow-wrap", "padding", "padding-bottom", "padding-left", "padding-right", "padding-top",
        "table-layout", "text-align", "text-decoration", "text-indent", "text-transform", "vertical-align",
        "visibility", "white-space", "width", "word-break", "word-spacing", "word-wrap",
    }
)  # fmt: skip

# Named when found, so the editor learns what to take out. Anything else outside the
# allow-list (unknown elements, presentational attributes we do not keep) is dropped
# without refusing the layout: it cannot run anything.
REFUSED_TAGS = (
    "script", "iframe", "frame", "frameset", "object", "embed", "applet", "param", "base", "link",
    "style", "form", "input", "button", "textarea", "select", "option", "svg", "math", "animate",
    "set", "animatemotion", "animatetransform", "foreignobject", "use", "noscript", "xmp", "noembed",
    "noframes", "plaintext", "listing", "template", "video", "audio", "source", "track", "portal",
    "dialog", "marquee",
)  # fmt: skip
REFUSED_ATTRIBUTES = frozenset({"srcdoc", "formaction", "action", "xlink:href"})
REFUSED_SCHEMES = frozenset({"javascript", "vbscript", "livescript", "data"})
URL_ATTRIBUTES = frozenset({"href", "src"})
_URL_IGNORED_LEADING = "".join(chr(c) for c in range(0x21))
# The parser drops these start tags in a fragment, attributes and all; renamed, their
# attributes (``<body onload=…>``) are seen and named too. Only the findings use this.
_DOCUMENT_TAGS = re.compile(r"<(html|head|body)(?=[\s/>])", re.IGNORECASE)
_RENAMED = "tidings-"  # a custom element's name: parsed in place, with its attributes


def html_cleaner(**overrides: object) -> nh3.Cleaner:
    options: dict[str, object] = {
        "tags": set(ALLOWED_TAGS),
        "clean_content_tags": set(DROPPED_WITH_CONTENT),
        "attributes": {tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        "url_schemes": set(URL_SCHEMES),
        "filter_style_properties": set(STYLE_PROPERTIES),
        "strip_comments": True,
    }
    options.update(overrides)
    return nh3.Cleaner(**options)  # type: ignore[arg-type]


CLEAN = html_cleaner()
# For the proof over a template: comments stand in for template tags, so they are kept.
CLEAN_TEMPLATE_OPTIONS: dict[str, object] = {"strip_comments": False}


def html_sanitise(html: str) -> str:
    """``html`` with everything outside the allow-list removed (a fragment: no html/body)."""
    return CLEAN.clean(html)


@cache
def _cleaner_allowing(tag: str) -> nh3.Cleaner:
    extra: dict[str, object] = {"clean_content_tags": set(DROPPED_WITH_CONTENT - {tag})}
    if tag == "style":
        extra["filter_style_properties"] = None  # ammonia filters style attributes, never sheets
    return html_cleaner(tags=set(ALLOWED_TAGS | {tag}), **extra)


def _scheme(url: str) -> str:
    # What a browser's URL parser does first: drop leading controls and spaces, and tabs
    # and newlines anywhere.
    url = url.lstrip(_URL_IGNORED_LEADING).replace("\t", "").replace("\n", "").replace("\r", "")
    head, colon, _ = url.partition(":")
    if not colon or not head or not head[0].isascii() or not head[0].isalpha():
        return ""
    return head.lower() if all(c.isascii() and (c.isalnum() or c in "+-.") for c in head) else ""


def html_findings(html: str) -> list[str]:
    """Active content in ``html`` that the allow-list removes, each named once, tags first."""
    baseline = CLEAN.clean(html)
    lowered = html.lower()
    findings: list[str] = []
    for tag in REFUSED_TAGS:
        if f"<{tag}" in lowered and _cleaner_allowing(tag).clean(html) != baseline:
            findings.append(f"<{tag}> element")

    def note(tag: str, attribute: str, value: str) -> str | None:
        tag = tag.removeprefix(_RENAMED)
        if attribute.startswith("on"):
            findings.append(f"inline event handler {attribute}= on <{tag}>")
        elif attribute in REFUSED_ATTRIBUTES:
            findings.append(f"{attribute}= on <{tag}>")
        elif attribute in URL_ATTRIBUTES and (scheme := _scheme(value)) and scheme not in URL_SCHEMES:
            findings.append(f"{scheme}: URL in {attribute}= on <{tag}>")
        return value

    # A second pass that lets the refused attributes and schemes through to ``note``.
    attributes = {tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()}
    attributes["*"] |= REFUSED_ATTRIBUTES
    for tag in ALLOWED_TAGS:
        attributes.setdefault(tag, set()).update(URL_ATTRIBUTES)
    nh3.clean(
        _DOCUMENT_TAGS.sub(lambda m: f"<{_RENAMED}{m.group(1).lower()}", html),
        tags=set(ALLOWED_TAGS) | {f"{_RENAMED}{name}" for name in ("html", "head", "body")},
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes=attributes,
        generic_attribute_prefixes={"on"},
        url_schemes=set(URL_SCHEMES | REFUSED_SCHEMES),
        attribute_filter=note,
    )
    return list(dict.fromkeys(findings))
