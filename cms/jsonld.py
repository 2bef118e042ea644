"""schema.org objects for JSON-LD, one function per type (https://schema.org)."""

from __future__ import annotations

from typing import Any

from django.templatetags.static import static
from django.urls import reverse

ORGANIZATION_NAME = "Tidings"


def absolute(request: Any, page: Any) -> str:
    return page.get_full_url(request)


def organization(site_root: Any, request: Any) -> dict[str, Any]:
    home = absolute(request, site_root)
    return {
        "@type": "Organization",
        "@id": f"{home}#organization",
        "name": ORGANIZATION_NAME,
        "url": home,
        "logo": request.build_absolute_uri(static("cms/logo.svg")),
    }


def website(site_root: Any, request: Any) -> dict[str, Any]:
    home = absolute(request, site_root)
    search = request.build_absolute_uri(reverse("cms:search"))
    return {
        "@type": "WebSite",
        "@id": f"{home}#website",
        "name": ORGANIZATION_NAME,
        "url": home,
        "publisher": {"@id": f"{home}#organization"},
        "potentialAction": {
            "@type": "SearchAction",
            "target": {"@type": "EntryPoint", "urlTemplate": f"{search}?q={{search_term_string}}"},
            "query-input": "required name=search_term_string",
        },
    }


def breadcrumb_list(trail: list[Any], request: Any) -> dict[str, Any]:
    return {
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": i, "name": page.title, "item": absolute(request, page)}
            for i, page in enumerate(trail, start=1)
        ],
    }


def article(
    kind: str,
    page: Any,
    request: Any,
    *,
    description: str,
    author: str,
    published: Any,
    image: str | None = None,
) -> dict[str, Any]:
    site_root = page.get_site().root_page
    home = absolute(request, site_root)
    data: dict[str, Any] = {
        "@type": kind,
        "headline": page.title[:110],
        "description": description,
        "url": absolute(request, page),
        "mainEntityOfPage": absolute(request, page),
        "datePublished": published.isoformat() if published else None,
        "dateModified": (page.last_published_at or page.latest_revision_created_at or published).isoformat()
        if (page.last_published_at or page.latest_revision_created_at or published)
        else None,
        "author": {"@type": "Organization" if author == ORGANIZATION_NAME else "Person", "name": author},
        "publisher": {"@id": f"{home}#organization"},
        "inLanguage": "en",
    }
    if image:
        data["image"] = image
    return {key: value for key, value in data.items() if value is not None}
