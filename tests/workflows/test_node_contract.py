"""One contract over every registered node type, fed by each type's example config."""

from __future__ import annotations

import pytest

from apps.workflows.nodes.base import NodeType, node_types

TYPES = list(node_types)


def test_every_documented_type_is_registered():
    expected = {"start", "end", "stop", "email", "push", "sms", "chat", "webhook", "condition",
                "multi_condition", "join", "wait", "add_tag", "remove_tag"}  # fmt: skip
    assert expected <= set(TYPES)


@pytest.mark.parametrize("type_name", TYPES)
def test_example_config_is_valid_for_its_schema(type_name):
    kind: NodeType = node_types.get(type_name)
    assert kind.type == type_name and kind.label
    assert kind.config_issues("n", kind.example_config) == []


@pytest.mark.parametrize("type_name", TYPES)
def test_unknown_config_keys_are_refused(type_name):
    kind = node_types.get(type_name)
    config = {**kind.example_config, "surprise": 1}
    assert any(issue.code == "invalid_config" and issue.node == "n" for issue in kind.config_issues("n", config))


@pytest.mark.parametrize("type_name", TYPES)
def test_handles_and_terminality_agree(type_name):
    kind = node_types.get(type_name)
    handles = kind.handles(kind.example_config)
    assert (handles == []) == kind.terminal
    assert len(set(handles)) == len(handles)


@pytest.mark.parametrize("type_name", TYPES)
def test_references_are_declared_as_data(type_name):
    kind = node_types.get(type_name)
    refs = kind.references(kind.example_config)
    assert all(isinstance(t, str) for t in refs.tags)
    assert all(isinstance(key, str) and isinstance(channel, str) for key, channel in refs.templates)


CHANNEL_CONTENT = {
    "email": {"subject": "Hi", "text": "Hi", "html": "<p>Hi</p>"},
    "push": {"title": "Hi", "body": "Hi"},
    "sms": {"text": "Hi"},
    "slack": {"text": "Hi"},
    "webhook": {"body": "{}"},
}


def _project_with_references(project):
    from django.utils import timezone

    from apps.delivery.models import Template, TemplateVersion
    from apps.subscribers.models import Device, Subscriber, Tag

    for type_name in TYPES:
        kind = node_types.get(type_name)
        refs = kind.references(kind.example_config)
        for key, channel in refs.templates:
            template = Template.objects.create(project=project, key=key, channel=channel, name=key)
            TemplateVersion.objects.create(
                project=project,
                template=template,
                number=1,
                content={channel: CHANNEL_CONTENT[channel]},
                published_at=timezone.now(),
            )
        for tag in refs.tags:
            Tag.objects.get_or_create(project=project, name=tag)
    person = Subscriber.objects.create(
        project=project, external_id="x", email="x@example.com", phone="+351910000000", attributes={"slack_user": "U1"}
    )
    Device.objects.create(project=project, subscriber=person, platform="ios", token="tok-x")


@pytest.mark.django_db
@pytest.mark.parametrize("type_name", [t for t in TYPES if t != "start"])
def test_every_type_runs_inside_a_journey_with_its_example_config(project, type_name):
    from apps.workflows.models import Step
    from tests.workflows.helpers import edge, node, publish, run_until_idle, start_and_expand

    _project_with_references(project)
    kind = node_types.get(type_name)
    nodes = [node("start", "start"), {"id": "x", "type": type_name, "config": kind.example_config}, node("end", "end")]
    edges = [edge("start", "x")] + [edge("x", "end", handle) for handle in kind.handles(kind.example_config)]
    if kind.terminal:
        nodes.pop()
    version = publish(project, f"contract-{type_name.replace('_', '-')}", {"nodes": nodes, "edges": edges})
    execution = start_and_expand(project, version)
    run_until_idle()
    step = Step.objects.get(execution=execution, node_id="x")
    # The node answered an outcome the engine understood: nothing is left claimed.
    assert step.state in {"done", "failed", "waiting"}, (step.state, step.outcome)
    assert step.claim_token is None
    if step.state == "done" and not kind.terminal:
        assert Step.objects.filter(execution=execution, node_id="end", state="done").exists()
