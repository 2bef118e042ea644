"""Imports into a project with segments: membership follows every committed chunk."""

# The check's SQL is assembled from compile_rules' fixed fragments; tag names are parameters.
# ruff: noqa: S608
from __future__ import annotations

import io
from typing import Any

import pytest
from django.db import connection

from apps.subscribers.models import Segment, Subscriber
from apps.subscribers.rules import compile_rules, rules_match
from apps.subscribers.selectors import segment_subscriber_ids
from apps.subscribers.services import (
    import_create,
    import_run,
    segment_create,
    subscriber_identify,
    subscriber_tags_change,
)
from apps.subscribers.services import imports as imports_module

RULES = {
    "vip or beta": {"op": "and", "groups": [{"any": ["vip", "beta"]}]},
    "vip and beta": {"op": "and", "groups": [{"all": ["vip", "beta"]}]},
    "not churned, pro or vip": {
        "op": "and",
        "groups": [{"none": ["churned"]}, {"op": "or", "groups": [{"all": ["pro"]}, {"any": ["vip"]}]}],
    },
}

# Chunks of two: the first is all new people (written without asking who exists), the
# second holds people who exist already (written the careful way), the third is mixed.
CSV = (
    b"external_id,tags\n"
    b"n1,vip|beta\n"
    b"n2,pro|churned\n"
    b"old-vip,beta\n"  # had vip: joins "vip and beta"
    b"old-churned,vip\n"  # had churned: joins "vip or beta", stays out of "not churned"
    b"n3,pro\n"
    b"old-plain,\n"  # in the file without tags: stays out of every segment
)


def _evaluated(project_id: int, segment: Segment) -> set[int]:
    predicate, params = compile_rules(segment.rules)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.id FROM subscribers_subscriber s WHERE s.project_id = %s"
            f" AND s.merged_into_id IS NULL AND s.erased_at IS NULL AND {predicate}",
            [project_id, *params],
        )
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.parametrize("start_new", [True, False])
def test_import_keeps_segment_membership_current_after_every_chunk(
    project: Any, settings: Any, monkeypatch: Any, start_new: bool
) -> None:
    settings.TIDINGS_IMPORT_WRITERS = 1  # in-process: the test's transaction is invisible to others
    monkeypatch.setattr(imports_module, "CHUNK_ROWS", 2)
    segments = [segment_create(project=project, name=name, rules=rules) for name, rules in RULES.items()]
    for external_id, tags in [("old-vip", ["vip"]), ("old-churned", ["churned"]), ("old-plain", ["pro"])]:
        person = subscriber_identify(project=project, external_id=external_id)
        subscriber_tags_change(project=project, subscriber=person, add=tags, remove=[], source="api")
    body = CSV
    if not start_new:
        # An existing person in the first chunk: every chunk then asks who exists first.
        body = CSV.replace(b"n1,vip|beta\n", b"old-plain,beta\nn1,vip|beta\n")

    checked: list[int] = []
    original = imports_module._commit_chunk

    def commit_and_check(job: Any, chunk: Any, progress: Any) -> None:
        original(job, chunk, progress)
        for segment in segments:
            held = set(segment_subscriber_ids(project, segment.pk))
            assert held == _evaluated(project.pk, segment), segment.name
        checked.append(chunk.seen)

    monkeypatch.setattr(imports_module, "_commit_chunk", commit_and_check)
    job = import_create(project=project, stream=io.BytesIO(body), file_name="p.csv", content_type="text/csv")
    job = import_run(project_id=project.pk, job_id=job.pk)

    assert job.status == "succeeded", job.error
    assert sum(checked) == job.rows_done and len(checked) >= 3
    ids = dict(Subscriber.objects.for_project(project).values_list("external_id", "pk"))
    expected = {
        "vip or beta": {"n1", "old-vip", "old-churned"} | (set() if start_new else {"old-plain"}),
        "vip and beta": {"n1", "old-vip"},
        "not churned, pro or vip": {"n1", "n3", "old-vip", "old-plain"},
    }
    for segment in segments:
        assert set(segment_subscriber_ids(project, segment.pk)) == {ids[x] for x in expected[segment.name]}


def test_an_import_leaves_other_projects_segments_alone(project: Any, other_project: Any, settings: Any) -> None:
    settings.TIDINGS_IMPORT_WRITERS = 1
    mine = segment_create(project=project, name="vip", rules=RULES["vip or beta"])
    theirs = segment_create(project=other_project, name="vip", rules=RULES["vip or beta"])
    job = import_create(
        project=project, stream=io.BytesIO(b"external_id,tags\na,vip\n"), file_name="p.csv", content_type="text/csv"
    )
    import_run(project_id=project.pk, job_id=job.pk)
    assert len(segment_subscriber_ids(project, mine.pk)) == 1
    assert not segment_subscriber_ids(other_project, theirs.pk).exists()


@pytest.mark.parametrize(
    ("tags", "matches"),
    [
        (set(), [False, False, False]),
        ({"vip"}, [True, False, True]),
        ({"vip", "beta", "churned"}, [True, True, False]),
        ({"pro"}, [False, False, True]),
        ({"pro", "churned"}, [False, False, False]),
    ],
)
def test_rules_match_agrees_with_the_sql_rules(project: Any, tags: set[str], matches: list[bool]) -> None:
    person = subscriber_identify(project=project, external_id="p")
    if tags:
        subscriber_tags_change(project=project, subscriber=person, add=sorted(tags), remove=[], source="api")
    segments = [segment_create(project=project, name=name, rules=rules) for name, rules in RULES.items()]
    assert [rules_match(s.rules, tags) for s in segments] == matches
    assert [person.pk in _evaluated(project.pk, s) for s in segments] == matches
