"""JSON request bodies: parsed once, and refused when no stored value could hold them.

PostgreSQL stores neither NUL (``\\u0000``) in text or jsonb nor a lone UTF-16 surrogate
(``\\ud800`` without its pair: not a character, so not UTF-8), and Python recurses once per
nesting level wherever a document is walked, copied or encoded. All three are valid JSON,
so the parser accepts them; they are refused here, before any view sees the body, with
the field that holds them, so a refused request stores nothing.

The checks cost almost nothing on ordinary bodies: a NUL or a surrogate can only arrive
as a ``\\u`` escape (raw control characters and encoded surrogates are already invalid
JSON or UTF-8), so one regular-expression scan rules both out, and a body with no more
brackets than the depth limit cannot nest deeper than it. Only a body that fails one of
those C-speed tests is walked.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from apps.core.errors import ApplicationError

# The escapes that decode to NUL or to a surrogate (paired ones are walked and accepted).
_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonBodyRefused(ApplicationError):
    """Valid JSON that no API request may carry."""


def max_depth() -> int:
    return int(settings.TIDINGS_API_MAX_JSON_DEPTH)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# One decoder for every request: json.loads with any keyword builds a new one per call,
# which cost a small body as much as the parse (its scanner keeps no state between calls).
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def json_body_load(text: str) -> Any:
    """Parse a request body as strict JSON (no NaN or Infinity) and check its content.

    Raises ``ValueError`` for text that is not JSON, ``JsonBodyRefused`` for JSON that
    nests deeper than ``TIDINGS_API_MAX_JSON_DEPTH`` or holds NUL or a lone surrogate.
    """
    try:
        data = _DECODER.decode(text)
    except RecursionError:
        raise _too_deep(None) from None
    limit = max_depth()
    if _SUSPECT_ESCAPE.search(text) or text.count("{") + text.count("[") > limit:
        json_value_check(data, limit=limit)
    return data


def json_value_check(data: Any, *, limit: int | None = None) -> None:
    """Walk a parsed document: raise ``JsonBodyRefused`` for the first value it may not hold."""
    limit = max_depth() if limit is None else limit
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, str):
            _check_text(value, path)
        elif isinstance(value, dict):
            if depth > limit:
                raise _too_deep(path)
            for key, item in value.items():
                _check_text(key, path)
                stack.append((item, depth + 1, f"{path}.{key}" if path else str(key)))
        elif isinstance(value, list):
            if depth > limit:
                raise _too_deep(path)
            stack.extend((item, depth + 1, f"{path}[{index}]") for index, item in enumerate(value))


def _check_text(text: str, path: str) -> None:
    if "\x00" in text:
        raise JsonBodyRefused(
            "A string holds a NUL character (\\u0000), which cannot be stored.",
            code="invalid_character",
            field=path or None,
        )
    if not text.isascii() and _SURROGATE.search(text):
        raise JsonBodyRefused(
            "A string holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair), which is not a character.",
            code="invalid_character",
            field=path or None,
        )


def _too_deep(path: str | None) -> JsonBodyRefused:
    return JsonBodyRefused(
        f"The body nests objects and arrays deeper than {max_depth()} levels.",
        code="json_too_deep",
        field=path or None,
    )


class ApiJSONParser(JSONParser):
    """DRF's JSON parser (same media type, charset handling and errors) with these checks."""

    def parse(self, stream: IO[bytes], media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return json_body_load(codecs.getreader(encoding)(stream).read())
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
