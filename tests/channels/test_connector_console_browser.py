"""The main connector flow in a real browser: add a signed-webhook connector, see its
secret reduced to its last characters, send a test to a local endpoint."""

from __future__ import annotations

import pytest

from tests.channels.fakes import Response, fake_server
from tests.factories import MembershipFactory

pytestmark = pytest.mark.browser

SECRET = "whsec_c2VjcmV0LWZvci10aGUtYnJvd3Nlci10ZXN0IQ=="


def test_owner_adds_a_webhook_connector_and_sends_a_test(page, project) -> None:  # type: ignore[no-untyped-def]
    user = MembershipFactory(organization=project.organization, role="owner").user
    with fake_server(lambda request: Response(200, {"ok": True})) as server:
        page.goto("/console/login/")
        page.fill("#id_login", user.email)
        page.fill("#id_password", "correct-horse-battery")
        page.click("button[type=submit]")
        page.click("nav >> text=Connectors")
        page.click("[data-testid=provider-list] >> text=Outgoing webhook")
        page.fill("#id_name", "Order events")
        page.fill("#id_secrets", "whsec_not*base64")
        page.click("text=Save connector")
        assert "base64" in page.inner_text("[data-testid=connector-form]")
        page.fill("#id_secrets", SECRET)
        page.click("text=Save connector")
        assert "will not be shown again" in page.inner_text(".messages")
        assert SECRET not in page.content()
        page.fill("#id_destination", f"{server.url}/hooks/orders")
        page.click("text=Send test")
        assert "Test message accepted by webhook" in page.inner_text(".messages")
        page.click("text=← Connectors")
        row = page.inner_text("[data-testid=connectors-table]")
        assert "webhook" in row and "Order events" in row and "healthy" in row
    [request] = server.requests
    assert request.route == "/hooks/orders"
    assert request.header("webhook-signature").startswith("v1,")
