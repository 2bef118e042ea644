"""The execution page: live per-node counts from a polled fragment, and who is at a node, page by page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache

from apps.workflows import progress
from apps.workflows.models import Journey
from apps.workflows.services import execution_cancel
from tests.factories import MembershipFactory
from tests.workflows.helpers import chain, node, publish, run_until_idle, start_and_expand, subscribers

pytestmark = pytest.mark.django_db

PAUSE = chain(node("start", "start"), node("pause", "wait", mode="duration", days=1), node("end", "end"))


@pytest.fixture
def viewer(project: Any) -> Any:
    return MembershipFactory(organization=project.organization, role="viewer").user


def _waiting_execution(project: Any, count: int) -> Any:
    subscribers(project, count)
    execution = start_and_expand(project, publish(project, "pause", PAUSE))
    run_until_idle()
    return execution


def _counts(page: str, node_id: str) -> dict[str, int]:
    row = re.search(rf'<tr data-node-counts="{node_id}">(.*?)</tr>', page).group(1)
    return {bucket: int(n) for bucket, n in re.findall(r'data-bucket="(\w+)">(\d+)<', row)}


def test_the_fragment_polls_while_running_and_stops_once_cancelled(client, viewer, project):
    execution = _waiting_execution(project, 3)
    client.force_login(viewer)
    live_url = f"/console/workflows/executions/{execution.pk}/live"
    page = client.get(f"/console/workflows/executions/{execution.pk}/").content.decode()
    assert f'hx-get="{live_url}"' in page and 'hx-trigger="every 1s"' in page
    assert "vendor/htmx-2.0.11.min.js" in page

    fragment = client.get(live_url).content.decode()
    assert 'id="execution-live"' in fragment
    assert _counts(fragment, "pause") == {"active": 0, "waiting": 3, "done": 0, "failed": 0, "stopped": 0}
    assert _counts(fragment, "start") == {"active": 0, "waiting": 0, "done": 3, "failed": 0, "stopped": 0}

    execution_cancel(project=project, execution=execution)
    fragment = client.get(live_url).content.decode()
    assert "hx-get" not in fragment, "a finished execution is not polled"
    assert _counts(fragment, "pause") == {"active": 0, "waiting": 0, "done": 0, "failed": 0, "stopped": 3}
    assert "3 stopped" in fragment


def test_another_projects_execution_fragment_is_a_404(client, project, other_project):
    execution = _waiting_execution(other_project, 1)
    user = MembershipFactory(organization=project.organization, role="owner").user
    client.force_login(user)
    assert client.get(f"/console/workflows/executions/{execution.pk}/live").status_code == 404
    assert client.get(f"/console/workflows/executions/{execution.pk}/").status_code == 404


def test_subscribers_at_a_node_are_paged_by_cursor_without_gaps_or_repeats(client, viewer, project):
    execution = _waiting_execution(project, 120)
    client.force_login(viewer)
    url = f"/console/workflows/executions/{execution.pk}/?node=pause"
    seen: list[int] = []
    pages = 0
    while url:
        page = client.get(url).content.decode()
        listing = page[page.index('data-testid="at-node"') :]
        rows = [int(j) for j in re.findall(r'href="/console/workflows/journeys/(\d+)/"', listing)]
        assert len(rows) <= 50
        seen += rows
        pages += 1
        found = re.search(r'href="([^"]+)" rel="next"', listing)
        url = f"/console/workflows/executions/{execution.pk}/" + found.group(1).replace("&amp;", "&") if found else ""
    assert pages == 3
    assert len(seen) == len(set(seen)) == 120
    assert set(seen) == set(Journey.objects.filter(execution=execution).values_list("pk", flat=True))


def test_an_unreadable_cursor_starts_at_the_first_page(client, viewer, project):
    execution = _waiting_execution(project, 2)
    client.force_login(viewer)
    page = client.get(f"/console/workflows/executions/{execution.pk}/?node=pause&after=garbage").content.decode()
    assert page[page.index('data-testid="at-node"') :].count("/console/workflows/journeys/") == 2


def test_viewers_polling_in_the_same_half_second_share_one_count(project, django_assert_num_queries, monkeypatch):
    execution = _waiting_execution(project, 2)
    monkeypatch.setattr(progress, "clock", lambda: 1_000_000.2)
    cache.clear()
    first = progress.execution_progress(project, execution)
    with django_assert_num_queries(0):
        assert progress.execution_progress(project, execution) == first
    # The next half second counts afresh.
    monkeypatch.setattr(progress, "clock", lambda: 1_000_000.6)
    with django_assert_num_queries(2):
        progress.execution_progress(project, execution)


@pytest.mark.django_db(transaction=True)
def test_node_counts_are_answered_from_the_step_index_alone(project, django_assert_max_num_queries):
    from django.db import connection

    from apps.workflows.selectors import execution_get, execution_node_counts

    execution = execution_get(project, _waiting_execution(project, 3).pk)
    with connection.cursor() as cursor:
        # Committed and vacuumed, so the visibility map lets the planner pick an index-only
        # scan; a handful of rows would be read sequentially, what matters is the plan at scale.
        cursor.execute("VACUUM ANALYZE workflows_step")
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_bitmapscan = off")
        try:
            with django_assert_max_num_queries(1) as captured:
                execution_node_counts(project, execution)
            cursor.execute("EXPLAIN " + captured.captured_queries[0]["sql"])
            plan = "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_seqscan")
            cursor.execute("RESET enable_bitmapscan")
    assert "Index Only Scan using step_by_execution_node" in plan, plan


def test_node_counts_refuse_another_projects_execution(project, other_project):
    from apps.core.errors import NotFound
    from apps.workflows.selectors import execution_node_counts

    execution = _waiting_execution(other_project, 1)
    with pytest.raises(NotFound):
        execution_node_counts(project, execution)
