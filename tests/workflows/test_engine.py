"""The step runner: branches, joins, waits, stops and roll-ups, against real Postgres."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.subscribers.selectors import subscriber_tag_names
from apps.subscribers.services import subscriber_tags_change
from apps.workflows.models import Execution, Journey, Step
from apps.workflows.services import execution_cancel, journeys_stop
from tests.workflows.helpers import (
    chain,
    edge,
    make_due,
    node,
    publish,
    run_until_idle,
    start_and_expand,
    subscribers,
    tag_branch_graph,
)

pytestmark = pytest.mark.django_db


def tags_of(project, people):
    return subscriber_tag_names(project, [p.pk for p in people])


def test_condition_reads_a_tag_added_by_an_earlier_node(project):
    people = subscribers(project, 3)
    version = publish(project, "welcome", tag_branch_graph(tag="seen"))
    execution = start_and_expand(project, version)
    assert execution.entered == 3
    run_until_idle()
    assert all(tags == {"seen", "went_yes"} for tags in tags_of(project, people).values())
    execution.refresh_from_db()
    assert execution.state == Execution.State.COMPLETED
    assert set(Journey.objects.filter(execution=execution).values_list("state", flat=True)) == {"completed"}


def test_branch_follows_each_subscribers_tags(project):
    vip, plain = subscribers(project, 2)
    subscriber_tags_change(project=project, subscriber=vip, add=["vip"], remove=[], source="api")
    version = publish(project, "split", tag_branch_graph(tag="vip"))
    start_and_expand(project, version)
    run_until_idle()
    tags = tags_of(project, [vip, plain])
    assert "went_yes" in tags[vip.pk] and "went_no" not in tags[vip.pk]
    assert "went_no" in tags[plain.pk] and "went_yes" not in tags[plain.pk]


def test_condition_after_a_wait_reads_the_state_at_that_moment(project):
    (person,) = subscribers(project, 1)
    graph = tag_branch_graph(tag="vip")
    graph["nodes"].append(node("pause", "wait", mode="duration", hours=1))
    graph["edges"][1] = edge("mark", "pause")
    graph["edges"].append(edge("pause", "check"))
    from apps.subscribers.models import Tag

    Tag.objects.create(project=project, name="vip")
    version = publish(project, "later", graph)
    execution = start_and_expand(project, version)
    run_until_idle()
    wait_step = Step.objects.get(execution=execution, node_id="pause")
    assert wait_step.state == "waiting" and wait_step.due_at > timezone.now() + timedelta(minutes=59)
    assert Journey.objects.get(execution=execution).state == "waiting"
    # Not due yet: nothing moves.
    assert run_until_idle() == 0
    subscriber_tags_change(project=project, subscriber=person, add=["vip"], remove=[], source="api")
    make_due(execution=execution)
    run_until_idle()
    assert "went_yes" in tags_of(project, [person])[person.pk]
    execution.refresh_from_db()
    assert execution.state == "completed"


def test_multi_condition_first_matching_case_wins_else_default(project):
    a, ab, none = subscribers(project, 3)
    subscriber_tags_change(project=project, subscriber=a, add=["a"], remove=[], source="api")
    subscriber_tags_change(project=project, subscriber=ab, add=["a", "b"], remove=[], source="api")
    cases = [
        {"handle": "only_b", "predicates": [{"op": "has_tag", "tag": "b"}]},
        {"handle": "has_a", "predicates": [{"op": "has_tag", "tag": "a"}]},
    ]
    graph = {
        "nodes": [
            node("start", "start"),
            node("split", "multi_condition", cases=cases),
            node("t1", "add_tag", tags=["case_b"]),
            node("t2", "add_tag", tags=["case_a"]),
            node("t3", "add_tag", tags=["case_default"]),
            node("end", "end"),
        ],
        "edges": [
            edge("start", "split"),
            edge("split", "t1", "only_b"),
            edge("split", "t2", "has_a"),
            edge("split", "t3", "default"),
            edge("t1", "end"),
            edge("t2", "end"),
            edge("t3", "end"),
        ],
    }
    start_and_expand(project, publish(project, "multi", graph))
    run_until_idle()
    tags = tags_of(project, [a, ab, none])
    assert "case_a" in tags[a.pk] and "case_b" in tags[ab.pk] and "case_a" not in tags[ab.pk]
    assert tags[none.pk] == {"case_default"}


def test_join_lets_a_subscriber_continue_once(project):
    subscribers(project, 2)
    graph = {
        "nodes": [
            node("start", "start"),
            node("left", "add_tag", tags=["left"]),
            node("right", "add_tag", tags=["right"]),
            node("slow", "wait", mode="duration", minutes=5),
            node("merge", "join"),
            node("after", "add_tag", tags=["after"]),
            node("end", "end"),
        ],
        "edges": [
            edge("start", "left"),
            edge("start", "right"),
            edge("left", "merge"),
            edge("right", "slow"),
            edge("slow", "merge"),
            edge("merge", "after"),
            edge("after", "end"),
        ],
    }
    execution = start_and_expand(project, publish(project, "join", graph))
    run_until_idle()
    assert Journey.objects.filter(execution=execution, state="waiting").count() == 2
    make_due(execution=execution)
    run_until_idle()
    for journey in Journey.objects.filter(execution=execution):
        assert journey.state == "completed"
        assert Step.objects.filter(journey=journey, node_id="after").count() == 1
        outcomes = sorted(Step.objects.filter(journey=journey, node_id="merge").values_list("outcome", flat=True))
        assert outcomes == ["joined", "next"]


def test_stop_node_ends_the_journey_and_cancels_other_branches(project):
    subscribers(project, 1)
    graph = {
        "nodes": [
            node("start", "start"),
            node("pause", "wait", mode="duration", days=2),
            node("quit", "stop", reason="converted"),
            node("end", "end"),
        ],
        "edges": [edge("start", "pause"), edge("start", "quit"), edge("pause", "end")],
    }
    execution = start_and_expand(project, publish(project, "stop", graph))
    run_until_idle()
    journey = Journey.objects.get(execution=execution)
    assert journey.state == "stopped" and journey.stop_reason == "converted"
    assert Step.objects.get(journey=journey, node_id="pause").state in {"cancelled"}
    execution.refresh_from_db()
    assert execution.state == "completed"


def test_stopping_a_subscriber_cancels_pending_steps(project):
    one, two = subscribers(project, 2)
    graph = chain(node("start", "start"), node("pause", "wait", mode="duration", days=1), node("end", "end"))
    execution = start_and_expand(project, publish(project, "wait", graph))
    run_until_idle()
    assert journeys_stop(project=project, journeys=list(Journey.objects.filter(subscriber=one))) == 1
    assert Step.objects.get(subscriber=one, node_id="pause").state == "cancelled"
    assert Journey.objects.get(subscriber=one).state == "stopped"
    execution.refresh_from_db()
    assert execution.state == "running"
    make_due(execution=execution)
    run_until_idle()
    execution.refresh_from_db()
    assert execution.state == "completed"
    assert Journey.objects.get(subscriber=two).state == "completed"


def test_cancel_an_execution(project):
    subscribers(project, 3)
    graph = chain(node("start", "start"), node("pause", "wait", mode="duration", days=1), node("end", "end"))
    execution = start_and_expand(project, publish(project, "cancel", graph))
    run_until_idle()
    execution_cancel(project=project, execution=execution)
    execution.refresh_from_db()
    assert execution.state == "cancelled"
    assert set(Journey.objects.filter(execution=execution).values_list("state", flat=True)) == {"stopped"}
    assert not Step.objects.filter(execution=execution, state__in=Step.OPEN_STATES).exists()


def test_subscriber_active_in_workflow_is_not_entered_twice_unless_reentry(project):
    subscribers(project, 2)
    graph = chain(node("start", "start"), node("pause", "wait", mode="duration", days=1), node("end", "end"))
    version = publish(project, "once", graph)
    first = start_and_expand(project, version)
    run_until_idle()
    second = start_and_expand(project, version)
    assert (first.entered, second.entered, second.skipped) == (2, 0, 2)
    second.refresh_from_db()
    assert second.state == "completed"
    workflow = version.workflow
    workflow.allow_reentry = True
    workflow.save()
    third = start_and_expand(project, version)
    assert third.entered == 2


def test_external_ids_unknown_are_reported_the_rest_proceed(project):
    subscribers(project, 2)
    version = publish(project, "ids", chain(node("start", "start"), node("end", "end")))
    execution = start_and_expand(project, version, external_ids=["u0", "ghost", "u1"])
    assert execution.unknown_external_ids == ["ghost"] and execution.entered == 2


def test_wait_uses_subscriber_timezone_before_project(project):
    (tokyo,) = subscribers(project, 1, prefix="t", timezone="Asia/Tokyo")
    (plain,) = subscribers(project, 1, prefix="p")
    graph = chain(node("start", "start"), node("nine", "wait", mode="time_of_day", time="09:00"), node("end", "end"))
    execution = start_and_expand(project, publish(project, "nine", graph))
    run_until_idle()
    from zoneinfo import ZoneInfo

    tokyo_due = Step.objects.get(execution=execution, subscriber=tokyo, node_id="nine").due_at
    plain_due = Step.objects.get(execution=execution, subscriber=plain, node_id="nine").due_at
    assert tokyo_due.astimezone(ZoneInfo("Asia/Tokyo")).hour == 9
    assert plain_due.astimezone(ZoneInfo("Europe/Lisbon")).hour == 9


def test_execution_points_at_one_version_while_the_draft_changes(project):
    subscribers(project, 1)
    graph = chain(node("start", "start"), node("pause", "wait", mode="duration", days=1), node("end", "end"))
    version = publish(project, "frozen", graph)
    execution = start_and_expand(project, version)
    run_until_idle()
    publish(
        project,
        "frozen",
        chain(node("start", "start"), node("other", "stop"), node("end", "end"))
        | {"edges": [edge("start", "other")], "nodes": [node("start", "start"), node("other", "stop")]},
    )
    make_due(execution=execution)
    run_until_idle()
    assert list(Step.objects.filter(execution=execution).order_by("pk").values_list("node_id", flat=True)) == [
        "start",
        "pause",
        "end",
    ]


def _journey_rows(execution):
    return sorted(Journey.objects.filter(execution=execution).values_list("pk", "state", "current_node", "finished_at"))


def test_single_path_journeys_roll_up_as_reading_their_steps_back_would(project):
    # Journeys of a version that never forks take their state from the batch alone; reading
    # every step back (what forking versions get) must find nothing to change at any stage.
    from apps.workflows.rollup import journeys_refresh

    subscribers(project, 3)
    graph = chain(
        node("start", "start"),
        node("mark", "add_tag", tags=["seen"]),
        node("pause", "wait", mode="duration", hours=1),
        node("end", "end"),
    )
    execution = start_and_expand(project, publish(project, "single", graph))
    run_until_idle()
    waiting = _journey_rows(execution)
    assert {(state, node_id, finished) for _, state, node_id, finished in waiting} == {("waiting", "pause", None)}
    journeys_refresh([row[0] for row in waiting], timezone.now())
    assert _journey_rows(execution) == waiting

    make_due(execution=execution)
    run_until_idle()
    done = _journey_rows(execution)
    assert {(state, node_id) for _, state, node_id, _ in done} == {("completed", "end")}
    assert all(finished is not None for *_, finished in done)
    journeys_refresh([row[0] for row in done], timezone.now())
    assert _journey_rows(execution) == done
    execution.refresh_from_db()
    assert execution.state == Execution.State.COMPLETED
