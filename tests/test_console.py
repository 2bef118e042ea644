from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from apps.governance.models import ApiKey
from apps.governance.services import api_key_create
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def login(client, user):
    # Through the sign-in page: the sign-in lock's backend needs the request.
    response = client.post("/console/login/", {"login": user.email, "password": "correct-horse-battery"})
    assert response.status_code == 302


def test_console_requires_sign_in(client):
    response = client.get("/console/")
    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/")


def test_member_sees_own_project_and_keys_page(client, project, owner):
    login(client, owner)
    page = client.get("/console/keys/")
    assert page.status_code == 200
    assert project.name.encode() in page.content


def test_owner_creates_a_key_shown_once(client, project, owner):
    login(client, owner)
    response = client.post("/console/keys/", {"name": "backend", "kind": "secret"}, follow=True)
    assert response.status_code == 200
    key = ApiKey.objects.get(project=project, name="backend")
    raw = response.context["new_key"]["raw"]
    assert raw.startswith("sk_") and raw.endswith(key.last_four)
    again = client.get("/console/keys/")
    assert raw.encode() not in again.content
    assert key.masked.encode() in again.content


def test_restricted_key_without_scopes_is_a_form_error(client, project, owner):
    login(client, owner)
    response = client.post("/console/keys/", {"name": "r", "kind": "restricted", "ceiling": "public"})
    assert response.status_code == 400
    assert "Choose at least one scope" in response.content.decode()
    assert not ApiKey.objects.filter(project=project).exists()


def test_restricted_key_outside_ceiling_is_a_form_error(client, project, owner):
    login(client, owner)
    response = client.post(
        "/console/keys/", {"name": "r", "kind": "restricted", "ceiling": "public", "scopes": ["campaigns:write"]}
    )
    assert response.status_code == 400
    assert "not within the public ceiling" in response.content.decode()
    assert not ApiKey.objects.exists()


def test_viewer_cannot_create_or_revoke_keys(client, project):
    viewer = MembershipFactory(organization=project.organization, role="viewer").user
    key, _ = api_key_create(project=project, name="k", kind="secret")
    login(client, viewer)
    assert client.post("/console/keys/", {"name": "x", "kind": "secret"}).status_code == 403
    assert client.post(f"/console/keys/{key.pk}/revoke/").status_code == 403
    key.refresh_from_db()
    assert key.revoked_at is None
    assert ApiKey.objects.count() == 1


def test_revoking_another_projects_key_is_404(client, project, owner):
    foreign, _ = api_key_create(project=ProjectFactory(), name="theirs", kind="secret")
    login(client, owner)
    assert client.post(f"/console/keys/{foreign.pk}/revoke/").status_code == 404
    foreign.refresh_from_db()
    assert foreign.revoked_at is None


def test_rotate_with_grace_keeps_old_key_expiring(client, project, owner):
    key, _ = api_key_create(project=project, name="srv", kind="secret")
    login(client, owner)
    response = client.post(f"/console/keys/{key.pk}/rotate/", {"grace": "3600"}, follow=True)
    key.refresh_from_db()
    assert key.status == "expiring"
    assert response.context["new_key"]["raw"].startswith("sk_")


def test_switcher_only_switches_to_member_projects(client, project, owner):
    second = ProjectFactory(organization=project.organization, name="Second")
    stranger = ProjectFactory(name="Stranger")
    login(client, owner)
    client.post("/console/switch-project/", {"project": second.pk})
    assert client.get("/console/").context["current_project"] == second
    client.post("/console/switch-project/", {"project": stranger.pk})
    assert client.get("/console/").context["current_project"] == second


def test_user_without_membership_sees_no_project_page(client, django_user_model):
    UserFactory(username="lonely", email="lonely@example.com")
    client.post("/console/login/", {"login": "lonely@example.com", "password": "correct-horse-battery"})
    assert client.get("/console/").status_code == 403


def test_demo_command_is_idempotent_and_its_keys_work(client_for):
    first, second = StringIO(), StringIO()
    call_command("demo", json=True, stdout=first)
    call_command("demo", json=True, stdout=second)
    one, two = json.loads(first.getvalue()), json.loads(second.getvalue())
    assert one == two
    assert {"project", "username", "password", "public_key", "secret_key"} <= set(one)
    me = client_for(one["secret_key"]).get("/api/v1/me").json()
    assert me["type"] == "secret" and me["project"]["slug"] == one["project"]
    assert client_for(one["public_key"]).get("/api/v1/me").json()["type"] == "public"
    assert ApiKey.objects.count() == 2


def test_wagtail_home_and_admin_are_wired(client, django_user_model):
    assert client.get("/").status_code == 200
    assert b"Tidings" in client.get("/").content
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "correct-horse-battery")
    client.force_login(admin)
    assert client.get("/cms/").status_code == 200
    assert client.get("/admin/governance/apikey/").status_code == 200


def test_admin_creates_key_with_validated_scopes(client, project, django_user_model):
    admin = django_user_model.objects.create_superuser("root2", "r@example.com", "correct-horse-battery")
    client.force_login(admin)
    bad = client.post(
        "/admin/governance/apikey/add/",
        {"project": project.pk, "name": "r", "kind": "restricted", "ceiling": "public", "scopes": '["read"]'},
    )
    assert bad.status_code == 200
    assert "not within the public ceiling" in bad.content.decode()
    assert not ApiKey.objects.exists()
    good = client.post("/admin/governance/apikey/add/", {"project": project.pk, "name": "s", "kind": "secret"})
    assert good.status_code == 302
    key = ApiKey.objects.get(name="s")
    assert key.scopes and key.key_hash
