"""A run started from the console in a real browser, watched to the end by a real Celery worker."""

from __future__ import annotations

import time
from typing import Any

import pytest

from apps.subscribers.services.tags import tags_change_bulk
from apps.workflows.models import Execution
from apps.workflows.services import workflow_save_draft
from tests.factories import MembershipFactory
from tests.fixtures.worker import wait_for
from tests.workflows.builder.helpers import sign_in
from tests.workflows.helpers import chain, node, subscribers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SMALL = chain(
    node("start", "start"),
    node("mark", "add_tag", tags=["welcomed"]),
    node("check", "condition", predicates=[{"op": "has_tag", "tag": "welcomed"}]),
    node("end", "end"),
)
SMALL["nodes"].append(node("odd", "stop", reason="not welcomed"))
SMALL["edges"] = [e for e in SMALL["edges"] if e["from"] != "check"] + [
    {"from": "check", "handle": "yes", "to": "end"},
    {"from": "check", "handle": "no", "to": "odd"},
]


def _done_at(page: Any, node_id: str) -> str:
    return page.inner_text(f"tr[data-node-counts='{node_id}'] td[data-bucket='done']")


def test_start_a_run_for_50_from_the_console_and_watch_it_finish_without_a_reload(
    page: Any, project: Any, start_worker: Any
) -> None:
    owner = MembershipFactory(organization=project.organization, role="owner").user
    people = subscribers(project, 50)
    subscribers(project, 5, prefix="other")
    tags_change_bulk(project=project, changes=[(p.pk, ["trial"], []) for p in people], source="console")
    workflow_save_draft(project=project, key="welcome", name="Welcome", graph=SMALL)

    sign_in(page, owner)
    page.goto("/console/workflows/welcome/")
    page.click("text=Publish a new version")
    assert "Published version 1" in page.inner_text(".messages")
    page.click("[data-testid=start-run]")
    page.check("input[name=kind][value=tag]")
    page.select_option("#run-tag", "trial")
    page.click("text=Count and review")
    assert page.inner_text("[data-testid=run-size]") == "50 subscribers"
    page.click("[data-testid=confirm-start]")
    page.wait_for_selector("[data-testid=execution-live]")
    execution = Execution.objects.get()
    assert page.url.endswith(f"/console/workflows/executions/{execution.pk}/")
    # No worker is running yet: nobody has moved, whatever the page does next is live.
    assert _done_at(page, "end") == "0"

    reloads: list[str] = []
    page.on("framenavigated", lambda frame: reloads.append(frame.url) if frame == page.main_frame else None)
    worker = start_worker(["journeys"])

    def finished() -> bool:
        execution.refresh_from_db()
        return execution.state == Execution.State.COMPLETED

    wait_for(finished, timeout=120, message=f"execution stuck:\n{worker.log()[-3000:]}")
    seen_after = time.monotonic()
    page.wait_for_selector("[data-testid=execution-live][data-state=completed]", timeout=10_000)
    shown_within = time.monotonic() - seen_after
    assert shown_within < 2.5, f"the page showed the finished run {shown_within:.2f}s after it finished"

    assert _done_at(page, "start") == _done_at(page, "mark") == _done_at(page, "end") == "50"
    assert _done_at(page, "odd") == "0"
    assert page.inner_text("[data-total=completed] .figure") == "50"
    assert reloads == [], "the counts came without a reload"
    # Polling stops once the run is over: the fragment no longer carries a trigger.
    assert page.get_attribute("[data-testid=execution-live]", "hx-get") is None
