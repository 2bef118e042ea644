"""The console in a real browser: sign in, create a key, copy it, revoke it."""

from __future__ import annotations

import pytest

from apps.governance.models import ApiKey
from tests.factories import MembershipFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_in_create_copy_and_revoke_a_key(page, project):
    user = MembershipFactory(organization=project.organization, role="owner").user
    page.goto("/console/login/")
    page.fill("#id_login", user.email)
    page.fill("#id_password", "correct-horse-battery")
    page.click("button[type=submit]")
    page.wait_for_url("**/console/")
    page.click("nav >> text=API keys")

    form = page.locator("[data-testid=create-key-form]")
    form.locator("input[name=name]").fill("Mobile app")
    form.locator("select[name=kind]").select_option("public")
    form.locator("button[type=submit]").click()

    revealed = page.locator("#new-key-value")
    raw = revealed.input_value()
    assert raw.startswith("pk_")
    page.click("[data-copy-target=new-key-value]")
    page.locator("[data-testid=new-key] .copied").wait_for(state="visible")
    assert page.evaluate("navigator.clipboard.readText()") == raw

    key = ApiKey.objects.get(project=project, name="Mobile app")
    row = page.locator(f"tr[data-key-id='{key.pk}']")
    assert row.get_attribute("data-status") == "active"
    page.on("dialog", lambda dialog: dialog.accept())
    row.locator("button.danger").click()
    page.locator(f"tr[data-key-id='{key.pk}'][data-status='revoked']").wait_for()
    key.refresh_from_db()
    assert key.revoked_at is not None
    # Shown once: after a reload the raw key is nowhere on the page.
    page.reload()
    assert raw not in page.content()
