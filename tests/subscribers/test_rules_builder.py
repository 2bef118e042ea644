"""The segment rule builder's rows say exactly the rules they were drawn from."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.subscribers.console.rules_builder import rules_action, rules_from_post, rules_tree
from apps.subscribers.models import Segment
from tests.factories import MembershipFactory

TAGS = st.lists(st.sampled_from(["vip", "beta", "pt", "br", "churned"]), min_size=1, max_size=3, unique=True)
LEAF = st.builds(lambda kind, tags: {kind: tags}, st.sampled_from(["all", "any", "none"]), TAGS)


def _groups(depth: int) -> Any:
    member = LEAF if depth >= 4 else st.one_of(LEAF, st.deferred(lambda: _groups(depth + 1)))
    return st.builds(
        lambda op, groups: {"op": op, "groups": groups},
        st.sampled_from(["and", "or"]),
        st.lists(member, min_size=1, max_size=3),
    )


def _posted(tree: dict[str, Any]) -> dict[str, str]:
    """The fields the drawn rows post."""
    fields = {f"{tree['name']}.op": tree["op"]}
    for member in tree["members"]:
        if "group" in member:
            fields.update(_posted(member["group"]))
        else:
            fields[f"{member['name']}.kind"] = member["kind"]
            fields[f"{member['name']}.tags"] = member["tags"]
    return fields


@settings(max_examples=200, deadline=None)
@given(_groups(1))
def test_rules_survive_being_drawn_and_posted_back(rules: dict[str, Any]) -> None:
    assert rules_from_post(_posted(rules_tree(rules))) == rules


def test_rules_and_groups_are_added_and_removed_where_asked() -> None:
    rules = {"op": "and", "groups": [{"all": ["vip"]}, {"op": "or", "groups": [{"any": ["pt"]}]}]}
    assert rules_action(rules, "add_rule:r.g.1")["groups"][1]["groups"][-1] == {"all": []}
    assert rules_action(rules, "remove:r.g.0")["groups"][0]["op"] == "or"
    assert rules_action(rules, "add_group:r")["groups"][-1] == {"op": "or", "groups": [{"any": []}]}
    assert rules_action(rules, "remove:x.g.0") == rules
    assert rules_action(rules, "add_rule:r.g.9") == rules


@pytest.mark.django_db
def test_the_builder_saves_a_segment_and_a_bad_rule_is_a_form_error(client: Client, project: Any) -> None:
    user = MembershipFactory(organization=project.organization, role="editor").user
    client.force_login(user)
    bad = {
        "name": "VIP",
        "r.op": "and",
        "r.g.0.kind": "all",
        "r.g.0.tags": "vip",
        "r.g.1.kind": "none",
        "r.g.1.tags": "vip",
    }
    refused = client.post("/console/subscribers/segments/new/", bad)
    assert refused.status_code == 400 and "both required and excluded" in refused.content.decode()
    assert not Segment.objects.exists()
    preview = client.post("/console/subscribers/segments/preview/", bad)
    assert preview.status_code == 422 and "both required and excluded" in preview.content.decode()
    good = {"name": "VIP", "r.op": "or", "r.g.0.kind": "any", "r.g.0.tags": "vip, beta"}
    assert client.post("/console/subscribers/segments/new/", good).status_code == 302
    assert Segment.objects.get(project=project).rules == {"op": "or", "groups": [{"any": ["vip", "beta"]}]}
    viewer = MembershipFactory(organization=project.organization, role="viewer").user
    client.force_login(viewer)
    assert client.post("/console/subscribers/segments/rules/", good).status_code == 403
