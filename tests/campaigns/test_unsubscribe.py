"""One-click unsubscribe: RFC 8058 headers, signed tokens, no login, idempotent."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import signing
from django.test import Client

from apps.campaigns.unsubscribe import unsubscribe_headers, unsubscribe_token
from apps.delivery.models import Suppression

pytestmark = pytest.mark.django_db


def test_headers_carry_a_one_click_link_with_a_signed_token(project: Any, make_campaign: Any) -> None:
    campaign = make_campaign()
    headers = unsubscribe_headers(project_id=project.pk, campaign_id=campaign.pk, address="ann@example.com")
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert headers["List-Unsubscribe"].startswith("<") and "/u/" in headers["List-Unsubscribe"]


def test_one_click_post_suppresses_without_login_and_is_idempotent(project: Any, make_campaign: Any) -> None:
    campaign = make_campaign()
    token = unsubscribe_token(project_id=project.pk, campaign_id=campaign.pk, address="Ann@Example.com")
    client = Client(enforce_csrf_checks=True)
    assert client.get(f"/u/{token}").status_code == 200
    assert not Suppression.objects.exists()  # a link scanner's GET changes nothing
    for _ in range(2):
        response = client.post(f"/u/{token}", {"List-Unsubscribe": "One-Click"})
        assert response.status_code == 200
        assert b"You are unsubscribed" in response.content
    row = Suppression.objects.get()
    assert (row.project_id, row.address, row.reason) == (project.pk, "ann@example.com", "unsubscribe")


@pytest.mark.parametrize("case", ["forged", "expired", "other_project"])
def test_bad_tokens_get_a_clear_page_and_change_nothing(
    case: str, project: Any, other_project: Any, make_campaign: Any, settings: Any
) -> None:
    campaign = make_campaign()
    if case == "forged":
        genuine = unsubscribe_token(project_id=project.pk, campaign_id=campaign.pk, address="x@example.com")
        token = signing.TimestampSigner(salt="nope").sign(genuine.split(":")[0])
    elif case == "expired":
        settings.TIDINGS_UNSUBSCRIBE_MAX_AGE = -1
        token = unsubscribe_token(project_id=project.pk, campaign_id=campaign.pk, address="x@example.com")
    else:
        # Validly signed, but naming a campaign that is not the token's project's.
        token = unsubscribe_token(project_id=other_project.pk, campaign_id=campaign.pk, address="x@example.com")
    response = Client().post(f"/u/{token}")
    assert response.status_code == 400
    assert b"Link not valid" in response.content and b"Nothing was changed" in response.content
    assert not Suppression.objects.exists()
