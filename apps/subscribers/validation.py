"""Field rules shared by the API, the console and the importer.

Each check returns an error sentence (or ``None``) so the importer can validate a million
rows without raising, and ``ensure_*`` wraps them into ApplicationError for services.
"""

from __future__ import annotations

import re
from functools import lru_cache

from apps.core.errors import ApplicationError
from apps.core.time import is_valid_timezone

TAG_MAX_LENGTH = 64
# Tags are for segmenting, not storage: at most this many names added (and as many
# removed) by one request or import row, and at most this many on one subscriber.
TAGS_PER_REQUEST = 100
TAGS_PER_SUBSCRIBER = 250
# Deliberately simple: one @, a dot in the domain, no spaces. Deliverability is the
# provider's business; this catches typos and pasted garbage.
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]{2,}$")
_PHONE = re.compile(r"^\+[1-9][0-9]{6,14}$")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_LOCALE = re.compile(r"^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8})*$")


def email_problem(value: str) -> str | None:
    if value and (len(value) > 254 or not _EMAIL.match(value)):
        return f"{value!r} is not a valid email address."
    return None


def phone_problem(value: str) -> str | None:
    if value and not _PHONE.match(value):
        return f"{value!r} is not an E.164 phone number (for example +351912345678)."
    return None


def timezone_problem(value: str) -> str | None:
    if value and not is_valid_timezone(value):
        return f"{value!r} is not an IANA timezone (for example Europe/Lisbon)."
    return None


def locale_problem(value: str) -> str | None:
    if value and (len(value) > 35 or not _LOCALE.match(value)):
        return f"{value!r} is not a locale (for example pt-PT)."
    return None


def tag_problem(name: object) -> str | None:
    if not isinstance(name, str):
        return "A tag name must be a string."
    return _tag_problem(name)


# Imports repeat the same few tag names a million times.
@lru_cache(maxsize=4096)
def _tag_problem(name: str) -> str | None:
    if not name.strip():
        return "A tag name cannot be empty."
    if len(name) > TAG_MAX_LENGTH:
        return f"Tag {name[:20]!r}… is {len(name)} characters long; the limit is {TAG_MAX_LENGTH}."
    if _CONTROL.search(name):
        return f"Tag {name!r} contains control characters."
    if name != name.strip():
        return f"Tag {name!r} has leading or trailing spaces."
    return None


def tag_count_problem(count: int) -> str | None:
    if count > TAGS_PER_REQUEST:
        return f"{count} tags in one change; the limit is {TAGS_PER_REQUEST}."
    return None


def ensure(problem: str | None, *, field: str, code: str) -> None:
    if problem:
        raise ApplicationError(problem, code=code, field=field)


def ensure_contact(*, email: str | None, phone: str | None, timezone: str | None, locale: str | None) -> None:
    ensure(email_problem(email or ""), field="email", code="invalid_email")
    ensure(phone_problem(phone or ""), field="phone", code="invalid_phone")
    ensure(timezone_problem(timezone or ""), field="timezone", code="invalid_timezone")
    ensure(locale_problem(locale or ""), field="locale", code="invalid_locale")


def ensure_tags(names: list[str], *, field: str) -> None:
    if not isinstance(names, list):
        raise ApplicationError("Tags must be a list of names.", code="invalid_tag", field=field)
    for index, name in enumerate(names):
        ensure(tag_problem(name), field=f"{field}[{index}]", code="invalid_tag")
