"""Django admin for campaigns: listed with project, state and counts; nothing editable."""

from __future__ import annotations

from typing import Any

import pytest

from apps.campaigns.models import CampaignStats
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_campaigns_are_listed_with_project_state_and_counts_and_are_view_only(
    client: Any, project: Any, make_campaign: Any
) -> None:
    campaign = make_campaign(name="Spring sale")
    CampaignStats.objects.update_or_create(
        campaign=campaign, defaults={"project": project, "sent": 41, "delivered": 37, "dead": 2}
    )
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    index = client.get("/admin/").content.decode()
    assert "/admin/campaigns/campaign/" in index and "/admin/workflows/workflow/" in index
    page = client.get("/admin/campaigns/campaign/").content.decode()
    assert "Spring sale" in page and str(project) in page and "draft" in page
    assert '<td class="field-sent">41</td>' in page and '<td class="field-delivered">37</td>' in page
    detail = client.get(f"/admin/campaigns/campaign/{campaign.pk}/change/")
    assert detail.status_code == 200 and 'name="_save"' not in detail.content.decode()
    assert client.post(f"/admin/campaigns/campaign/{campaign.pk}/change/", {"state": "running"}).status_code == 403
    assert client.get("/admin/campaigns/campaign/add/").status_code == 403
