from __future__ import annotations

from typing import Any

import pytest

from apps.core.errors import ApplicationError, NotFound
from apps.subscribers.models import SegmentMembership, SubscriberTag, Tag, TagEvent
from apps.subscribers.selectors import segment_subscriber_ids, subscriber_tag_names, subscribers_with_tag
from apps.subscribers.services import (
    segment_count_preview,
    segment_create,
    segment_update,
    subscriber_identify,
    subscriber_tags_change,
    tags_change_bulk,
)


def _sub(project: Any, ext: str, tags: list[str] | None = None) -> Any:
    s = subscriber_identify(project=project, external_id=ext)
    if tags:
        subscriber_tags_change(project=project, subscriber=s, add=tags, remove=[], source="api")
    return s


def test_tag_changes_are_recorded_with_their_source(project: Any) -> None:
    s = _sub(project, "u1")
    names = subscriber_tags_change(
        project=project, subscriber=s, add=["vip", "beta"], remove=[], source="workflow", source_ref="step:9"
    )
    assert names == {"vip", "beta"}
    assert subscriber_tags_change(project=project, subscriber=s, add=[], remove=["beta"], source="console") == {"vip"}
    events = list(TagEvent.objects.filter(subscriber=s).order_by("pk").values_list("tag_name", "action", "source"))
    assert sorted(events[:2]) == [("beta", "added", "workflow"), ("vip", "added", "workflow")]
    assert events[2] == ("beta", "removed", "console")


def test_repeating_a_tag_change_records_nothing_new(project: Any) -> None:
    s = _sub(project, "u1", ["vip"])
    subscriber_tags_change(project=project, subscriber=s, add=["vip"], remove=["absent"], source="api")
    assert TagEvent.objects.filter(subscriber=s).count() == 1


@pytest.mark.parametrize(
    ("add", "remove", "code"),
    [
        (["x" * 65], [], "invalid_tag"),
        (["bad\x07bell"], [], "invalid_tag"),
        ([""], [], "invalid_tag"),
        (["vip"], ["vip"], "contradictory_tag_change"),
    ],
)
def test_bad_tag_changes_are_refused_and_change_nothing(project: Any, add: list, remove: list, code: str) -> None:
    s = _sub(project, "u1")
    with pytest.raises(ApplicationError) as exc:
        subscriber_tags_change(project=project, subscriber=s, add=add, remove=remove, source="api")
    assert exc.value.code == code
    assert not SubscriberTag.objects.exists() and not Tag.objects.exists()


def test_bulk_change_applies_many_and_refuses_foreign_subscribers(project: Any, other_project: Any) -> None:
    a, b = _sub(project, "a"), _sub(project, "b", ["old"])
    assert tags_change_bulk(project=project, changes=[(a.pk, ["x"], []), (b.pk, ["x"], ["old"])], source="workflow")
    assert subscriber_tag_names(project, [a.pk, b.pk]) == {a.pk: {"x"}, b.pk: {"x"}}
    foreign = _sub(other_project, "f")
    with pytest.raises(NotFound):
        tags_change_bulk(project=project, changes=[(foreign.pk, ["x"], [])], source="workflow")
    assert not subscriber_tag_names(other_project, [foreign.pk])
    assert [s.pk for s in subscribers_with_tag(project, "x")] == [a.pk, b.pk]


def test_segment_membership_follows_tag_changes_in_the_same_call(project: Any) -> None:
    rules = {"op": "and", "groups": [{"all": ["vip"]}, {"none": ["churned"]}]}
    segment = segment_create(project=project, name="VIPs", rules=rules)
    s = _sub(project, "u1")
    assert list(segment_subscriber_ids(project, segment.pk)) == []
    subscriber_tags_change(project=project, subscriber=s, add=["vip"], remove=[], source="api")
    assert list(segment_subscriber_ids(project, segment.pk)) == [s.pk]
    subscriber_tags_change(project=project, subscriber=s, add=["churned"], remove=[], source="api")
    assert list(segment_subscriber_ids(project, segment.pk)) == []


def test_segment_create_computes_membership_over_existing_subscribers(project: Any, other_project: Any) -> None:
    a = _sub(project, "a", ["pt"])
    b = _sub(project, "b", ["br", "beta"])
    _sub(project, "c", ["us"])
    _sub(other_project, "a", ["pt"])
    rules = {"op": "or", "groups": [{"any": ["pt", "br"]}, {"op": "and", "groups": [{"all": ["us", "beta"]}]}]}
    segment = segment_create(project=project, name="Lusophone", rules=rules)
    assert sorted(segment_subscriber_ids(project, segment.pk)) == sorted([a.pk, b.pk])
    assert segment_count_preview(project=project, rules=rules) == 2
    segment_update(project=project, segment=segment, rules={"op": "and", "groups": [{"none": ["pt", "br"]}]})
    assert SegmentMembership.objects.filter(segment=segment).count() == 1


def test_new_subscriber_joins_none_of_segments(project: Any) -> None:
    segment = segment_create(project=project, name="Untagged", rules={"op": "and", "groups": [{"none": ["x"]}]})
    s = _sub(project, "u1")
    assert list(segment_subscriber_ids(project, segment.pk)) == [s.pk]


@pytest.mark.parametrize(
    ("rules", "code", "field"),
    [
        ({"op": "and", "groups": [{"all": ["a", "a"]}]}, "duplicate_segment_predicate", "rules.groups[0].all[1]"),
        ({"op": "or", "groups": [{"any": ["a", "b"]}, {"any": ["b", "a"]}]}, "duplicate_segment_predicate", None),
        ({"op": "and", "groups": [{"all": ["a"]}, {"none": ["a"]}]}, "contradictory_segment_predicate", None),
        ({"op": "xor", "groups": [{"all": ["a"]}]}, "invalid_segment_rules", "rules.op"),
        ({"op": "and", "groups": []}, "invalid_segment_rules", "rules.groups"),
        ({"op": "and", "groups": [{"some": ["a"]}]}, "invalid_segment_rules", "rules.groups[0]"),
        ({"op": "and", "groups": [{"all": ["a"], "any": ["b"]}]}, "invalid_segment_rules", "rules.groups[0]"),
        ({"op": "and", "groups": [{"all": ["x" * 65]}]}, "invalid_tag", "rules.groups[0].all[0]"),
        ({"op": "and", "groups": [{"all": ["tab\there"]}]}, "invalid_tag", "rules.groups[0].all[0]"),
        (["not", "an", "object"], "invalid_segment_rules", "rules"),
    ],
)
def test_bad_segment_rules_are_refused(project: Any, rules: Any, code: str, field: str | None) -> None:
    with pytest.raises(ApplicationError) as exc:
        segment_create(project=project, name="S", rules=rules)
    assert exc.value.code == code
    if field:
        assert exc.value.field == field
    assert not project.pk or not SegmentMembership.objects.exists()
