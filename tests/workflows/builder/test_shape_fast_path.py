"""The hand-written check of the graph format never accepts what the JSON schema refuses."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.workflows.graph import GRAPH_SCHEMA, _plainly_sound, shape_issues
from tests.workflows.builder.graphs import journey_graphs

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=70),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=6,
)
FIELDS = ["id", "type", "config", "label", "position", "flags", "extra", "from", "to", "handle"]


def _schema_ok(graph: Any) -> bool:
    return not list(jsonschema.Draft202012Validator(GRAPH_SCHEMA).iter_errors(graph))


@settings(max_examples=300, deadline=None)
@given(journey_graphs(max_nodes=40), st.data())
def test_a_mutated_graph_passes_the_fast_check_only_if_the_schema_accepts_it(built: Any, data: Any) -> None:
    graph = copy.deepcopy(built.graph)
    part = data.draw(st.sampled_from(["nodes", "edges"]))
    index = data.draw(st.integers(min_value=0, max_value=len(graph[part]) - 1))
    name = data.draw(st.sampled_from(FIELDS))
    graph[part][index][name] = data.draw(JSONISH)
    if _plainly_sound(graph):
        assert _schema_ok(graph)
    assert (shape_issues(graph) == []) == _schema_ok(graph)


@given(journey_graphs(max_nodes=60))
@settings(max_examples=40, deadline=None)
def test_a_sound_graph_takes_the_fast_path(built: Any) -> None:
    assert _plainly_sound(built.graph)
