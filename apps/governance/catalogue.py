"""The one permission catalogue: what a person (console) or a key (API) may be allowed to do.

Every console view, console action, admin action and API view names one permission from
here. A permission says where it applies: the console, the API, or both. Built-in roles are
fixed sets of these; an organization's custom roles pick their own set.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Surface(StrEnum):
    CONSOLE = "console"
    API = "api"
    BOTH = "both"


@dataclass(frozen=True)
class Permission:
    code: str
    label: str
    surface: Surface

    @property
    def in_console(self) -> bool:
        return self.surface in (Surface.CONSOLE, Surface.BOTH)

    @property
    def in_api(self) -> bool:
        return self.surface in (Surface.API, Surface.BOTH)


CATALOGUE: tuple[Permission, ...] = (
    Permission("project.read", "See the project, its dashboards and its messages", Surface.BOTH),
    Permission("project.manage", "Change project settings (name, timezone)", Surface.CONSOLE),
    Permission("subscribers.read", "See subscribers, devices, tags and segments", Surface.BOTH),
    Permission("subscribers.write", "Create, change, import and delete subscribers", Surface.BOTH),
    Permission("templates.edit", "Edit templates and layouts", Surface.BOTH),
    Permission("notifications.publish", "Publish transactional notifications", Surface.BOTH),
    Permission("journeys.edit", "Edit journey drafts", Surface.BOTH),
    Permission("journeys.publish", "Publish, restore and archive journeys", Surface.BOTH),
    Permission("journeys.run", "Start and stop journey runs", Surface.BOTH),
    Permission("campaigns.edit", "Create and change campaigns", Surface.BOTH),
    Permission("campaigns.send", "Start, pause, resume and cancel campaigns", Surface.BOTH),
    Permission("deliveries.manage", "Replay dead letters and manage suppressions", Surface.BOTH),
    Permission("connectors.manage", "Connect, change and remove providers", Surface.CONSOLE),
    Permission("keys.manage", "Create, rotate and revoke API keys", Surface.CONSOLE),
    Permission("members.manage", "Invite, change and remove members; edit roles", Surface.CONSOLE),
    Permission("organization.manage", "Change organization settings (name, MFA, timezone)", Surface.CONSOLE),
    Permission("billing.manage", "Change the plan, payment methods and see invoices", Surface.CONSOLE),
    Permission("audit.read", "Read and export the audit log", Surface.BOTH),
)

BY_CODE: dict[str, Permission] = {p.code: p for p in CATALOGUE}
ALL_PERMISSIONS: frozenset[str] = frozenset(BY_CODE)


class BuiltInRole(StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    EDITOR = "editor"
    VIEWER = "viewer"
    BILLING = "billing"


_READ = frozenset({"project.read", "subscribers.read"})
_EDIT = _READ | {
    "subscribers.write",
    "templates.edit",
    "notifications.publish",
    "journeys.edit",
    "campaigns.edit",
}
_ADMIN = _EDIT | {
    "project.manage",
    "journeys.publish",
    "journeys.run",
    "campaigns.send",
    "deliveries.manage",
    "connectors.manage",
    "keys.manage",
    "members.manage",
    "organization.manage",
    "audit.read",
}

BUILT_IN_PERMISSIONS: dict[str, frozenset[str]] = {
    BuiltInRole.OWNER: ALL_PERMISSIONS,
    # Everything but money: an admin runs the workspace, the owner pays for it.
    BuiltInRole.ADMIN: frozenset(_ADMIN),
    BuiltInRole.EDITOR: frozenset(_EDIT),
    BuiltInRole.VIEWER: _READ,
    BuiltInRole.BILLING: frozenset({"project.read", "billing.manage"}),
}


def unknown_permissions(codes: list[str] | tuple[str, ...] | set[str] | frozenset[str]) -> list[str]:
    """The codes that are not in the catalogue, in the order given."""
    return [code for code in codes if code not in BY_CODE]
