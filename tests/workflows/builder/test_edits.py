"""Builder edits as pure functions: what each does to a graph, and what each refuses."""

from __future__ import annotations

import pytest

from apps.workflows.builder import edits
from tests.workflows.helpers import chain, edge, node

BRANCH = {
    "nodes": [
        node("start", "start"),
        node("check", "condition", predicates=[{"op": "has_tag", "tag": "vip"}]),
        node("mail", "email", template="welcome"),
        node("join", "join"),
        node("end", "end"),
    ],
    "edges": [
        edge("start", "check"),
        edge("check", "mail", "yes"),
        edge("check", "join", "no"),
        edge("mail", "join"),
        edge("join", "end"),
    ],
}


def _edges(graph):
    return [(e["from"], e["handle"], e["to"]) for e in graph["edges"]]


def test_insert_on_an_edge_puts_the_node_between_its_ends_in_the_edges_place():
    done = edits.add(BRANCH, type_name="wait", on_edge=("check", "yes", "mail"))
    assert done.focus == ["wait-1"]
    assert _edges(done.graph)[1] == ("check", "yes", "wait-1")
    assert ("wait-1", "next", "mail") in _edges(done.graph)
    assert ("check", "yes", "mail") not in _edges(done.graph)
    assert next(n for n in done.graph["nodes"] if n["id"] == "wait-1")["config"] == {"mode": "duration", "days": 1}
    assert BRANCH["edges"][1] == edge("check", "mail", "yes"), "the input graph is never changed"


def test_insert_after_a_used_handle_takes_over_where_it_led():
    done = edits.add(BRANCH, type_name="add_tag", after=("mail", "next"))
    assert ("mail", "next", "add-tag-1") in _edges(done.graph)
    assert ("add-tag-1", "next", "join") in _edges(done.graph)


def test_a_branching_node_inserted_on_an_edge_continues_by_its_first_handle():
    done = edits.add(BRANCH, type_name="condition", on_edge=("mail", "next", "join"))
    assert ("condition-1", "yes", "join") in _edges(done.graph)


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"type_name": "teleport"}, "unknown_node_type"),
        ({"type_name": 7}, "unknown_node_type"),
        ({"type_name": "email", "on_edge": ("check", "maybe", "mail")}, "unknown_edge"),
        ({"type_name": "email", "after": ("ghost", "next")}, "unknown_node"),
        ({"type_name": "email", "after": ("check", "maybe")}, "unknown_handle"),
        ({"type_name": "end", "on_edge": ("check", "yes", "mail")}, "terminal_in_path"),
        ({"type_name": "start", "after": ("mail", "next")}, "start_has_no_input"),
    ],
)
def test_insert_refuses_what_the_draft_does_not_have(kwargs, code):
    with pytest.raises(edits.EditError) as refused:
        edits.add(BRANCH, **kwargs)
    assert refused.value.code == code


def test_deleting_a_step_bridges_the_path():
    done = edits.delete(BRANCH, node_ids=["mail"])
    assert ("check", "yes", "join") in _edges(done.graph)
    assert "mail" not in {n["id"] for n in done.graph["nodes"]}


def test_deleting_a_branch_removes_its_edges_and_leaves_the_lanes_to_be_reconnected():
    done = edits.delete(BRANCH, node_ids=["check"])
    assert not any("check" in (a, b) for a, _, b in _edges(done.graph))


def test_delete_refuses_unknown_and_missing_ids():
    for ids, code in ([[], "node_required"], [["mail", "ghost"], "unknown_node"], ["mail", "node_required"]):
        with pytest.raises(edits.EditError) as refused:
            edits.delete(BRANCH, node_ids=ids)
        assert refused.value.code == code


def test_connect_checks_handle_target_and_duplicates():
    graph = edits.add(BRANCH, type_name="push").graph
    done = edits.connect(graph, source="push-1", handle="next", target="join")
    assert ("push-1", "next", "join") in _edges(done.graph)
    cases = [
        ({"source": "push-1", "handle": "yes", "target": "join"}, "unknown_handle"),
        ({"source": "push-1", "handle": "next", "target": "start"}, "edge_into_start"),
        ({"source": "push-1", "handle": "next", "target": "push-1"}, "self_edge"),
        ({"source": "end", "handle": "next", "target": "join"}, "unknown_handle"),
        ({"source": "push-1", "handle": "next", "target": "nowhere"}, "unknown_node"),
    ]
    for kwargs, code in cases:
        with pytest.raises(edits.EditError) as refused:
            edits.connect(graph, **kwargs)
        assert refused.value.code == code
    with pytest.raises(edits.EditError) as refused:
        edits.connect(done.graph, source="push-1", handle="next", target="join")
    assert refused.value.code == "duplicate_edge"


def test_disconnect_removes_exactly_that_edge():
    done = edits.disconnect(BRANCH, source="check", handle="no", target="join")
    assert ("check", "no", "join") not in _edges(done.graph)
    assert len(done.graph["edges"]) == len(BRANCH["edges"]) - 1
    with pytest.raises(edits.EditError):
        edits.disconnect(BRANCH, source="check", handle="no", target="mail")


def test_rename_sets_and_clears_a_label():
    named = edits.rename(BRANCH, node_id="mail", label="  Welcome   mail ").graph
    assert next(n for n in named["nodes"] if n["id"] == "mail")["label"] == "Welcome mail"
    cleared = edits.rename(named, node_id="mail", label="").graph
    assert "label" not in next(n for n in cleared["nodes"] if n["id"] == "mail")
    with pytest.raises(edits.EditError):
        edits.rename(BRANCH, node_id="mail", label="x" * 201)


def test_duplicate_copies_nodes_and_the_edges_between_them_under_new_ids():
    done = edits.duplicate(BRANCH, node_ids=["mail", "join"])
    assert done.focus == ["email-1", "join-1"]
    assert ("email-1", "next", "join-1") in _edges(done.graph)
    copy = next(n for n in done.graph["nodes"] if n["id"] == "email-1")
    assert copy["config"] == {"template": "welcome"}
    with pytest.raises(edits.EditError) as refused:
        edits.duplicate(BRANCH, node_ids=["start"])
    assert refused.value.code == "duplicate_start"


def test_configure_replaces_the_config_and_drops_edges_of_handles_it_no_longer_has():
    graph = chain(node("start", "start"), node("m", "multi_condition", cases=[{"handle": "a", "predicates": []}]))
    graph["edges"] += [edge("m", "start", "a")]  # nonsense, but what a draft may hold
    done = edits.configure(graph, node_id="m", config={"cases": [{"handle": "b", "predicates": []}]})
    assert [e for e in done.graph["edges"] if e["from"] == "m"] == []
    with pytest.raises(edits.EditError) as refused:
        edits.configure(graph, node_id="m", config=["not", "an", "object"])
    assert refused.value.code == "invalid_config"
    with pytest.raises(edits.EditError) as refused:
        edits.configure(graph, node_id="m", config={"cases": ["x" * 70000]})
    assert refused.value.code == "config_too_large"


def test_an_edit_that_would_pass_the_graph_limit_is_refused():
    graph = {"nodes": [node("start", "start")] + [node(f"n{i}", "end") for i in range(499)], "edges": []}
    with pytest.raises(edits.EditError) as refused:
        edits.add(graph, type_name="email")
    assert "500" in refused.value.message
