"""The builder in a real browser: a journey built from scratch, clipboard, undo across reloads."""

from __future__ import annotations

import time
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


def _choose_wait_mode(page: Any, mode: str, field: str) -> None:
    """Pick a wait mode until its field shows: the node's form may still be replaced by
    the one its insertion loads (a busy machine answers that later), which shows the
    default mode again, so a single select could land on a form that is then swapped."""
    deadline = time.monotonic() + 15
    while not page.locator(f"{field}:visible").count():
        assert time.monotonic() < deadline, f"the {mode} wait's {field} never showed"
        if page.input_value("[data-testid=wait-mode]") != mode:
            page.select_option("[data-testid=wait-mode]", mode)
        page.wait_for_timeout(200)


def _insert_after(page: Any, node: str, handle: str, type_label: str) -> None:
    revision = int(page.get_attribute("#builder-workspace", "data-revision"))
    page.click(f".port-plus[data-after-node='{node}'][data-after-handle='{handle}'] circle")
    page.click(f".palette-item:has-text('{type_label}')")
    _wait_for_revision(page, revision + 1)


def test_build_a_journey_from_scratch_with_mouse_and_keyboard(page: Any, project: Any) -> None:
    user = MembershipFactory(organization=project.organization, role="editor").user
    tag(project, "vip")
    published_template(project, "welcome-email", "email")
    published_template(project, "welcome-push", "push")
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
    _choose_wait_mode(page, "time_of_day", "input[name='cfg.time']")
    page.fill("input[name='cfg.time']:visible", "09:00")
    _apply(page)
    _insert_after(page, "wait-1", "next", "End")

    assert page.inner_text("[data-testid=issue-counts]") == "Ready to publish"
    # Arrows move the selection up the path; Enter opens the selected node's form.
    page.locator("[data-testid=canvas]").focus()
    page.keyboard.press("ArrowUp")
    page.wait_for_selector(".node.selected[data-node='wait-1']")
    page.keyboard.press("ArrowUp")
    page.wait_for_selector(".node.selected[data-node='join-1']")
    page.keyboard.press("Enter")
    # A selector, not wait_for_function: that evaluates a string in the page, which the
    # console's Content-Security-Policy (no eval) refuses.
    page.wait_for_selector("#node-label:focus")
    assert page.input_value("input[name=node]") == "join-1"
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


def _draft(project: Any, key: str, graph: dict[str, Any] | None = None) -> None:
    from apps.workflows.services import workflow_save_draft

    workflow_save_draft(
        project=project, key=key, name=key, graph=graph or {"nodes": [{"id": "start", "type": "start"}], "edges": []}
    )


TWO_STEPS = {
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "tag-it", "type": "add_tag", "label": "Tag them", "config": {"tags": ["welcomed"]}},
        {"id": "pause", "type": "wait", "config": {"mode": "duration", "hours": 4}},
        {"id": "end", "type": "end"},
    ],
    "edges": [
        {"from": "start", "handle": "next", "to": "tag-it"},
        {"from": "tag-it", "handle": "next", "to": "pause"},
        {"from": "pause", "handle": "next", "to": "end"},
    ],
}


def test_copy_two_nodes_into_a_second_journey_through_the_system_clipboard(page: Any, project: Any) -> None:
    user = MembershipFactory(organization=project.organization, role="editor").user
    _draft(project, "first", TWO_STEPS)
    _draft(project, "second")
    sign_in(page, user)
    page.goto("/console/workflows/first/builder/")
    page.click(".node[data-node='tag-it'] rect.node-box")
    page.click(".node[data-node='pause'] rect.node-box", modifiers=["Shift"])
    page.keyboard.press("Control+c")
    page.wait_for_selector("[data-testid=alert][data-code=copied]")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert '"tidings/journey-nodes"' in copied
    page.goto("/console/workflows/second/builder/")
    page.locator("[data-testid=canvas]").focus()
    page.keyboard.press("Control+v")
    _wait_for_revision(page, 1)
    graph = Workflow.objects.get(project=project, key="second").draft_graph
    pasted = {n["id"]: n for n in graph["nodes"]}
    assert pasted["add-tag-1"]["config"] == {"tags": ["welcomed"]} and pasted["add-tag-1"]["label"] == "Tag them"
    assert pasted["wait-1"]["config"] == {"mode": "duration", "hours": 4}
    assert {"from": "add-tag-1", "handle": "next", "to": "wait-1"} in graph["edges"]
    # Both pasted nodes are selected; something that is not copied nodes is refused.
    assert page.get_attribute("#builder-workspace", "data-focus") == "add-tag-1,wait-1"
    page.evaluate("navigator.clipboard.writeText('a shopping list')")
    page.keyboard.press("Control+v")
    page.wait_for_selector("[data-testid=alert][data-code=clipboard_not_nodes]")
    assert "no copied journey nodes" in page.inner_text("[data-testid=alert]")
    assert Workflow.objects.get(project=project, key="second").draft_revision == 1


def test_undo_and_redo_survive_a_reload(page: Any, project: Any) -> None:
    user = MembershipFactory(organization=project.organization, role="editor").user
    _draft(project, "undoable", TWO_STEPS)
    sign_in(page, user)
    page.goto("/console/workflows/undoable/builder/")
    page.click(".node[data-node='pause'] rect.node-box")
    page.keyboard.press("Delete")
    _wait_for_revision(page, 1)
    assert page.locator(".node[data-node='pause']").count() == 0
    page.reload()
    page.locator("[data-testid=canvas]").focus()
    page.keyboard.press("Control+z")
    _wait_for_revision(page, 2)
    assert page.locator(".node[data-node='pause']").count() == 1
    page.reload()
    page.locator("[data-testid=canvas]").focus()
    page.keyboard.press("Control+Shift+z")
    _wait_for_revision(page, 3)
    assert page.locator(".node[data-node='pause']").count() == 0
    edges = Workflow.objects.get(project=project, key="undoable").draft_graph["edges"]
    assert {"from": "tag-it", "handle": "next", "to": "end"} in edges, "deleting bridged the path"


def test_a_validation_error_appears_on_its_node_and_the_issue_focuses_it(page: Any, project: Any) -> None:
    user = MembershipFactory(organization=project.organization, role="editor").user
    _draft(project, "checked", TWO_STEPS)
    sign_in(page, user)
    page.goto("/console/workflows/checked/builder/?node=tag-it")
    page.fill("input[name='cfg.tags']", "welcomed, welcomed")
    _apply(page)
    page.wait_for_selector(".node.error[data-node='tag-it']")
    assert "lists a tag twice" in page.inner_text("[data-testid=issues]")
    page.click("[data-testid=canvas]")  # clear the selection
    page.click("[data-testid=issues] [data-focus-node='tag-it']")
    page.wait_for_selector(".node.selected[data-node='tag-it']")


def test_a_stale_second_editor_is_refused(page: Any, browser: Any, live_server: Any, project: Any) -> None:
    ada = MembershipFactory(organization=project.organization, role="editor", user__username="ada").user
    grace = MembershipFactory(organization=project.organization, role="editor", user__username="grace").user
    _draft(project, "shared", TWO_STEPS)
    sign_in(page, ada)
    page.goto("/console/workflows/shared/builder/")
    other = browser.new_context(base_url=live_server.url).new_page()
    sign_in(other, grace)
    other.goto("/console/workflows/shared/builder/")
    other.click(".node[data-node='pause'] rect.node-box")
    other.keyboard.press("Delete")
    _wait_for_revision(other, 1)
    page.click(".node[data-node='tag-it'] rect.node-box")
    page.keyboard.press("Delete")
    page.wait_for_selector("[data-testid=alert][data-code=draft_changed]")
    assert "changed by grace at" in page.inner_text("[data-testid=alert]")
    graph = Workflow.objects.get(project=project, key="shared").draft_graph
    assert "tag-it" in {n["id"] for n in graph["nodes"]}, "the stale edit changed nothing"
    page.click("[data-testid=alert] [data-action=reload]")
    _wait_for_revision(page, 1)


def test_a_viewer_gets_no_edit_controls(page: Any, project: Any) -> None:
    user = MembershipFactory(organization=project.organization, role="viewer").user
    _draft(project, "watched", TWO_STEPS)
    sign_in(page, user)
    page.goto("/console/workflows/watched/builder/")
    page.wait_for_selector("[data-testid=read-only]")
    assert (
        page.locator(".palette-item, .plus, [data-testid=apply], [data-action=undo], [data-action=delete]").count() == 0
    )
    page.click(".node[data-node='pause'] rect.node-box")
    page.wait_for_selector("[data-testid=readonly-config]")
    # Previews stay (they change nothing); the node's form, connections and test sends do not.
    assert page.locator("[data-testid=node-form], [data-testid=connections], [data-testid=test-send]").count() == 0
    page.keyboard.press("Delete")
    page.keyboard.press("Control+z")
    page.wait_for_timeout(300)
    assert Workflow.objects.get(project=project, key="watched").draft_revision == 0
