"""The public site in a real browser: reading, searching, the machine-readable files, an
editor publishing a docs page in Wagtail, and axe-core on every page visited."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from wagtail.models import Site

from cms.demo import cms_demo_seed
from cms.models import DocsIndexPage, LegalPage
from tests.browser.axe import assert_accessible

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def public_site(live_server: Any) -> None:
    cms_demo_seed()
    address = urlsplit(live_server.url)
    site = Site.objects.get(is_default_site=True)
    site.hostname, site.port = address.hostname, address.port
    site.save()


def visit(page: Any, path: str) -> Any:
    response = page.goto(path)
    assert response is not None and response.status == 200, f"{path}: {response and response.status}"
    return response


def test_a_reader_goes_through_the_site(page: Any, public_site: None) -> None:
    visit(page, "/")
    page.wait_for_selector("h1 >> text=Notifications your users actually get")
    assert_accessible(page)

    page.click("header nav >> text=Docs")
    page.wait_for_url("**/docs/")
    assert_accessible(page)

    page.click(".docs-sidebar >> text=Publishing notifications")
    page.wait_for_url("**/docs/publishing/")
    code = page.locator('figure.code-block[data-language="python"]')
    assert code.locator(".highlight .kn").first.inner_text() == "import"
    code.locator("[data-copy-code]").click()
    page.wait_for_selector('figure.code-block[data-language="python"] [data-copy-code] >> text=Copied')
    assert page.evaluate("() => navigator.clipboard.readText()").startswith("import requests")
    operation = page.locator("section.api-operation#op-notification_publish")
    assert operation.locator(".method").inner_text() == "POST"
    assert "/api/v1/notifications" in operation.locator("code").first.inner_text()
    assert_accessible(page)

    page.click("a[rel=next]")
    page.wait_for_url("**/docs/journeys/")
    visit(page, "/docs/api-reference/")
    page.wait_for_selector("#op-campaign_create")
    assert_accessible(page)

    visit(page, "/blog/")
    assert_accessible(page)
    page.click(".post-list >> text=Introducing Tidings")
    page.wait_for_selector(".post .meta >> text=Inês Duarte")
    assert_accessible(page)
    for feed, root in (("/blog/feed/rss/", "<rss"), ("/blog/feed/atom/", "<feed")):
        response = page.request.get(feed)
        assert response.ok and root in response.text()

    visit(page, "/legal/terms/")
    terms = LegalPage.objects.get(slug="terms")
    earlier = terms.ordered_versions()[-1]
    page.wait_for_selector(f".legal .meta >> text=Version {terms.current_version().label}")
    assert_accessible(page)
    page.click(f".legal-versions >> text={earlier.label}")
    page.wait_for_selector("text=This is an earlier version")
    assert_accessible(page)
    missing = page.goto("/legal/terms/versions/1999-01-01/")
    assert missing.status == 404
    page.wait_for_selector("h1 >> text=has no version")

    visit(page, "/")
    page.fill("#site-search-q", "signature")
    page.press("#site-search-q", "Enter")
    page.wait_for_selector(".search-results >> text=Webhooks")
    assert_accessible(page)

    for path in ("/pricing/", "/changelog/", "/legal/"):
        visit(page, path)
        assert_accessible(page)

    assert page.request.get("/llms.txt").text().startswith("# Tidings\n")
    assert "/docs/getting-started/</loc>" in page.request.get("/sitemap.xml").text()


def test_an_editor_publishes_a_docs_page_that_is_then_found_everywhere(page: Any, public_site: None) -> None:
    editor = get_user_model().objects.create_user(username="editor", password="correct-horse-battery")
    editor.groups.add(Group.objects.get(name="Editors"))
    docs = DocsIndexPage.objects.get()

    page.goto("/cms/login/")
    page.fill("#id_username", "editor")
    page.fill("#id_password", "correct-horse-battery")
    page.click("button[type=submit]")
    page.wait_for_url("**/cms/")
    # "Add child page": a docs page is the one type left to add under the docs (the API
    # reference is a singleton), so Wagtail goes straight to its form.
    page.goto(f"/cms/pages/{docs.pk}/add_subpage/")
    page.wait_for_url(f"**/cms/pages/add/cms/docspage/{docs.pk}/")
    page.fill("#id_title", "Quiet hours")
    page.fill("#id_summary", "Hold messages overnight in each subscriber's time zone.")
    page.click("footer .w-dropdown__toggle, footer [data-w-dropdown-target=toggle]")
    page.click("button[name=action-publish]")
    page.wait_for_selector("text=Page 'Quiet hours' created and published")

    visit(page, "/docs/quiet-hours/")
    page.wait_for_selector("h1 >> text=Quiet hours")
    assert_accessible(page)
    visit(page, "/search/?q=overnight")
    page.wait_for_selector(".search-results >> text=Quiet hours")
    assert "/docs/quiet-hours/</loc>" in page.request.get("/sitemap.xml").text()
    assert "- [Quiet hours](" in page.request.get("/llms.txt").text()
    assert "## Quiet hours" in page.request.get("/llms-full.txt").text()


def test_the_accessibility_check_fails_a_page_with_a_critical_violation(page: Any) -> None:
    page.set_content('<html lang="en"><body><main><img src="/static/cms/logo.svg"></main></body></html>')
    with pytest.raises(AssertionError, match="critical: image-alt"):
        assert_accessible(page)
