"""Search over docs and blog (PostgreSQL full text), the sitemap and robots.txt."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

import pytest
from django.test import Client
from wagtail.search.backends import get_search_backend

from cms.models import BlogIndexPage, BlogPostPage, DocsIndexPage, DocsPage, HomePage

pytestmark = pytest.mark.django_db
SITEMAP_NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def result_titles(client: Client, query: str) -> list[str]:
    from bs4 import BeautifulSoup

    html = client.get("/search/", {"q": query}).content.decode()
    return [h.get_text(strip=True) for h in BeautifulSoup(html, "html.parser").select(".search-results h2")]


def test_search_runs_on_postgres_full_text() -> None:
    backend = get_search_backend()
    assert type(backend).__module__.endswith("database.postgres.postgres")


def test_search_finds_docs_by_their_body_and_posts_by_their_summary(site_client: Client) -> None:
    assert "Webhooks" in result_titles(site_client, "signature")  # words of the body, stemmed
    assert "Introducing Tidings" in result_titles(site_client, "transactional journeys campaigns")
    assert result_titles(site_client, "zyzzyva") == []


def test_search_covers_docs_and_blog_only(site_client: Client) -> None:
    assert "Terms of service" not in result_titles(site_client, "terms")
    assert "Pricing" not in result_titles(site_client, "pricing")


def test_a_page_published_now_is_found(
    site_home: HomePage, site_client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    docs = DocsIndexPage.objects.get()
    page = DocsPage(slug="quiet-hours", title="Quiet hours", summary="Hold messages overnight.")
    docs.add_child(instance=page)
    with django_capture_on_commit_callbacks(execute=True):
        page.save_revision().publish()
    assert "Quiet hours" in result_titles(site_client, "overnight")


def test_search_refuses_an_overlong_query_with_a_reason(site_client: Client) -> None:
    response = site_client.get("/search/", {"q": "x" * 201})
    assert response.status_code == 400
    assert "Search for at most 200 characters." in response.content.decode()


def test_an_empty_search_shows_the_form(site_client: Client) -> None:
    response = site_client.get("/search/")
    assert response.status_code == 200
    assert 'name="q"' in response.content.decode()


def test_the_sitemap_lists_published_pages_only(site_home: HomePage, site_client: Client) -> None:
    blog = BlogIndexPage.objects.get()
    blog.add_child(instance=BlogPostPage(slug="draft-post", title="Draft", author="Ada", summary="x", live=False))
    DocsPage.objects.get(slug="campaigns").unpublish()
    response = site_client.get("/sitemap.xml")
    assert response.status_code == 200
    tree = ElementTree.fromstring(response.content)  # noqa: S314 - our own answer
    locations = {e.text for e in tree.findall("s:url/s:loc", SITEMAP_NS)}
    for path in ("/", "/docs/", "/docs/getting-started/", "/docs/api-reference/", "/blog/introducing-tidings/",
                 "/legal/privacy/", "/pricing/", "/changelog/"):  # fmt: skip
        assert f"http://site.test{path}" in locations
    assert "http://site.test/blog/draft-post/" not in locations
    assert "http://site.test/docs/campaigns/" not in locations


def test_robots_txt_points_at_the_sitemap_and_keeps_crawlers_out_of_the_console(site_client: Client) -> None:
    text = site_client.get("/robots.txt").content.decode()
    assert "Sitemap: http://site.test/sitemap.xml" in text
    assert "Disallow: /console/" in text and "Disallow: /cms/" in text
