"""Console navigation. A domain app that adds pages adds its entry here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str
    section: str


NAVIGATION: list[NavItem] = [
    NavItem("Overview", "console:home", "overview"),
    NavItem("Subscribers", "subscribers_console:list", "subscribers"),
    NavItem("Segments", "subscribers_console:segments", "segments"),
    NavItem("Imports", "subscribers_console:imports", "imports"),
    NavItem("Journeys", "workflows_console:list", "workflows"),
    NavItem("Campaigns", "campaigns_console:list", "campaigns"),
    NavItem("Notifications", "notifications_console:explorer", "notifications"),
    NavItem("Templates", "delivery_console:templates", "templates"),
    NavItem("Layouts", "delivery_console:layouts", "layouts"),
    NavItem("Dead letters", "delivery_console:dead_letters", "dead_letters"),
    NavItem("Connectors", "connectors_console:list", "connectors"),
    NavItem("API keys", "governance_console:keys", "keys"),
    NavItem("Project settings", "console:project_settings", "project"),
]
