"""What every public page tells machines: description, canonical URL, cards and JSON-LD."""

from __future__ import annotations

import json
from typing import Any

from django.utils.html import strip_tags
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator
from wagtail.models import Page

from cms import jsonld


class SeoMixin:
    """Mixed into every page type; ``og_type`` and ``page_json_ld`` are the per-type hooks."""

    og_type = "website"

    @staticmethod
    def plain(html: str, words: int = 40) -> str:
        return Truncator(" ".join(strip_tags(str(html or "")).split())).words(words)

    def seo_description(self) -> str:
        return self.search_description  # type: ignore[attr-defined]

    def og_image_url(self, request: Any) -> str | None:
        return None

    def breadcrumbs(self) -> list[Page]:
        # From the site's root page down to this one; Wagtail's tree root (depth 1) is no page.
        page: Page = self  # type: ignore[assignment]
        return list(page.get_ancestors(inclusive=True).filter(depth__gte=2).live().specific())

    def page_json_ld(self, request: Any) -> list[dict[str, Any]]:
        return []

    def json_ld(self, request: Any) -> list[dict[str, Any]]:
        page: Page = self  # type: ignore[assignment]
        site_root = page.get_site().root_page.specific if page.get_site() else page
        graph = [jsonld.organization(site_root, request), jsonld.website(site_root, request)]
        trail = self.breadcrumbs()
        if len(trail) > 1:
            graph.append(jsonld.breadcrumb_list(trail, request))
        graph += self.page_json_ld(request)
        return graph

    def get_context(self, request: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        from cms.navigation import site_menus

        context = super().get_context(request, *args, **kwargs)  # type: ignore[misc]
        context.update(site_menus(request, self))  # type: ignore[arg-type]
        context["breadcrumbs"] = self.breadcrumbs()
        context["json_ld"] = self.json_ld_script(request)
        context["og_image"] = self.og_image_url(request)
        return context

    def json_ld_script(self, request: Any) -> SafeString:
        # "</" may not appear inside a script element; JSON allows "<\/" for it.
        data = json.dumps({"@context": "https://schema.org", "@graph": self.json_ld(request)}, ensure_ascii=False)
        return mark_safe(data.replace("</", "<\\/"))  # noqa: S308 - JSON with "</" escaped
