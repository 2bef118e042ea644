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
