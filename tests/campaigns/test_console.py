"""The campaign console in a real browser: list with search, new campaign, live page."""

from __future__ import annotations

from typing import Any

import pytest

from apps.campaigns import lifecycle
from apps.campaigns.models import Campaign, CampaignStats
from tests.campaigns.conftest import add_subscribers
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db(transaction=True)


def login(page: Any, project: Any) -> None:
    user = MembershipFactory(organization=project.organization, role="owner").user
    page.goto("/console/login/")
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", "correct-horse-battery")
    page.click("button[type=submit]")
    page.wait_for_url("**/console/")


def test_create_start_and_watch_a_campaign_live(
    page: Any, project: Any, template: Any, connector: Any, settings: Any
) -> None:
    settings.TIDINGS_CAMPAIGN_STREAM_INTERVAL = 0.3
    add_subscribers(project, 12)
    login(page, project)
    page.click("text=Campaigns")
    page.click("text=New campaign")
    page.fill("input[name=name]", "Winter sale")
    page.select_option("select[name=template]", value=str(template.pk))
    page.click("button:has-text('Save draft')")
    page.wait_for_selector("text=saved as a draft")
    campaign = Campaign.objects.get(name="Winter sale")

    page.click("button[data-action=start]")
    page.wait_for_selector("#campaign-state:has-text('running')")
    # Figures arrive over server-sent events, without a reload.
    page.wait_for_selector("#stream-status[data-live='1']")
    assert page.locator("[data-figure=total]").inner_text() == "12"
    CampaignStats.objects.filter(campaign=campaign).update(sent=7, current_rate=42.0)
    page.wait_for_selector("[data-figure=sent]:has-text('7')")
    page.wait_for_selector("[data-figure=current_rate]:has-text('42')")

    page.click("button[data-action=pause]")
    page.wait_for_selector("#campaign-state:has-text('paused')")
    assert page.inner_text(".messages") == "Paused."
    assert page.locator("button[data-action=pause]").count() == 0

    page.click("button[data-action=resume]")
    page.wait_for_selector(".messages:has-text('Resumed.')")
    # The breaker pauses it while the page is open: the page asks the server again, so
    # the "Resumed." banner goes and Resume is offered.
    lifecycle.campaign_pause(campaign=campaign, reason="Bounce rate over the threshold.")
    page.wait_for_selector("button[data-action=resume]")
    assert page.locator(".messages").count() == 0
    assert "Bounce rate over the threshold." in page.inner_text("#pause-reason")
    page.goto("/console/campaigns/?q=winter")
    assert page.locator("#campaign-list tbody tr").count() == 1
    page.goto("/console/campaigns/?q=nothing-like-it")
    assert "No campaigns" in page.locator("#campaign-list").inner_text()
