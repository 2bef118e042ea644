from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.governance.keys import hash_key
from apps.governance.models import ApiKey
from apps.governance.services import api_key_create, api_key_revoke, api_key_rotate

pytestmark = pytest.mark.django_db


def test_key_is_prefixed_random_and_stored_only_as_hash(project):
    key, raw = api_key_create(project=project, name="server", kind="secret")
    assert raw.startswith("sk_") and len(raw) == 46
    assert key.key_hash == hash_key(raw)
    assert key.last_four == raw[-4:]
    stored = ApiKey.objects.filter(pk=key.pk).values()[0]
    assert raw not in {str(v) for v in stored.values()}
    _, other = api_key_create(project=project, name="server", kind="secret")
    assert other != raw


@pytest.mark.parametrize(("kind", "prefix"), [("public", "pk_"), ("secret", "sk_")])
def test_each_type_has_its_prefix(project, kind, prefix):
    _, raw = api_key_create(project=project, name="k", kind=kind)
    assert raw.startswith(prefix)


def test_restricted_key_needs_scopes_within_its_ceiling(project):
    key, raw = api_key_create(project=project, name="r", kind="restricted", ceiling="public", scopes=["tags:write"])
    assert raw.startswith("rk_")
    assert key.effective_scopes() == {"tags:write"}
    with pytest.raises(ApplicationError) as outside:
        api_key_create(project=project, name="r", kind="restricted", ceiling="public", scopes=["campaigns:write"])
    assert outside.value.code == "scope_outside_ceiling"
    with pytest.raises(ApplicationError) as unknown:
        api_key_create(project=project, name="r", kind="restricted", ceiling="secret", scopes=["root:all"])
    assert unknown.value.code == "unknown_scope"
    with pytest.raises(ApplicationError):
        api_key_create(project=project, name="r", kind="restricted", ceiling="secret", scopes=[])
    assert ApiKey.objects.count() == 1


def test_me_reports_project_type_and_scopes(project, client_for):
    _, raw = api_key_create(project=project, name="app", kind="public")
    response = client_for(raw).get("/api/v1/me")
    assert response.status_code == 200
    body = response.json()
    assert body["project"]["slug"] == project.slug
    assert body["type"] == "public"
    assert body["scopes"] == ["devices:write", "subscribers:write", "tags:write"]


@pytest.mark.parametrize(
    ("header", "code"),
    [
        (None, "missing_credentials"),
        ("Basic abc", "malformed_authorization"),
        ("Bearer sk_short", "malformed_key"),
        ("Bearer sk_" + "A" * 43, "invalid_key"),
    ],
)
def test_bad_credentials_are_401_problems(client, header, code):
    kwargs = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.get("/api/v1/me", **kwargs)
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_revoked_key_is_refused_and_others_keep_working(project, client_for):
    first, raw_first = api_key_create(project=project, name="a", kind="secret")
    _, raw_second = api_key_create(project=project, name="b", kind="secret")
    api_key_revoke(api_key=first)
    refused = client_for(raw_first).get("/api/v1/me")
    assert refused.status_code == 401
    assert refused.json()["code"] == "revoked_key"
    assert client_for(raw_second).get("/api/v1/me").status_code == 200


def test_rotation_with_grace_keeps_old_key_until_it_ends(project, client_for):
    old, raw_old = api_key_create(project=project, name="srv", kind="secret")
    new, raw_new = api_key_rotate(api_key=old, grace=timedelta(hours=1))
    assert new.kind == old.kind and new.pk != old.pk
    assert client_for(raw_old).get("/api/v1/me").status_code == 200
    assert client_for(raw_new).get("/api/v1/me").status_code == 200
    ApiKey.objects.filter(pk=old.pk).update(revoked_at=timezone.now() - timedelta(seconds=1))
    response = client_for(raw_old).get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["code"] == "rotated_key"
    with pytest.raises(ApplicationError):
        api_key_rotate(api_key=ApiKey.objects.get(pk=old.pk))


def test_rotation_without_grace_ends_old_key_now(project, client_for):
    old, raw_old = api_key_create(project=project, name="srv", kind="secret")
    api_key_rotate(api_key=old)
    assert client_for(raw_old).get("/api/v1/me").json()["code"] == "rotated_key"


def test_rotating_a_restricted_key_keeps_its_scopes(project):
    old, _ = api_key_create(project=project, name="r", kind="restricted", ceiling="secret", scopes=["read"])
    new, raw = api_key_rotate(api_key=old)
    assert raw.startswith("rk_")
    assert new.ceiling == "secret" and new.scopes == ["read"]


def test_last_used_is_written_at_most_once_a_minute(project, client_for):
    key, raw = api_key_create(project=project, name="a", kind="secret")
    client = client_for(raw)
    client.get("/api/v1/me")
    key.refresh_from_db()
    first = key.last_used_at
    assert first is not None
    client.get("/api/v1/me")
    key.refresh_from_db()
    assert key.last_used_at == first


@pytest.mark.urls("tests.urls_probe")
def test_public_key_lacking_scope_gets_403_naming_it(project, client_for):
    _, raw = api_key_create(project=project, name="app", kind="public")
    response = client_for(raw).get("/api/v1/probe/publish")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "missing_scope"
    assert body["missing_scope"] == "notifications:publish"
    assert "notifications:publish" in body["detail"]


@pytest.mark.urls("tests.urls_probe")
def test_restricted_key_gets_only_its_scopes(project, client_for):
    _, raw = api_key_create(project=project, name="r", kind="restricted", ceiling="secret", scopes=["read"])
    assert client_for(raw).get("/api/v1/probe/publish").json()["code"] == "missing_scope"
    _, publisher = api_key_create(
        project=project, name="p", kind="restricted", ceiling="secret", scopes=["notifications:publish"]
    )
    assert client_for(publisher).get("/api/v1/probe/publish").status_code == 200


@pytest.mark.urls("tests.urls_probe")
def test_view_without_declared_scope_is_refused(secret_client):
    response = secret_client.get("/api/v1/probe/undeclared")
    assert response.status_code == 403
    assert response.json()["code"] == "scope_not_declared"


def test_per_key_throttle_answers_429_with_retry_after(project, client_for):
    key, raw = api_key_create(project=project, name="a", kind="secret")
    ApiKey.objects.filter(pk=key.pk).update(rate_limit_per_minute=3)
    client = client_for(raw)
    statuses = [client.get("/api/v1/me").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    response = client.get("/api/v1/me")
    assert response.json()["code"] == "rate_limited"
    assert 1 <= int(response["Retry-After"]) <= 60
    # Another key of the same project has its own budget.
    _, other = api_key_create(project=project, name="b", kind="secret")
    assert client_for(other).get("/api/v1/me").status_code == 200
