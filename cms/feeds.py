"""RSS 2.0 and Atom 1.0 feeds of the blog, built with Django's feed generators."""

from __future__ import annotations

import datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils import feedgenerator, timezone

FEED_LENGTH = 20
FEED_CLASSES = {"rss": feedgenerator.Rss201rev2Feed, "atom": feedgenerator.Atom1Feed}


def blog_feed(blog: Any, request: HttpRequest, kind: str) -> HttpResponse:
    feed_class = FEED_CLASSES[kind]
    self_url = request.build_absolute_uri()
    feed = feed_class(
        title=f"{blog.title} · Tidings",
        link=blog.get_full_url(request),
        description=blog.seo_description() or "News from Tidings.",
        language="en",
        feed_url=self_url,
        feed_guid=self_url,
    )
    for post in blog.posts()[:FEED_LENGTH]:
        url = post.get_full_url(request)
        published = timezone.make_aware(datetime.datetime.combine(post.date, datetime.time(9)), datetime.UTC)
        feed.add_item(
            title=post.title,
            link=url,
            description=post.summary,
            unique_id=url,
            unique_id_is_permalink=True,
            pubdate=published,
            updateddate=post.last_published_at or published,
            author_name=post.author,
            categories=[tag.name for tag in post.tags.all()],
        )
    response = HttpResponse(content_type=f"{feed.content_type}")
    feed.write(response, "utf-8")
    return response
