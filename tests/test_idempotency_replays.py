"""An idempotent replay is only ever answered to a key that may make the request itself."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from apps.core.models import IdempotencyRecord
from apps.governance.services import api_key_revoke, api_key_rotate
from apps.subscribers.models import Segment
from tests.conftest import _client_for

pytestmark = pytest.mark.django_db

RULES = {"op": "and", "groups": [{"all": ["vip"]}]}


def create_segment(client: Any, key: str = "seg-1") -> Any:
    return client.post("/api/v1/segments", {"name": "VIP", "rules": RULES}, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_public_key_repeating_a_secret_keys_request_is_refused_not_replayed(
    secret_client: Any, public_client: Any
) -> None:
    assert create_segment(secret_client).status_code == 201
    repeat = create_segment(public_client)
    assert repeat.status_code == 403, repeat.content
    assert repeat.json()["code"] == "secret_key_required"
    assert not repeat.has_header("Idempotent-Replayed")
    assert Segment.objects.count() == 1


def test_a_key_lacking_the_scope_is_refused_before_the_replay(secret_client: Any, make_key: Any, project: Any) -> None:
    assert create_segment(secret_client).status_code == 201
    reader = _client_for(make_key(project, "restricted", ceiling="secret", scopes=["read"])[1])
    repeat = create_segment(reader)
    assert repeat.status_code == 403 and repeat.json()["code"] == "missing_scope"


def test_a_revoked_key_is_refused_before_the_replay(make_key: Any, project: Any) -> None:
    key, raw = make_key(project, "secret")
    client = _client_for(raw)
    assert create_segment(client).status_code == 201
    api_key_revoke(api_key=key)
    from apps.governance.selectors import api_key_cache_clear

    api_key_cache_clear()
    assert create_segment(client).status_code == 401


def test_replays_are_kept_apart_per_key_type_and_scopes(secret_client: Any, make_key: Any, project: Any) -> None:
    assert create_segment(secret_client).status_code == 201
    # Another secret key of the project (same powers) gets the replay: nothing is done twice.
    other_secret = _client_for(make_key(project, "secret", name="second")[1])
    again = create_segment(other_secret)
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    # A restricted key that may create segments has its own replays: it runs the request.
    writer = _client_for(make_key(project, "restricted", ceiling="secret", scopes=["subscribers:write"])[1])
    own = create_segment(writer)
    assert own.status_code == 409 and own.json()["code"] == "segment_name_taken"
    assert IdempotencyRecord.objects.filter(key="seg-1").count() == 1


def test_a_rotated_key_replays_what_its_predecessor_stored(make_key: Any, project: Any) -> None:
    key, raw = make_key(project, "secret")
    assert create_segment(_client_for(raw)).status_code == 201
    _new, new_raw = api_key_rotate(api_key=key, grace=timedelta(hours=1))
    replay = create_segment(_client_for(new_raw))
    assert replay.status_code == 201 and replay["Idempotent-Replayed"] == "true"
    assert Segment.objects.count() == 1
