"""Legal pages: the version in effect, earlier ones at stable URLs, a clear 404 otherwise."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client
from django.utils import timezone

from cms.models import HomePage, LegalPage, LegalVersion

pytestmark = pytest.mark.django_db


def terms() -> LegalPage:
    return LegalPage.objects.get(slug="terms")


def test_the_page_shows_the_version_in_effect(site_client: Client) -> None:
    current = terms().current_version()
    response = site_client.get("/legal/terms/")
    html = response.content.decode()
    assert response.status_code == 200
    assert f"Version {current.label}" in html
    assert "Acceptable use" in html  # only the newer version has this section
    assert current.change_summary in html
    assert '<link rel="canonical" href="http://site.test/legal/terms/">' in html


def test_an_earlier_version_stays_readable_at_its_own_url(site_client: Client) -> None:
    earlier = terms().ordered_versions()[-1]
    response = site_client.get(f"/legal/terms/versions/{earlier.label}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert f"Version {earlier.label}" in html
    assert "This is an earlier version" in html
    assert "Acceptable use" not in html
    assert f'<link rel="canonical" href="http://site.test/legal/terms/versions/{earlier.label}/">' in html


def test_a_version_not_yet_in_effect_is_announced_and_readable(site_home: HomePage, site_client: Client) -> None:
    page = terms()
    upcoming_day = timezone.localdate() + datetime.timedelta(days=20)
    LegalVersion.objects.create(
        page=page,
        label="next",
        effective_date=upcoming_day,
        change_summary="Longer notice periods.",
        body="<p>Ninety days' notice.</p>",
    )
    current_html = site_client.get("/legal/terms/").content.decode()
    assert "A new version takes effect on" in current_html
    assert "Ninety days" not in current_html
    upcoming = site_client.get("/legal/terms/versions/next/").content.decode()
    assert "This version takes effect on" in upcoming
    assert "Ninety days" in upcoming


def test_an_unknown_version_is_a_clear_404(site_client: Client) -> None:
    response = site_client.get("/legal/terms/versions/1999-01-01/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "Terms of service has no version “1999-01-01”" in html
    for version in terms().ordered_versions():
        assert f"/legal/terms/versions/{version.label}/" in html  # the versions that do exist


def test_the_sitemap_lists_every_version(site_client: Client) -> None:
    xml = site_client.get("/sitemap.xml").content.decode()
    for version in terms().ordered_versions():
        assert f"<loc>http://site.test/legal/terms/versions/{version.label}/</loc>" in xml


def version_form(prefix: int, label: str, day: str) -> dict[str, str]:
    return {
        f"versions-{prefix}-label": label,
        f"versions-{prefix}-effective_date": day,
        f"versions-{prefix}-change_summary": "Changed.",
        f"versions-{prefix}-body": '{"blocks":[{"key":"a","text":"Body.","type":"unstyled","depth":0,'
        '"inlineStyleRanges":[],"entityRanges":[]}],"entityMap":{}}',
        f"versions-{prefix}-ORDER": str(prefix),
        f"versions-{prefix}-DELETE": "",
        f"versions-{prefix}-id": "",
    }


def test_two_versions_with_one_label_are_refused_in_the_form(site_home: HomePage, admin_client: Client) -> None:
    index = LegalPage.objects.get(slug="terms").get_parent()
    response = admin_client.post(
        f"/cms/pages/add/cms/legalpage/{index.pk}/",
        {
            "title": "Cookie policy",
            "slug": "cookies",
            "summary": "",
            "versions-TOTAL_FORMS": "2",
            "versions-INITIAL_FORMS": "0",
            "versions-MIN_NUM_FORMS": "1",
            "versions-MAX_NUM_FORMS": "1000",
            **version_form(0, "2026-01-01", "2026-01-01"),
            **version_form(1, "2026-01-01", "2026-02-01"),
            "action-publish": "publish",
        },
    )
    assert response.status_code == 200
    assert "Another version of this document already has the label “2026-01-01”" in response.content.decode()
    assert not LegalPage.objects.filter(slug="cookies").exists()
