"""Copy and paste of nodes: new ids, configs kept, references matched by name in another project."""

from __future__ import annotations

import json
from typing import Any

import pytest

from apps.delivery.services import connector_create
from apps.workflows.builder import clipboard
from apps.workflows.builder.edits import EditError
from apps.workflows.builder.status import draft_status
from tests.factories import ProjectFactory
from tests.workflows.builder.helpers import published_template, segment
from tests.workflows.helpers import edge, node

pytestmark = pytest.mark.django_db


def _source(project: Any) -> dict[str, Any]:
    vip = segment(project, "VIP", ["vip"])
    lost = segment(project, "Lapsed", ["lapsed"])
    smtp = connector_create(project=project, channel="email", provider="dryrun", name="Main")
    return {
        "nodes": [
            node("start", "start"),
            node(
                "check",
                "condition",
                predicates=[{"op": "in_segment", "segment": vip.pk}, {"op": "not_in_segment", "segment": lost.pk}],
            ),
            node("mail", "email", template="welcome", connector=smtp.pk),
            node("tagged", "add_tag", tags=["seen"]),
        ],
        "edges": [edge("start", "check"), edge("check", "mail", "yes"), edge("mail", "tagged")],
    }


def test_copy_carries_configs_internal_edges_and_the_names_behind_ids(project: Any) -> None:
    graph = _source(project)
    payload = clipboard.copy_payload(graph, project=project, node_ids=["check", "mail", "start"])
    assert [n["id"] for n in payload["nodes"]] == ["check", "mail"], "the start node is never copied"
    assert payload["edges"] == [{"from": "check", "handle": "yes", "to": "mail"}]
    assert sorted(payload["references"]["segments"].values()) == ["Lapsed", "VIP"]
    assert list(payload["references"]["connectors"].values()) == [
        {"channel": "email", "provider": "dryrun", "name": "Main"}
    ]


def test_paste_in_the_same_project_keeps_ids_of_references_and_gives_new_node_ids(project: Any) -> None:
    graph = _source(project)
    text = json.dumps(clipboard.copy_payload(graph, project=project, node_ids=["check", "mail"]))
    done = clipboard.paste(graph, project=project, text=text)
    assert done.focus == ["condition-1", "email-1"]
    pasted = {n["id"]: n for n in done.graph["nodes"]}
    assert pasted["condition-1"]["config"] == next(n for n in graph["nodes"] if n["id"] == "check")["config"]
    assert pasted["email-1"]["config"] == next(n for n in graph["nodes"] if n["id"] == "mail")["config"]
    assert {"from": "condition-1", "handle": "yes", "to": "email-1"} in done.graph["edges"]
    assert "flags" not in pasted["email-1"]


def test_paste_into_another_project_matches_by_name_or_flags_the_node(project: Any) -> None:
    graph = _source(project)
    text = json.dumps(clipboard.copy_payload(graph, project=project, node_ids=["check", "mail"]))
    target = ProjectFactory(organization=project.organization)
    here_vip = segment(target, "VIP", ["vip"])
    published_template(target, "welcome", "email")
    other_main = connector_create(project=target, channel="email", provider="dryrun", name="Main")
    empty = {"nodes": [{"id": "start", "type": "start", "config": {}}], "edges": []}
    done = clipboard.paste(empty, project=target, text=text)
    pasted = {n["id"]: n for n in done.graph["nodes"]}
    predicates = pasted["condition-1"]["config"]["predicates"]
    assert predicates[0] == {"op": "in_segment", "segment": here_vip.pk}
    assert predicates[1] == {"op": "not_in_segment"}, "no segment 'Lapsed' here: left to choose, never a wrong id"
    assert pasted["condition-1"]["flags"] == [
        "copied from another project, segment 'Lapsed' has no match here: choose a segment."
    ]
    assert pasted["email-1"]["config"] == {"template": "welcome", "connector": other_main.pk}
    assert "flags" not in pasted["email-1"]
    issues = draft_status(done.graph, project=target).for_node("condition-1")
    assert any(i.code == "unresolved_reference" for i in issues)


def test_a_template_another_project_lacks_is_flagged_and_its_key_kept(project: Any) -> None:
    graph = _source(project)
    text = json.dumps(clipboard.copy_payload(graph, project=project, node_ids=["mail"]))
    target = ProjectFactory(organization=project.organization)
    done = clipboard.paste({"nodes": [], "edges": []}, project=target, text=text)
    mail = done.graph["nodes"][0]
    assert mail["config"] == {"template": "welcome"}
    flags = " | ".join(mail["flags"])
    assert "the email template 'welcome' does not exist in this project" in flags
    assert "connector 'Main' has no match here" in flags


@pytest.mark.parametrize(
    "text",
    [
        "",
        "just some words",
        "[1, 2, 3]",
        json.dumps({"nodes": [{"id": "a", "type": "email"}], "edges": []}),
        json.dumps({"format": "tidings/journey-nodes", "version": 1, "nodes": "lots"}),
        json.dumps(
            {"format": "tidings/journey-nodes", "version": 1, "nodes": [{"id": "a", "type": "rocket"}], "edges": []}
        ),
        json.dumps(
            {"format": "tidings/journey-nodes", "version": 1, "nodes": [{"id": "a", "type": "start"}], "edges": []}
        ),
        json.dumps(
            {"format": "tidings/journey-nodes", "version": 1, "nodes": [{"id": "a b", "type": "end"}], "edges": []}
        ),
        json.dumps(
            {
                "format": "tidings/journey-nodes",
                "version": 1,
                "nodes": [{"id": "a", "type": "end"}],
                "edges": [{"from": "a", "to": "zz"}],
            }
        ),
        json.dumps(
            {"format": "tidings/journey-nodes", "version": 9, "nodes": [{"id": "a", "type": "end"}], "edges": []}
        ),
    ],
)
def test_anything_but_copied_nodes_is_refused_clearly(project: Any, text: str) -> None:
    with pytest.raises(EditError) as refused:
        clipboard.paste({"nodes": [], "edges": []}, project=project, text=text)
    assert refused.value.code.startswith("clipboard_")
    assert refused.value.message
