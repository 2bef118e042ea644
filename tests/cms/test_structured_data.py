"""JSON-LD, canonical URLs and social cards on every public page."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from bs4 import BeautifulSoup
from django.test import Client

pytestmark = pytest.mark.django_db

# The schema.org properties each type must carry here (Google's required and recommended
# ones for these types), and every property it may carry: a name outside schema.org's
# definition of the type is a mistake a validator would flag.
REQUIRED = {
    "Organization": {"name", "url", "logo"},
    "WebSite": {"name", "url", "potentialAction"},
    "BreadcrumbList": {"itemListElement"},
    "TechArticle": {"headline", "datePublished", "author", "publisher", "mainEntityOfPage"},
    "BlogPosting": {"headline", "datePublished", "author", "publisher", "mainEntityOfPage", "image"},
}
ARTICLE = {
    "@type", "headline", "description", "url", "mainEntityOfPage", "datePublished", "dateModified",
    "author", "publisher", "inLanguage", "image",
}  # fmt: skip
ALLOWED = {
    "Organization": {"@type", "@id", "name", "url", "logo"},
    "WebSite": {"@type", "@id", "name", "url", "publisher", "potentialAction"},
    "BreadcrumbList": {"@type", "itemListElement"},
    "TechArticle": ARTICLE,
    "BlogPosting": ARTICLE,
}

PAGES = {
    "/": set(),
    "/docs/": {"BreadcrumbList"},
    "/docs/publishing/": {"BreadcrumbList", "TechArticle"},
    "/docs/api-reference/": {"BreadcrumbList", "TechArticle"},
    "/blog/": {"BreadcrumbList"},
    "/blog/introducing-tidings/": {"BreadcrumbList", "BlogPosting"},
    "/legal/terms/": {"BreadcrumbList"},
    "/pricing/": {"BreadcrumbList"},
    "/changelog/": {"BreadcrumbList"},
}


def json_ld(html: str) -> list[dict[str, Any]]:
    soup = BeautifulSoup(html, "html.parser")
    scripts = soup.find_all("script", type="application/ld+json")
    assert len(scripts) == 1
    document = json.loads(scripts[0].string)
    assert document["@context"] == "https://schema.org"
    return document["@graph"]


@pytest.mark.parametrize(("path", "expected"), PAGES.items())
def test_every_page_names_its_schema_org_types(site_client: Client, path: str, expected: set[str]) -> None:
    response = site_client.get(path)
    assert response.status_code == 200
    graph = json_ld(response.content.decode())
    types = [item["@type"] for item in graph]
    assert sorted(types) == sorted({"Organization", "WebSite", *expected})
    for item in graph:
        kind = item["@type"]
        assert REQUIRED[kind] <= item.keys(), f"{kind} lacks {REQUIRED[kind] - item.keys()}"
        assert item.keys() <= ALLOWED[kind], f"{kind} has {item.keys() - ALLOWED[kind]}"
        assert all(value not in (None, "") for value in item.values())


def test_the_website_offers_a_search_action_that_works(site_client: Client) -> None:
    graph = json_ld(site_client.get("/").content.decode())
    website = next(item for item in graph if item["@type"] == "WebSite")
    action = website["potentialAction"]
    assert action["@type"] == "SearchAction"
    assert action["query-input"] == "required name=search_term_string"
    template = action["target"]["urlTemplate"]
    assert template == "http://site.test/search/?q={search_term_string}"
    found = site_client.get(template.replace("http://site.test", "").replace("{search_term_string}", "webhooks"))
    assert "Webhooks" in found.content.decode()


def test_breadcrumbs_run_from_home_to_the_page(site_client: Client) -> None:
    html = site_client.get("/docs/publishing/").content.decode()
    crumbs = next(item for item in json_ld(html) if item["@type"] == "BreadcrumbList")["itemListElement"]
    assert [(c["position"], c["name"], c["item"]) for c in crumbs] == [
        (1, "Tidings", "http://site.test/"),
        (2, "Docs", "http://site.test/docs/"),
        (3, "Publishing notifications", "http://site.test/docs/publishing/"),
    ]
    nav = BeautifulSoup(html, "html.parser").find("nav", attrs={"aria-label": "Breadcrumb"})
    assert [li.get_text(strip=True) for li in nav.find_all("li")] == ["Tidings", "Docs", "Publishing notifications"]


def test_a_blog_post_names_its_author_and_date(site_client: Client) -> None:
    post = next(i for i in json_ld(site_client.get("/blog/introducing-tidings/").content.decode()) if "headline" in i)
    assert post["author"] == {"@type": "Person", "name": "Inês Duarte"}
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", post["datePublished"])


@pytest.mark.parametrize("path", ["/", "/docs/publishing/", "/blog/introducing-tidings/"])
def test_canonical_url_and_social_cards(site_client: Client, path: str) -> None:
    soup = BeautifulSoup(site_client.get(path).content.decode(), "html.parser")
    url = f"http://site.test{path}"
    assert soup.find("link", rel="canonical")["href"] == url
    meta = {
        tag.get("property") or tag.get("name"): tag["content"] for tag in soup.find_all("meta") if tag.get("content")
    }
    assert meta["og:url"] == url
    assert meta["og:title"] and meta["og:description"] and meta["description"]
    assert meta["og:type"] == ("website" if path == "/" else "article")
    assert meta["twitter:card"] in {"summary", "summary_large_image"}
    assert meta["twitter:title"] == meta["og:title"]
