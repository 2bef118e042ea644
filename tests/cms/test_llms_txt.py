"""/llms.txt and /llms-full.txt follow llmstxt.org and follow what is published."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from cms.models import DocsIndexPage, DocsPage, HomePage

pytestmark = pytest.mark.django_db

LINK = re.compile(r"^- \[(?P<title>[^\]]+)\]\((?P<url>https?://[^)]+)\)(?:: (?P<note>.+))?$")


def test_llms_txt_has_the_llmstxt_shape(site_client: Client) -> None:
    response = site_client.get("/llms.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    lines = response.content.decode().splitlines()
    assert lines[0] == "# Tidings"  # exactly one H1, first
    assert sum(1 for line in lines if line.startswith("# ")) == 1
    assert lines[2].startswith("> ")  # the summary blockquote
    sections = [line[3:] for line in lines if line.startswith("## ")]
    assert sections == ["Docs", "Blog", "Optional"]
    links = [LINK.match(line) for line in lines if line.startswith("- ")]
    assert links and all(links), [line for line in lines if line.startswith("- ")]
    titles = [m["title"] for m in links]
    for title in ("Getting started", "API keys", "Publishing notifications", "Webhooks", "Introducing Tidings"):
        assert title in titles
    assert "http://site.test/docs/getting-started/" in {m["url"] for m in links}


def test_llms_full_holds_the_docs_as_markdown(site_client: Client) -> None:
    text = site_client.get("/llms-full.txt").content.decode()
    assert text.startswith("# Tidings\n")
    assert "## Getting started\n\nSource: http://site.test/docs/getting-started/" in text
    assert "```bash\ncurl https://tidings.example.com/api/v1/me" in text  # a code block, fenced
    assert "### 1. Sign in and pick a project" in text  # the body's headings sit under the page's
    assert "> **Safe retries:**" in text  # a callout
    assert "### `POST /api/v1/notifications` — Publish a notification" in text  # an API operation block
    assert "<p>" not in text and "<code>" not in text


def test_publishing_a_page_rebuilds_both_files(
    site_home: HomePage, site_client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    assert "Quiet hours" not in site_client.get("/llms.txt").content.decode()  # now cached
    docs = DocsIndexPage.objects.get()
    page = DocsPage(
        slug="quiet-hours",
        title="Quiet hours",
        summary="Hold messages overnight in the subscriber's time zone.",
        body=[{"type": "code", "value": {"language": "json", "caption": "", "code": '{"quiet_hours": true}'}}],
    )
    docs.add_child(instance=page)
    with django_capture_on_commit_callbacks(execute=True):
        page.save_revision().publish()
    index = site_client.get("/llms.txt").content.decode()
    assert "- [Quiet hours](http://site.test/docs/quiet-hours/): Hold messages overnight" in index
    full = site_client.get("/llms-full.txt").content.decode()
    assert "## Quiet hours\n\nSource: http://site.test/docs/quiet-hours/" in full
    assert '```json\n{"quiet_hours": true}\n```' in full

    with django_capture_on_commit_callbacks(execute=True):
        page.unpublish()
    assert "Quiet hours" not in site_client.get("/llms.txt").content.decode()
    assert "Quiet hours" not in site_client.get("/llms-full.txt").content.decode()


def test_a_draft_is_not_in_llms_txt(site_home: HomePage, site_client: Client) -> None:
    docs = DocsIndexPage.objects.get()
    docs.add_child(instance=DocsPage(slug="draft", title="Unreleased feature", live=False))
    assert "Unreleased feature" not in site_client.get("/llms.txt").content.decode()
