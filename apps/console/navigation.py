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
    NavItem("API keys", "governance_console:keys", "keys"),
]
NAVIGATION.append(NavItem("Campaigns", "campaigns_console:list", "campaigns"))
NAVIGATION += [
    NavItem("Subscribers", "subscribers_console:list", "subscribers"),
    NavItem("Segments", "subscribers_console:segments", "segments"),
    NavItem("Imports", "subscribers_console:imports", "imports"),
]
