"""The blog's RSS and Atom feeds parse, name the posts and are advertised by the blog."""

from __future__ import annotations

import feedparser
import pytest
from django.test import Client

from cms.models import BlogIndexPage, BlogPostPage, HomePage

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("path", "version", "content_type"), [
    ("/blog/feed/rss/", "rss20", "application/rss+xml"),
    ("/blog/feed/atom/", "atom10", "application/atom+xml"),
])  # fmt: skip
def test_the_feed_parses_and_lists_the_posts(site_client: Client, path: str, version: str, content_type: str) -> None:
    response = site_client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith(content_type)
    feed = feedparser.parse(response.content)
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.version == version
    post = BlogPostPage.objects.get(slug="introducing-tidings")
    [entry] = feed.entries
    assert entry.title == post.title
    assert entry.link == "http://site.test/blog/introducing-tidings/"
    assert entry.author == post.author
    assert {tag.term for tag in entry.tags} == {"announcements", "product"}
    assert entry.published_parsed[:3] == post.date.timetuple()[:3]


def test_a_new_post_leads_the_feed_and_a_draft_stays_out(site_home: HomePage, site_client: Client) -> None:
    blog = BlogIndexPage.objects.get()
    newer = BlogPostPage(slug="journeys-ga", title="Journeys are generally available", author="Ada", summary="GA.")
    newer.date = BlogPostPage.objects.get(slug="introducing-tidings").date.replace(year=2099)
    blog.add_child(instance=newer)
    newer.save_revision().publish()
    draft = BlogPostPage(slug="secret", title="Not yet", author="Ada", summary="Draft.", live=False)
    blog.add_child(instance=draft)
    feed = feedparser.parse(site_client.get("/blog/feed/atom/").content)
    assert [e.title for e in feed.entries] == ["Journeys are generally available", "Introducing Tidings"]


def test_the_blog_advertises_both_feeds(site_client: Client) -> None:
    html = site_client.get("/blog/").content.decode()
    assert '<link rel="alternate" type="application/rss+xml"' in html
    assert 'href="/blog/feed/atom/"' in html
