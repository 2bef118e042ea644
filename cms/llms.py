"""/llms.txt and /llms-full.txt (https://llmstxt.org) from the published pages.

Both are built once and kept in the cache; publishing or unpublishing a page rebuilds them
(cms.signals), so a reader never waits for the whole tree to be walked.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from wagtail.models import Page, Site

from cms.blocks import operation_markdown, stream_markdown
from cms.markdown import html_markdown
from cms.models import ApiReferencePage, BlogPostPage, ChangelogPage, DocsIndexPage, DocsPage, LegalPage, PricingPage
from cms.openapi import api_operations_by_tag

CACHE_KEYS = {"llms.txt": "cms:llms:index", "llms-full.txt": "cms:llms:full"}
CACHE_SECONDS = 24 * 3600  # a safety net only: publishing rebuilds them at once
SUMMARY = (
    "Tidings is a multi-tenant notification platform: transactional publish, journeys and campaigns "
    "over email, push, SMS, chat and webhooks, behind one API and a staff console."
)


def _site() -> Site | None:
    return Site.objects.filter(is_default_site=True).select_related("root_page").first()


def _live(site: Site, model: type[Page]) -> list[Any]:
    return list(model.objects.descendant_of(site.root_page, inclusive=True).live().public().specific())


def _docs_in_order(site: Site) -> list[Any]:
    index = DocsIndexPage.objects.descendant_of(site.root_page).live().public().first()
    if index is None:
        return []
    return list(index.get_descendants().type(DocsPage).live().public().specific())


def _link(page: Any, note: str) -> str:
    note = " ".join(note.split())
    return f"- [{page.title}]({page.full_url})" + (f": {note}" if note else "")


def llms_index_build() -> str:
    site = _site()
    lines = ["# Tidings", "", f"> {SUMMARY}", ""]
    if site is None:
        return "\n".join(lines)
    home = site.root_page.specific
    lines += [
        f"The API is described by an OpenAPI document at {home.full_url.rstrip('/')}/api/schema/. "
        f"Every docs page below is also in {home.full_url.rstrip('/')}/llms-full.txt as Markdown.",
        "",
        "## Docs",
        "",
    ]
    lines += [_link(page, page.summary) for page in _docs_in_order(site)]
    lines += [_link(page, page.seo_description()) for page in _live(site, ApiReferencePage)]
    posts = sorted(_live(site, BlogPostPage), key=lambda p: p.date, reverse=True)
    if posts:
        lines += ["", "## Blog", ""]
        lines += [_link(post, f"{post.date.isoformat()}. {post.summary}") for post in posts]
    optional = _live(site, PricingPage) + _live(site, ChangelogPage) + _live(site, LegalPage)
    if optional:
        lines += ["", "## Optional", ""]
        lines += [_link(page, page.seo_description()) for page in optional]
    return "\n".join(lines) + "\n"


def llms_full_build() -> str:
    site = _site()
    parts = [f"# Tidings\n\n> {SUMMARY}\n"]
    if site is None:
        return parts[0]
    for page in _docs_in_order(site):
        heading = "#" * min(6, max(2, page.depth - 2))
        section = [f"{heading} {page.title}", "", f"Source: {page.full_url}"]
        if page.summary:
            section += ["", page.summary]
        # Rich text starts at h2, the same level as the page's own heading here: shift it under.
        body = stream_markdown(page.body, heading_shift=max(0, len(heading) - 1))
        if body:
            section += ["", body]
        parts.append("\n".join(section) + "\n")
    for reference in _live(site, ApiReferencePage):
        section = [f"## {reference.title}", "", f"Source: {reference.full_url}"]
        if reference.intro:
            section += ["", html_markdown(reference.intro)]
        for tag, operations in api_operations_by_tag():
            section += ["", f"### {tag}", ""]
            section += [operation_markdown(op).replace("### ", "#### ", 1) + "\n" for op in operations]
        parts.append("\n".join(section) + "\n")
    return "\n".join(parts)


BUILDERS = {"llms.txt": llms_index_build, "llms-full.txt": llms_full_build}


def llms_document(name: str) -> str:
    text = cache.get(CACHE_KEYS[name])
    if text is None:
        text = BUILDERS[name]()
        cache.set(CACHE_KEYS[name], text, CACHE_SECONDS)
    return text


def llms_regenerate() -> None:
    for name, builder in BUILDERS.items():
        cache.set(CACHE_KEYS[name], builder(), CACHE_SECONDS)
