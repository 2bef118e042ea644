"""The campaign page offers only the controls its state allows, the server refuses the
rest, an outcome banner goes once it stops being true, and every time has one format."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from apps.campaigns import lifecycle
from apps.campaigns.models import Campaign, CampaignEvent, CampaignStats
from apps.campaigns.services import campaign_event
from tests.campaigns.conftest import add_subscribers
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

ALL = ("start", "pause", "resume", "retry", "cancel")
CASES = [
    ("draft", 0, {"start", "cancel"}),
    ("scheduled", 0, {"start", "cancel"}),
    ("running", 0, {"pause", "cancel"}),
    ("running", 3, {"pause", "retry", "cancel"}),
    ("paused", 0, {"resume", "cancel"}),
    ("paused", 3, {"resume", "retry", "cancel"}),
    ("completed", 0, set()),
    ("completed", 3, {"retry"}),
    ("cancelled", 3, set()),
]


@pytest.fixture
def signed_in(client: Any, project: Any) -> Any:
    client.force_login(MembershipFactory(organization=project.organization, role="owner").user)
    return client


def in_state(make_campaign: Any, state: str, dead: int) -> Campaign:
    campaign = make_campaign()
    Campaign.objects.filter(pk=campaign.pk).update(state=state)
    CampaignStats.objects.filter(campaign=campaign).update(dead=dead)
    campaign.refresh_from_db()
    return campaign


def shown(page: str) -> set[str]:
    controls = page[page.index('data-testid="campaign-controls"') : page.index('id="campaign-figures"')]
    return set(re.findall(r'data-action="(\w+)"', controls))


def banners(page: str) -> list[str]:
    found = re.search(r'<ul class="messages">(.*?)</ul>', page, re.S)
    return re.findall(r"<li[^>]*>([^<]*)</li>", found.group(1)) if found else []


@pytest.mark.parametrize(("state", "dead", "allowed"), CASES)
def test_the_page_shows_only_the_controls_the_state_allows(
    signed_in: Any, make_campaign: Any, state: str, dead: int, allowed: set[str]
) -> None:
    campaign = in_state(make_campaign, state, dead)
    page = signed_in.get(f"/console/campaigns/{campaign.pk}/").content.decode()
    assert shown(page) == allowed


@pytest.mark.parametrize(("state", "dead", "allowed"), CASES)
def test_the_server_refuses_the_controls_the_page_hides(
    signed_in: Any, make_campaign: Any, state: str, dead: int, allowed: set[str]
) -> None:
    campaign = in_state(make_campaign, state, dead)
    for action in set(ALL) - allowed:
        response = signed_in.post(f"/console/campaigns/{campaign.pk}/{action}/", follow=True)
        page = response.content.decode()
        expected = (
            "This campaign has no dead letters to retry."
            if action == "retry" and state in ("running", "paused", "completed")
            else f"A {state} campaign cannot {action}."
        )
        assert banners(page) == [expected], (action, state)
        campaign.refresh_from_db()
        assert campaign.state == state
        assert CampaignStats.objects.get(campaign=campaign).dead == dead


def test_a_start_banner_does_not_stay_up_once_the_campaign_is_paused(
    signed_in: Any, project: Any, make_campaign: Any
) -> None:
    add_subscribers(project, 3)
    campaign = make_campaign()
    assert signed_in.post(f"/console/campaigns/{campaign.pk}/start/").status_code == 302
    # The breaker pauses the campaign before the page that would show "Started" loads.
    lifecycle.campaign_pause(campaign=campaign, reason="Bounce rate over the threshold.")
    page = signed_in.get(f"/console/campaigns/{campaign.pk}/").content.decode()
    assert banners(page) == []
    assert "Bounce rate over the threshold." in page and shown(page) == {"resume", "cancel"}

    response = signed_in.post(f"/console/campaigns/{campaign.pk}/resume/", follow=True)
    assert banners(response.content.decode()) == ["Resumed."]
    response = signed_in.post(f"/console/campaigns/{campaign.pk}/pause/", follow=True)
    page = response.content.decode()
    assert banners(page) == ["Paused."] and shown(page) == {"resume", "cancel"}


def test_a_start_banner_shows_while_the_campaign_runs(signed_in: Any, project: Any, make_campaign: Any) -> None:
    add_subscribers(project, 3)
    campaign = make_campaign()
    page = signed_in.post(f"/console/campaigns/{campaign.pk}/start/", follow=True).content.decode()
    assert banners(page) == ["Started: sending to 3 recipients."] and shown(page) == {"pause", "cancel"}


def test_every_time_on_the_page_has_the_one_clock_format(signed_in: Any, make_campaign: Any) -> None:
    campaign = make_campaign()
    moment = datetime(2026, 3, 29, 0, 59, 58, 123456, tzinfo=UTC)
    Campaign.objects.filter(pk=campaign.pk).update(
        state="paused", send_at=moment, started_at=moment, paused_at=moment, pause_reason="Paused by hand."
    )
    campaign_event(campaign, CampaignEvent.Kind.STATE, "Paused by hand.")
    CampaignEvent.objects.filter(campaign=campaign).update(created_at=moment)
    page = signed_in.get(f"/console/campaigns/{campaign.pk}/").content.decode()
    times = re.findall(r"<time[^>]*>([^<]*)</time>", page)
    assert len(times) == 5  # send, start, pause, and the two events
    assert set(times) == {"2026-03-29 00:59:58 UTC"}
