"""Seeds the site's page tree with the starting content of cms.demo_content. Idempotent:
a page that exists (by slug under its parent) is left as the editors made it."""

from __future__ import annotations

import datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.utils import timezone
from wagtail.coreutils import get_supported_content_language_variant
from wagtail.models import Collection, GroupPagePermission, Locale, Page, Site

from cms import demo_content as content
from cms.models import (
    ApiReferencePage,
    BlogIndexPage,
    BlogPostPage,
    ChangelogPage,
    DocsIndexPage,
    DocsPage,
    HomePage,
    LegalIndexPage,
    LegalPage,
    LegalVersion,
    PricingPage,
)

EDITOR_PAGE_PERMISSIONS = ("add_page", "change_page", "publish_page")


def _child(parent: Page, model: type[Page], slug: str, **fields: Any) -> tuple[Page, bool]:
    existing = model.objects.child_of(parent).filter(slug=slug).first()
    if existing is not None:
        return existing, False
    page = model(slug=slug, **fields)
    parent.add_child(instance=page)
    page.save_revision().publish()
    return page, True


def site_bind(home: HomePage) -> Site:
    # The site's canonical URLs (sitemap, feeds, llms.txt, JSON-LD) use the Site's host
    # and port: take them from TIDINGS_BASE_URL so they name the address people use.
    base = urlsplit(settings.WAGTAILADMIN_BASE_URL)
    port = base.port or (443 if base.scheme == "https" else 80)
    site = Site.objects.filter(is_default_site=True).first() or Site(is_default_site=True)
    site.hostname, site.port, site.root_page, site.site_name = base.hostname or "localhost", port, home, "Tidings"
    site.save()
    return site


def editors_may_publish(home: Page) -> None:
    """Wagtail's Editors group may add and change pages but not publish; here it also publishes,
    as the people who write the site are the ones who put it live."""
    editors, _ = Group.objects.get_or_create(name="Editors")
    editors.permissions.add(Permission.objects.get(content_type__app_label="wagtailadmin", codename="access_admin"))
    for codename in EDITOR_PAGE_PERMISSIONS:
        permission = Permission.objects.get(content_type__app_label="wagtailcore", codename=codename)
        GroupPagePermission.objects.get_or_create(group=editors, page=home, permission=permission)


def home_ensure() -> HomePage:
    """The home page the cms migrations made, or a new one on a database emptied since."""
    if Collection.get_first_root_node() is None:  # images and documents live in collections
        Collection.add_root(name="Root")
    home = HomePage.objects.first()
    if home is not None:
        return home
    root = Page.get_first_root_node()
    if root is None:
        Locale.objects.get_or_create(language_code=get_supported_content_language_variant(settings.LANGUAGE_CODE))
        root = Page.add_root(instance=Page(title="Root", slug="root"))
    home = HomePage(title="Tidings", slug="home")
    root.add_child(instance=home)
    home.save_revision().publish()
    return home


@transaction.atomic
def cms_demo_seed() -> dict[str, Any]:
    created: list[str] = []
    home = home_ensure()
    if not home.features:
        home.hero_heading = content.HOME["hero_heading"]
        home.intro = content.HOME["intro"]
        home.features = [{"type": "feature", "value": {"title": t, "text": d}} for t, d in content.HOME["features"]]
        home.save_revision().publish()
    site = site_bind(home)
    editors_may_publish(home)

    docs, new = _child(home, DocsIndexPage, "docs", title="Docs", intro=content.DOCS_INTRO, show_in_menus=True)
    created += ["docs"] if new else []
    for entry in content.DOCS:
        _, new = _child(
            docs, DocsPage, entry["slug"], title=entry["title"], summary=entry["summary"], body=entry["body"]
        )
        created += [entry["slug"]] if new else []
    ref = content.API_REFERENCE
    _, new = _child(docs, ApiReferencePage, ref["slug"], title=ref["title"], intro=ref["intro"])
    created += [ref["slug"]] if new else []

    _, new = _child(home, PricingPage, "pricing", title="Pricing", show_in_menus=True,
                    intro="<p>Start free; pay as your sending grows.</p>")  # fmt: skip
    created += ["pricing"] if new else []

    blog, new = _child(home, BlogIndexPage, "blog", title="Blog", show_in_menus=True,
                       intro="<p>News and notes from the Tidings team.</p>")  # fmt: skip
    created += ["blog"] if new else []
    post = content.BLOG_POST
    if not BlogPostPage.objects.child_of(blog).filter(slug=post["slug"]).exists():
        page = BlogPostPage(
            slug=post["slug"], title=post["title"], author=post["author"], summary=post["summary"], body=post["body"]
        )
        blog.add_child(instance=page)
        page.tags.add(*post["tags"])
        page.save_revision().publish()
        created.append(post["slug"])

    today = timezone.localdate()
    entries = [
        {"type": "entry", "value": {**entry, "date": (today - datetime.timedelta(days=14 * i)).isoformat()}}
        for i, entry in enumerate(content.CHANGELOG)
    ]
    _, new = _child(home, ChangelogPage, "changelog", title="Changelog", show_in_menus=True, entries=entries)
    created += ["changelog"] if new else []

    legal, new = _child(home, LegalIndexPage, "legal", title="Legal", intro=content.LEGAL_INTRO, show_in_menus=True)
    created += ["legal"] if new else []
    for document in content.LEGAL:
        if LegalPage.objects.child_of(legal).filter(slug=document["slug"]).exists():
            continue
        page = LegalPage(slug=document["slug"], title=document["title"], summary=document["summary"])
        effective = [today - datetime.timedelta(days=v["days_ago"]) for v in document["versions"]]
        page.versions = [
            LegalVersion(
                label=day.isoformat(),
                effective_date=day,
                change_summary=v["change_summary"],
                body=v["body"],
            )
            for v, day in zip(document["versions"], effective, strict=True)
        ]
        legal.add_child(instance=page)
        page.save_revision().publish()
        created.append(document["slug"])
    return {
        "site_url": site.root_url,
        "pages_live": Page.objects.live().filter(depth__gte=2).count(),
        "pages_created": created,
    }
