"""The main console flow in a real browser: publish through the API, follow it in the console."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.delivery.models import Delivery
from apps.governance.services import api_key_create
from tests.factories import MembershipFactory
from tests.fixtures.worker import wait_for
from tests.notifications.conftest import make_template

pytestmark = [pytest.mark.browser, pytest.mark.worker]


def test_publish_in_api_then_find_it_in_the_explorer_and_open_its_delivery(
    page: Any, live_server: Any, celery_worker: Any, project: Any
) -> None:
    from apps.subscribers.models import Subscriber

    make_template(project)
    Subscriber.objects.create(project=project, external_id="ada", email="ada@example.com")
    _, raw = api_key_create(project=project, name="server", kind="secret")
    user = MembershipFactory(organization=project.organization, role="owner").user
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    response = api.post(
        "/api/v1/notifications",
        {"template": "welcome", "to": ["ada"], "channels": ["email"], "data": {"name": "Ada"}},
        format="json",
        HTTP_IDEMPOTENCY_KEY="browser-1",
    )
    assert response.status_code == 202
    notification_id = response.json()["id"]
    # The real worker relays the outbox event into a delivery.
    delivery = wait_for(
        lambda: Delivery.objects.filter(origin_kind="notification", origin_id=str(notification_id)).first(),
        timeout=30,
        message=f"notification was not relayed:\n{celery_worker.log()[-2000:]}",
    )

    page.goto("/console/login/")
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", "correct-horse-battery")
    page.click("button[type=submit]")
    page.click("nav >> text=Notifications")
    page.fill("input[name=subscriber]", "ada")
    page.click("text=Filter")
    row = page.locator(f'[data-notification-id="{notification_id}"]')
    row.wait_for()
    assert "welcome@1" in row.inner_text()

    row.locator(f"a:text-is('{notification_id}')").click()
    page.locator(f'[data-delivery-id="{delivery.pk}"] a').click()
    page.wait_for_url(f"**/console/delivery/deliveries/{delivery.pk}/")
    assert "Hello Ada" in page.locator("[data-testid=delivery-message]").inner_text()
    assert "ada@example.com" in page.locator("[data-testid=delivery-summary]").inner_text()
    assert page.locator("[data-testid=events-table] tbody tr").count() >= 1
