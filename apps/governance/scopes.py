"""API scopes and the ceilings of each key type.

A public key is safe inside an app: it may only identify subscribers, register devices
and tag. A secret key adds everything a server does. A restricted key carries an explicit
subset of one of those two ceilings.
"""

from __future__ import annotations

SUBSCRIBERS_WRITE = "subscribers:write"
DEVICES_WRITE = "devices:write"
TAGS_WRITE = "tags:write"
NOTIFICATIONS_PUBLISH = "notifications:publish"
MESSAGES_SEND = "messages:send"
TEMPLATES_WRITE = "templates:write"
WORKFLOWS_WRITE = "workflows:write"
WORKFLOWS_START = "workflows:start"
CAMPAIGNS_WRITE = "campaigns:write"
READ = "read"

PUBLIC_CEILING: frozenset[str] = frozenset({SUBSCRIBERS_WRITE, DEVICES_WRITE, TAGS_WRITE})
SECRET_CEILING: frozenset[str] = PUBLIC_CEILING | {
    NOTIFICATIONS_PUBLISH,
    MESSAGES_SEND,
    TEMPLATES_WRITE,
    WORKFLOWS_WRITE,
    WORKFLOWS_START,
    CAMPAIGNS_WRITE,
    READ,
}
ALL_SCOPES: tuple[str, ...] = tuple(sorted(SECRET_CEILING))

CEILINGS: dict[str, frozenset[str]] = {"public": PUBLIC_CEILING, "secret": SECRET_CEILING}
