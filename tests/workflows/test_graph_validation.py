"""Publish validation: each rule refuses with an error naming the node or edge."""

from __future__ import annotations

import pytest

from apps.subscribers.models import Segment, Tag
from apps.workflows.graph import graph_issues
from tests.factories import ProjectFactory
from tests.workflows.helpers import chain, edge, node, tag_branch_graph

pytestmark = pytest.mark.django_db


def codes(graph, project):
    return [(i.code, i.node, i.edge) for i in graph_issues(graph, project=project)]


def test_a_sound_graph_has_no_issues(project):
    Tag.objects.create(project=project, name="vip")
    assert graph_issues(tag_branch_graph(), project=project) == []


def test_exactly_one_start(project):
    graph = chain(node("a", "start"), node("b", "start"), node("end", "end"))
    assert ("start_count", "b", None) in codes(graph, project)
    assert ("start_count", None, None) in codes(chain(node("end", "end")), project)


def test_unknown_node_type_names_the_node(project):
    graph = chain(node("start", "start"), node("x", "teleport"), node("end", "end"))
    assert ("unknown_node_type", "x", None) in codes(graph, project)


def test_invalid_config_names_the_node(project):
    graph = chain(node("start", "start"), node("w", "wait", mode="time_of_day", time="25:00"), node("end", "end"))
    assert next(c for c in codes(graph, project) if c[1] == "w")[0] in {"invalid_config", "invalid_wait"}
    graph = chain(node("start", "start"), node("t", "add_tag"), node("end", "end"))
    assert ("invalid_config", "t", None) in codes(graph, project)


def test_impossible_fixed_date_is_refused(project):
    graph = chain(node("start", "start"), node("w", "wait", mode="datetime", at="2026-02-31T09:00"), node("end", "end"))
    assert ("invalid_wait", "w", None) in codes(graph, project)


def test_unreachable_node(project):
    graph = chain(node("start", "start"), node("end", "end"))
    graph["nodes"].append(node("lonely", "end"))
    assert ("unreachable", "lonely", None) in codes(graph, project)


def test_every_handle_needs_an_edge_so_paths_end(project):
    Tag.objects.create(project=project, name="vip")
    graph = tag_branch_graph()
    graph["edges"] = [e for e in graph["edges"] if e["handle"] != "no"]
    graph["nodes"] = [n for n in graph["nodes"] if n["id"] != "tag_no"]
    graph["edges"] = [e for e in graph["edges"] if "tag_no" not in (e["from"], e["to"])]
    assert ("dangling_handle", "check", None) in codes(graph, project)


def test_edge_to_unknown_node_and_unknown_handle_name_the_edge(project):
    graph = chain(node("start", "start"), node("end", "end"))
    graph["edges"].append(edge("start", "ghost"))
    assert ("unknown_node", None, 1) in codes(graph, project)
    graph = chain(node("start", "start"), node("end", "end"))
    graph["edges"].append(edge("start", "end", "sideways"))
    assert ("unknown_handle", None, 1) in codes(graph, project)


def test_edges_out_of_end_and_into_start_are_refused(project):
    graph = chain(node("start", "start"), node("end", "end"))
    graph["edges"].append(edge("end", "start"))
    found = codes(graph, project)
    assert ("edge_from_terminal", None, 1) in found


def test_multi_condition_handles_must_be_cases_plus_default(project):
    Tag.objects.bulk_create([Tag(project=project, name=n) for n in ("a", "b")])
    cases = [
        {"handle": "first", "predicates": [{"op": "has_tag", "tag": "a"}]},
        {"handle": "second", "predicates": [{"op": "has_tag", "tag": "b"}]},
    ]
    graph = {
        "nodes": [node("start", "start"), node("split", "multi_condition", cases=cases), node("end", "end")],
        "edges": [edge("start", "split"), edge("split", "end", "first"), edge("split", "end", "second")],
    }
    assert ("dangling_handle", "split", None) in codes(graph, project)
    graph["edges"].append(edge("split", "end", "default"))
    assert codes(graph, project) == []
    graph["edges"].append(edge("split", "end", "third"))
    assert ("unknown_handle", None, 4) in codes(graph, project)


def test_duplicate_predicates_are_rejected(project):
    Tag.objects.create(project=project, name="vip")
    graph = tag_branch_graph()
    graph["nodes"][2]["config"]["predicates"] = [{"op": "has_tag", "tag": "vip"}, {"op": "has_tag", "tag": "vip"}]
    assert ("duplicate_predicate", "check", None) in codes(graph, project)


def test_duplicate_case_handles_are_rejected(project):
    cases = [{"handle": "x", "predicates": [{"op": "has_tag", "tag": "a"}]}] * 2
    graph = chain(node("start", "start"), node("split", "multi_condition", cases=cases))
    assert ("duplicate_case", "split", None) in codes(graph, project)


def test_cycle_without_a_wait_is_refused_but_with_a_wait_allowed(project):
    Tag.objects.create(project=project, name="vip")
    loop = {
        "nodes": [
            node("start", "start"),
            node("check", "condition", predicates=[{"op": "has_tag", "tag": "vip"}]),
            node("again", "add_tag", tags=["looped"]),
            node("end", "end"),
        ],
        "edges": [
            edge("start", "check"),
            edge("check", "end", "yes"),
            edge("check", "again", "no"),
            edge("again", "check"),
        ],
    }
    found = codes(loop, project)
    assert any(code == "cycle_without_wait" for code, _, _ in found)
    loop["nodes"].append(node("pause", "wait", mode="duration", days=1))
    loop["edges"][-1] = edge("again", "pause")
    loop["edges"].append(edge("pause", "check"))
    assert codes(loop, project) == []


def test_loop_with_no_way_out_is_refused(project):
    graph = {
        "nodes": [node("start", "start"), node("pause", "wait", mode="duration", hours=1), node("end", "end")],
        "edges": [edge("start", "pause"), edge("pause", "pause")],
    }
    found = codes(graph, project)
    assert ("no_way_out", "pause", None) in found and ("unreachable", "end", None) in found


def test_referenced_tags_and_segments_must_exist_in_this_project(project):
    other = ProjectFactory()
    Tag.objects.create(project=other, name="vip")
    other_segment = Segment.objects.create(project=other, name="s", rules={})
    assert ("unknown_tag", "check", None) in codes(tag_branch_graph(), project)
    graph = tag_branch_graph()
    graph["nodes"][2]["config"]["predicates"] = [{"op": "in_segment", "segment": other_segment.pk}]
    assert ("unknown_segment", "check", None) in codes(graph, project)


def test_tags_added_by_the_workflow_count_as_existing(project):
    graph = tag_branch_graph(tag="went_yes")
    assert codes(graph, project) == []


def test_wait_until_needs_a_project_timezone(project):
    graph = chain(node("start", "start"), node("w", "wait", mode="time_of_day", time="09:00"), node("end", "end"))
    assert codes(graph, project) == []
    project.timezone = ""
    project.save()
    assert ("timezone_required", "w", None) in codes(graph, project)
    absolute = chain(
        node("start", "start"), node("w", "wait", mode="datetime", at="2026-12-25T09:00+00:00"), node("end", "end")
    )
    duration = chain(node("start", "start"), node("w", "wait", mode="duration", minutes=5), node("end", "end"))
    assert codes(absolute, project) == [] and codes(duration, project) == []


def test_bad_shape_is_reported_not_crashed(project):
    assert codes({"nodes": "no"}, project)[0][0] == "invalid_graph"
    assert codes({"nodes": [{"id": "a b", "type": "start"}], "edges": []}, project)[0][1] == "a b"
