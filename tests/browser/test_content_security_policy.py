"""The console and the API docs work in a real browser under their Content-Security-Policy."""

from __future__ import annotations

from typing import Any

import pytest

from apps.delivery.services import template_create
from tests.factories import MembershipFactory, ProjectFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def watch_for_violations(page: Any) -> list[str]:
    seen: list[str] = []
    page.on("console", lambda message: seen.append(message.text) if "Content Security Policy" in message.text else None)
    return seen


def test_the_template_preview_and_project_switcher_run_under_the_policy(page: Any, project: Any) -> None:
    violations = watch_for_violations(page)
    other = ProjectFactory(organization=project.organization, name="Zeta")
    user = MembershipFactory(organization=project.organization, role="owner").user
    template = template_create(project=project, key="welcome", channel="email", name="Welcome")
    page.goto("/console/login/")
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", "correct-horse-battery")
    page.click("button[type=submit]")
    page.wait_for_url("**/console/")

    page.goto(f"/console/delivery/templates/{template.pk}/")
    page.fill("#id_email_subject", "Hi {{ name }}")
    page.fill("#id_email_html", "<p>Hi</p>")
    page.fill("#preview-data", '{"name": "Ada"}')
    page.wait_for_selector("[data-testid=preview] >> text=Hi Ada")

    page.goto("/console/keys/")  # a page both projects have
    page.select_option("#project-switcher", str(other.pk))
    page.wait_for_selector(".messages >> text=Switched to")
    assert violations == []


def test_the_api_docs_render_under_the_policy(page: Any) -> None:
    violations = watch_for_violations(page)
    page.goto("/api/docs/")
    page.wait_for_selector("#swagger-ui >> text=Tidings API")
    page.wait_for_selector("#swagger-ui .opblock-tag")  # the operations, from /api/schema/
    assert violations == []


def test_htmx_pages_run_under_the_policy(page: Any, project: Any) -> None:
    violations = watch_for_violations(page)
    user = MembershipFactory(organization=project.organization, role="owner").user
    page.goto("/console/login/")
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", "correct-horse-battery")
    page.click("button[type=submit]")
    page.wait_for_url("**/console/")
    page.goto("/console/subscribers/segments/new/")
    page.fill("input[name=name]", "VIP")
    page.fill("input[name='r.g.0.tags']", "vip")  # htmx posts the form for a live count
    page.wait_for_selector("[data-testid=segment-preview]:has-text('0 subscribers match')")
    page.click("[data-testid=add-rule]")  # and swaps in the rules builder's new row
    page.wait_for_selector("input[name='r.g.1.tags']")
    assert violations == []
