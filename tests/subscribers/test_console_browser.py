from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from apps.subscribers.models import Segment
from apps.subscribers.services import subscriber_identify, subscriber_tags_change
from tests.factories import MembershipFactory, ProjectFactory


def _login(page: Any, user: Any) -> None:
    page.goto("/console/login/")
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", "correct-horse-battery")
    page.click("button[type=submit]")
    page.wait_for_url("**/console/**")


@pytest.mark.django_db(transaction=True)
def test_segment_preview_then_tagging_a_subscriber_puts_them_in_it(page: Any) -> None:
    project = ProjectFactory()
    user = MembershipFactory(organization=project.organization, role="editor").user
    alice = subscriber_identify(project=project, external_id="alice")
    bob = subscriber_identify(project=project, external_id="bob")
    subscriber_tags_change(project=project, subscriber=alice, add=["vip"], remove=[], source="api")
    _login(page, user)

    page.goto("/console/subscribers/segments/new/")
    page.fill("input[name=name]", "VIP")
    page.fill("input[name='r.g.0.tags']", "vip")
    page.wait_for_selector("[data-testid=segment-preview]:has-text('1 subscribers match')")
    page.click("[data-testid=add-rule]")
    page.wait_for_selector("input[name='r.g.1.tags']")
    page.select_option("select[name='r.g.1.kind']", "none")
    page.fill("input[name='r.g.1.tags']", "vip")
    page.wait_for_selector("[data-testid=segment-preview]:has-text('both required and excluded')")
    page.click("[data-testid=rule-row]:nth-child(2) button[name=_rules]")
    page.wait_for_selector("input[name='r.g.1.tags']", state="detached")
    page.wait_for_selector("[data-testid=segment-preview]:has-text('1 subscribers match')")
    page.click("text=Save segment")
    page.wait_for_selector("[data-testid=segments-table] >> text=VIP")
    assert page.inner_text("[data-testid=segments-table] td[data-count]") == "1"

    page.goto(f"/console/subscribers/{bob.pk}/")
    page.fill("input[name=add]", "vip")
    page.click("text=Update tags")
    page.wait_for_selector("[data-testid=tags] [data-tag=vip]")
    assert "VIP" in page.inner_text("[data-testid=segments]")
    assert Segment.objects.get(project=project).memberships.count() == 2


@pytest.mark.django_db(transaction=True)
def test_import_progress_bar_follows_the_worker(page: Any, celery_worker: Any, tmp_path: Path) -> None:
    project = ProjectFactory()
    user = MembershipFactory(organization=project.organization, role="owner").user
    csv = tmp_path / "people.csv"
    rows = "".join(f"p{i},p{i}@example.com,a|b\n" for i in range(3000))
    csv.write_text(f"external_id,email,tags\n{rows}x,bad,\n")
    _login(page, user)
    page.goto("/console/subscribers/imports/")
    page.set_input_files("input[name=file]", str(csv))
    page.click("text=Upload and import")
    page.wait_for_selector("[data-testid=import-progress] [data-field=status]:has-text('succeeded')", timeout=60000)
    assert page.inner_text("[data-field=rows_imported]") == "3000"
    assert page.get_attribute(".progress", "aria-valuenow") == "100"
    assert "Line 3002" in page.inner_text("[data-testid=import-errors]")
