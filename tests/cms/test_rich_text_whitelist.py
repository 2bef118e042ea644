"""Script and iframe in rich text never reach a page: Wagtail's editor whitelist holds."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from wagtail.admin.rich_text.converters.contentstate import ContentstateConverter

from cms.blocks import RICH_TEXT_FEATURES
from cms.models import DocsIndexPage, DocsPage, HomePage

pytestmark = pytest.mark.django_db

HOSTILE = (
    '<p>Before</p><script>alert("x")</script>'
    '<iframe src="https://evil.example/"></iframe>'
    '<p onclick="alert(1)">After <a href="javascript:alert(1)">link</a></p>'
)


def test_script_and_iframe_in_a_docs_body_are_stripped(site_home: HomePage, admin_client: Client) -> None:
    # What the editor posts: the HTML as Draftail holds it after loading (pasting) it.
    converter = ContentstateConverter(features=RICH_TEXT_FEATURES)
    contentstate = converter.from_database_format(HOSTILE)
    docs = DocsIndexPage.objects.get()
    response = admin_client.post(
        f"/cms/pages/add/cms/docspage/{docs.pk}/",
        {
            "title": "Hostile",
            "slug": "hostile",
            "summary": "",
            "body-count": "1",
            "body-0-type": "text",
            "body-0-deleted": "",
            "body-0-order": "0",
            "body-0-value": contentstate,
            "action-publish": "publish",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    page = DocsPage.objects.get(slug="hostile")
    stored = json.dumps(list(page.body.raw_data))
    assert "Before" in stored and "After" in stored
    for forbidden in ("<script", "<iframe", "onclick", "javascript:", "evil.example"):
        assert forbidden not in stored

    html = Client(HTTP_HOST="site.test").get("/docs/hostile/").content.decode()
    assert "Before" in html
    # The script element is gone; at most its text is left, as harmless escaped text.
    for forbidden in ("<script>alert", "<iframe", "javascript:", "onclick", "evil.example"):
        assert forbidden not in html
