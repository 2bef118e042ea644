"""What the builder added to the node contract: palette text, starter configs, how predicates
combine (all, any, none) and a send node's own connector."""

from __future__ import annotations

import pytest

from apps.delivery.services import connector_create
from apps.subscribers.services import subscriber_tags_change
from apps.workflows.graph import graph_issues
from apps.workflows.nodes.base import node_types
from tests.workflows.helpers import chain, edge, node, publish, run_until_idle, start_and_expand, subscribers


@pytest.mark.parametrize("type_name", list(node_types))
def test_every_type_says_what_it_does_for_the_palette(type_name: str) -> None:
    kind = node_types.get(type_name)
    assert kind.label and kind.description.endswith(".")
    # A starter config is what a node begins with in the builder: at worst incomplete, never malformed.
    issues = kind.config_issues("n", kind.starter_config)
    assert all(issue.code == "invalid_config" for issue in issues)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("match", "went"),
    [("any", {"vip": "yes", "beta": "yes", "none": "no"}), ("none", {"vip": "no", "beta": "no", "none": "yes"})],
)
def test_a_condition_can_ask_for_any_or_none_of_its_predicates(project, match: str, went: dict[str, str]) -> None:
    vip, beta, plain = subscribers(project, 3)
    subscriber_tags_change(project=project, subscriber=vip, add=["vip"], remove=[], source="api")
    subscriber_tags_change(project=project, subscriber=beta, add=["beta"], remove=[], source="api")
    predicates = [{"op": "has_tag", "tag": "vip"}, {"op": "has_tag", "tag": "beta"}]
    graph = {
        "nodes": [
            node("start", "start"),
            node("check", "condition", match=match, predicates=predicates),
            node("yes", "add_tag", tags=["went_yes"]),
            node("no", "add_tag", tags=["went_no"]),
            node("end", "end"),
        ],
        "edges": [
            edge("start", "check"),
            edge("check", "yes", "yes"),
            edge("check", "no", "no"),
            edge("yes", "end"),
            edge("no", "end"),
        ],
    }
    start_and_expand(project, publish(project, f"m-{match}", graph))
    run_until_idle()
    from apps.subscribers.selectors import subscriber_tag_names

    tags = subscriber_tag_names(project, [vip.pk, beta.pk, plain.pk])
    for person, name in ((vip, "vip"), (beta, "beta"), (plain, "none")):
        assert f"went_{went[name]}" in tags[person.pk]


@pytest.mark.django_db
def test_a_send_nodes_connector_must_be_the_projects_for_that_channel(project, other_project) -> None:
    mine = connector_create(project=project, channel="email", provider="dryrun", name="Main")
    sms = connector_create(project=project, channel="sms", provider="dryrun", name="Texts")
    theirs = connector_create(project=other_project, channel="email", provider="dryrun", name="Theirs")
    from apps.delivery.services import template_create, template_version_create

    template = template_create(project=project, key="hello", channel="email")
    template_version_create(
        template=template, content={"email": {"subject": "s", "text": "t", "html": "<p>h</p>"}}, publish=True
    )
    for connector, ok in ((mine, True), (sms, False), (theirs, False)):
        graph = chain(
            node("start", "start"), node("mail", "email", template="hello", connector=connector.pk), node("end", "end")
        )
        codes = [issue.code for issue in graph_issues(graph, project=project)]
        assert codes == ([] if ok else ["unknown_connector"])
