"""workflow_version_diff: nodes and edges added, removed, changed, and config field by field."""

from __future__ import annotations

import copy

from apps.workflows.diff import EdgeChange, EdgeRef, FieldChange, workflow_version_diff
from tests.workflows.helpers import chain, edge, node, tag_branch_graph


def test_identical_graphs_have_no_changes_even_when_nodes_moved() -> None:
    old = tag_branch_graph("seen")
    new = copy.deepcopy(old)
    for index, item in enumerate(new["nodes"]):
        item["position"] = {"x": index * 40, "y": 7}
    diff = workflow_version_diff(old, new)
    assert diff.is_empty
    assert diff.summary() == "no changes"


def test_against_nothing_every_node_and_edge_is_added() -> None:
    new = chain(node("start", "start"), node("end", "end"))
    diff = workflow_version_diff(None, new)
    assert [n["id"] for n in diff.nodes_added] == ["start", "end"]
    assert diff.edges_added == [EdgeRef("start", "next", "end")]
    assert not diff.nodes_removed and not diff.edges_removed and not diff.nodes_changed


def test_added_and_removed_nodes_and_edges_are_named() -> None:
    old = chain(node("start", "start"), node("mark", "add_tag", tags=["a"]), node("end", "end"))
    new = chain(node("start", "start"), node("pause", "wait", mode="delay", seconds=60), node("end", "end"))
    diff = workflow_version_diff(old, new)
    assert [n["id"] for n in diff.nodes_added] == ["pause"]
    assert [n["id"] for n in diff.nodes_removed] == ["mark"]
    # start's "next" led to mark and now leads to pause: a re-route, not two unrelated edges.
    assert diff.edges_changed == [EdgeChange("start", "next", "mark", "pause")]
    assert diff.edges_added == [EdgeRef("pause", "next", "end")]
    assert diff.edges_removed == [EdgeRef("mark", "next", "end")]
    assert diff.summary() == "1 node added, 1 node removed, 1 edge added, 1 edge removed, 1 edge re-routed"


def test_config_changes_are_listed_field_by_field_with_nested_paths() -> None:
    old = chain(
        node("start", "start"),
        node("hook", "webhook", url="https://a.example", headers={"X-A": "1", "X-B": "2"}, retries=3),
        node("end", "end"),
    )
    new = copy.deepcopy(old)
    hook = new["nodes"][1]
    hook["config"] = {"url": "https://b.example", "headers": {"X-A": "1", "X-C": "3"}, "timeout": 5}
    hook["label"] = "Tell the CRM"
    diff = workflow_version_diff(old, new)
    assert [c.id for c in diff.nodes_changed] == ["hook"]
    fields = diff.nodes_changed[0].fields
    assert fields == [
        FieldChange("label", None, "Tell the CRM"),
        FieldChange("config.headers.X-B", "2", None, removed=True),
        FieldChange("config.headers.X-C", None, "3", added=True),
        FieldChange("config.retries", 3, None, removed=True),
        FieldChange("config.timeout", None, 5, added=True),
        FieldChange("config.url", "https://a.example", "https://b.example"),
    ]
    assert fields[-1].before_text == '"https://a.example"' and fields[-1].after_text == '"https://b.example"'


def test_lists_compare_whole_and_a_type_change_is_a_field_change() -> None:
    old = chain(node("start", "start"), node("mark", "add_tag", tags=["a", "b"]), node("end", "end"))
    new = copy.deepcopy(old)
    new["nodes"][1]["config"]["tags"] = ["b", "a"]
    new["nodes"][1]["type"] = "remove_tag"
    diff = workflow_version_diff(old, new)
    assert diff.nodes_changed[0].type == "remove_tag"
    assert diff.nodes_changed[0].fields == [
        FieldChange("type", "add_tag", "remove_tag"),
        FieldChange("config.tags", ["a", "b"], ["b", "a"]),
    ]


def test_a_new_branch_from_a_handle_with_several_targets_is_an_addition() -> None:
    old = tag_branch_graph("seen")
    new = copy.deepcopy(old)
    new["edges"].append(edge("check", "end", "yes"))
    diff = workflow_version_diff(old, new)
    assert diff.edges_added == [EdgeRef("check", "yes", "end")]
    assert not diff.edges_changed and not diff.edges_removed
    # An edge without a handle leaves by "next", the same edge as one that says so.
    bare = [{"from": e["from"], "to": e["to"]} if e["handle"] == "next" else e for e in old["edges"]]
    implicit = {"nodes": old["nodes"], "edges": bare}
    assert workflow_version_diff(old, implicit).is_empty
