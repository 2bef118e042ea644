"""The builder in a real browser: a journey built from scratch, clipboard, undo across reloads."""

from __future__ import annotations

from typing import Any

import pytest

from apps.workflows.models import Workflow
from tests.factories import MembershipFactory
from tests.workflows.builder.helpers import published_template, sign_in, tag

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _wait_for_revision(page: Any, revision: int) -> None:
    page.wait_for_selector(f"#builder-workspace[data-revision='{revision}']")


def _apply(page: Any) -> None:
    revision = int(page.get_attribute("#builder-workspace", "data-revision"))
    page.click("[data-testid=apply]")
    _wait_for_revision(page, revision + 1)


def _insert_after(page: Any, node: str, handle: str, type_label: str) -> None:
    revision = int(page.get_attribute("#builder-workspace", "data-revision"))
    page.click(f".port-plus[data-after-node='{node}'][data-after-handle='{handle}'] circle")
    page.click(f".palette-item:has-text('{type_label}')")
    _wait_for_revision(page, revision + 1)


def test_build_a_journey_from_scratch_with_mouse_and_keyboard(page: Any, project: Any) -> None:
    user = MembershipFactory(organization=project.organization, role="member").user
    tag(project, "vip")
    published_template(project, "welcome-email", "email")
    published_template(project, "welcome-push", "push")
    page.on("console", lambda m: print("console:", m.text))
    page.on("response", lambda r: print("response:", r.status, r.url) if r.status >= 400 else None)
    sign_in(page, user)
    page.goto("/console/workflows/")
    page.click("[data-testid=new-journey-link]")
    page.fill("#nj-name", "VIP welcome")
    page.fill("#nj-key", "vip-welcome")
    page.click("text=Create and open the builder")
    page.wait_for_selector(".node[data-node='start']")

    _insert_after(page, "start", "next", "Condition")
    page.click("[data-testid=add-row]")
    page.fill("input[name='cfg.predicates.0.tag']", "vip")
    _apply(page)
    _insert_after(page, "condition-1", "yes", "Email")
    page.select_option("select[name='cfg.template']", "welcome-email")
    _apply(page)
    _insert_after(page, "condition-1", "no", "Push")
    page.select_option("select[name='cfg.template']", "welcome-push")
    _apply(page)
    _insert_after(page, "email-1", "next", "Join")
    # Connect push -> join: the push's port, then the join node.
    revision = int(page.get_attribute("#builder-workspace", "data-revision"))
    page.click(".port[data-port-node='push-1'][data-port-handle='next'] circle")
    page.click(".node[data-node='join-1']")
    _wait_for_revision(page, revision + 1)
    # By keyboard: select the join, "a" arms the insertion after it, then the palette.
    page.click(".node[data-node='join-1']")
    page.keyboard.press("a")
    revision += 1
    page.click(".palette-item:has-text('Wait')")
    _wait_for_revision(page, revision + 1)
    page.select_option("[data-testid=wait-mode]", "time_of_day")
    page.wait_for_selector("input[name='cfg.time']")
    page.fill("input[name='cfg.time']", "09:00")
    _apply(page)
    _insert_after(page, "wait-1", "next", "End")

    assert page.inner_text("[data-testid=issue-counts]") == "Ready to publish"
    page.screenshot(path="/tmp/bc_built.png", full_page=True)
    graph = Workflow.objects.get(project=project, key="vip-welcome").draft_graph
    edges = {(e["from"], e["handle"], e["to"]) for e in graph["edges"]}
    assert edges == {
        ("start", "next", "condition-1"),
        ("condition-1", "yes", "email-1"),
        ("condition-1", "no", "push-1"),
        ("email-1", "next", "join-1"),
        ("push-1", "next", "join-1"),
        ("join-1", "next", "wait-1"),
        ("wait-1", "next", "end-1"),
    }
    configs = {n["id"]: n["config"] for n in graph["nodes"]}
    assert configs["condition-1"] == {"predicates": [{"op": "has_tag", "tag": "vip"}]}
    assert configs["wait-1"] == {"mode": "time_of_day", "time": "09:00"}
    assert configs["email-1"]["template"] == "welcome-email"
