"""The template editor in a real browser at a laptop's size: fields, live preview, save, SMS counter."""

from __future__ import annotations

from typing import Any

import pytest

from apps.delivery.services import template_create
from tests.factories import MembershipFactory
from tests.workflows.builder.helpers import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box


def test_write_an_email_see_it_previewed_in_wide_columns_and_save_it(page: Any, project: Any) -> None:
    from playwright.sync_api import expect

    user = MembershipFactory(organization=project.organization, role="owner").user
    template = template_create(project=project, key="welcome", channel="email", name="Welcome")
    page.set_viewport_size({"width": 1366, "height": 768})
    sign_in(page, user)
    page.goto(f"/console/delivery/templates/{template.pk}/")

    long_word = "Unbreakable" * 30
    page.fill("#id_email_subject", f"Welcome {{{{ name }}}} {long_word}")
    page.fill("#id_email_preheader", "Three things to try first")
    html = page.locator("#id_email_html")
    html.fill("")
    html.type("<table><tr>\n")
    html.press("Tab")  # the code field indents instead of moving the focus
    html.type("<td>Hello {{ name }}, welcome aboard.</td>\n</tr></table>")
    assert html.evaluate("el => el.value") == "<table><tr>\n  <td>Hello {{ name }}, welcome aboard.</td>\n</tr></table>"
    assert page.evaluate("document.activeElement.id") == "id_email_html"
    page.fill("#preview-data", '{"name": "Grace"}')

    frame = page.frame_locator("[data-testid=preview-email-frame]")
    frame.locator("text=Hello Grace, welcome aboard.").wait_for()
    assert page.get_attribute("[data-testid=preview-email-frame]", "sandbox") == ""
    page.wait_for_selector(f"[data-testid=preview-email] >> text=Welcome Grace {long_word}")

    page.click("[data-testid=generate-text]")
    expect(page.locator("#id_email_text")).to_have_value("Hello {{ name }}, welcome aboard.")
    # The generated text reaches the preview too; measure once that refresh has settled.
    page.wait_for_selector("[data-testid=preview-email] pre >> text=Hello Grace, welcome aboard.")
    page.wait_for_selector("#preview:not(.htmx-request):not(.htmx-settling):not(.htmx-swapping)")

    editor, preview = _box(page, "[data-testid=editor-column]"), _box(page, "[data-testid=preview-column]")
    assert editor["width"] >= 520 and preview["width"] >= 520, (editor, preview)
    assert editor["x"] + editor["width"] <= preview["x"]  # side by side
    assert preview["x"] + preview["width"] <= 1366
    for selector in ("[data-testid=preview-email] pre >> nth=0", "[data-testid=preview-email-frame]"):
        inner = _box(page, selector)
        assert preview["x"] <= inner["x"] and inner["x"] + inner["width"] <= preview["x"] + preview["width"], selector
    assert page.locator("[data-testid=preview-email] pre >> nth=0").evaluate("el => el.scrollWidth <= el.clientWidth")

    page.click("[data-testid=save-version]")
    page.wait_for_selector(".messages >> text=Version 1 saved as a draft")
    assert template.versions.get().content == {
        "email": {
            "subject": f"Welcome {{{{ name }}}} {long_word}",
            "preheader": "Three things to try first",
            "html": "<table><tr>\n  <td>Hello {{ name }}, welcome aboard.</td>\n</tr></table>",
            "text": "Hello {{ name }}, welcome aboard.",
        }
    }

    # The SMS body counts characters and segments while one types.
    page.click("details[data-channel=sms] summary")
    page.check("#channel-sms")
    page.fill("#id_sms_text", "€" * 80)
    expect(page.locator("[data-testid=sms-count]")).to_have_text("160 characters · GSM-7 · 1 segment")
    page.locator("#id_sms_text").press("End")
    page.locator("#id_sms_text").type("й")
    expect(page.locator("[data-testid=sms-count]")).to_have_text("81 characters · UCS-2 · 2 segments")
