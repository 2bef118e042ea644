"""Hero and docs images reach the cards, JSON-LD and llms-full.txt; the seed is idempotent."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from bs4 import BeautifulSoup
from django.core.management import call_command
from django.test import Client
from wagtail.images.models import Image
from wagtail.images.tests.utils import get_test_image_file

from cms.models import BlogIndexPage, BlogPostPage, DocsIndexPage, DocsPage, HomePage

pytestmark = pytest.mark.django_db


def test_a_hero_image_becomes_the_large_card_and_the_posts_image(site_home: HomePage, site_client: Client) -> None:
    image = Image.objects.create(title="Launch", file=get_test_image_file(size=(1600, 900)))
    post = BlogPostPage(
        slug="launch", title="Launch day", author="Ada Lovelace", summary="We shipped.", hero_image=image,
        hero_image_alt="The team at the launch",
    )  # fmt: skip
    BlogIndexPage.objects.get().add_child(instance=post)
    post.save_revision().publish()
    soup = BeautifulSoup(site_client.get("/blog/launch/").content.decode(), "html.parser")
    card = soup.find("meta", property="og:image")["content"]
    assert card.startswith("http://site.test/") and "fill-1200x630" in card
    assert soup.find("meta", attrs={"name": "twitter:card"})["content"] == "summary_large_image"
    graph = json.loads(soup.find("script", type="application/ld+json").string)["@graph"]
    assert next(i for i in graph if i["@type"] == "BlogPosting")["image"] == card
    assert soup.select_one("img.hero-image")["alt"] == "The team at the launch"


def test_a_docs_image_has_its_alt_text_on_the_page_and_in_llms_full(
    site_home: HomePage, site_client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    image = Image.objects.create(title="Journey builder", file=get_test_image_file())
    page = DocsPage(
        slug="builder",
        title="The builder",
        body=[
            {"type": "image", "value": {"image": image.pk, "alt_text": "A journey with two waits", "decorative": False}}
        ],
    )
    DocsIndexPage.objects.get().add_child(instance=page)
    with django_capture_on_commit_callbacks(execute=True):
        page.save_revision().publish()
    html = site_client.get("/docs/builder/").content.decode()
    assert 'alt="A journey with two waits"' in html
    assert "![A journey with two waits](" in site_client.get("/llms-full.txt").content.decode()


def test_seeding_again_creates_nothing_and_keeps_editors_changes(site_home: HomePage) -> None:
    DocsPage.objects.filter(slug="webhooks").update(title="Webhooks (edited)")
    out = StringIO()
    call_command("cms_seed", stdout=out)
    result = json.loads(out.getvalue())
    assert result["pages_created"] == []
    assert result["pages_live"] >= 18
    assert DocsPage.objects.get(slug="webhooks").title == "Webhooks (edited)"
