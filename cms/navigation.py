"""The site's menus: the home page's live children, in the editors' order."""

from __future__ import annotations

from typing import Any

from wagtail.models import Page, Site

FOOTER_TYPES = ("legalindexpage", "changelogpage")


def site_menus(request: Any, current: Page | None = None) -> dict[str, list[dict[str, Any]]]:
    site = Site.find_for_request(request) if request is not None else None
    if site is None:
        return {"site_menu": [], "footer_menu": []}
    top = site.root_page.get_children().live().public().in_menu().select_related("content_type")
    main: list[dict[str, Any]] = []
    footer: list[dict[str, Any]] = []
    for page in top:
        current_here = current is not None and (current.pk == page.pk or current.path.startswith(page.path))
        item = {"title": page.title, "url": page.get_url(request), "current": current_here}
        (footer if page.content_type.model in FOOTER_TYPES else main).append(item)
    return {"site_menu": main, "footer_menu": footer}
