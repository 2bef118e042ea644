"""Templates and layouts through /api/v1/: the console editor's rules, as problem+json."""

from __future__ import annotations

import json
from typing import Any

import pytest

from apps.delivery.models import Layout, Template, TemplateVersion
from apps.subscribers.models import Subscriber

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"
EMAIL = {
    "email": {
        "subject": "Hello {{ subscriber.first_name }}",
        "text": "Your code is {{ code }}.",
        "html": "<p>Your code is <b>{{ code }}</b>.</p>",
    },
    "sms": {"text": "Code {{ code }}"},
}
SHELL = '<div class="shell">{{ content }}</div>'


def problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["code"] == code, body
    return body


def create_template(client: Any, key: str = "welcome", channel: str = "email") -> Any:
    return client.post("/api/v1/templates", {"key": key, "channel": channel}, format="json")


def new_version(client: Any, content: Any, key: str = "welcome", **extra: Any) -> Any:
    return client.post(f"/api/v1/templates/{key}/versions", {"content": content, **extra}, format="json")


def test_template_create_version_publish_and_preview_round_trip(secret_client: Any, project: Any) -> None:
    Subscriber.objects.create(project=project, external_id="ada", attributes={"first_name": "Ada"})
    layout = secret_client.post("/api/v1/layouts", {"name": "Shell", "html": SHELL}, format="json")
    assert layout.status_code == 201, layout.content
    created = create_template(secret_client)
    assert created.status_code == 201, created.content
    assert created.json()["latest_version"] is None

    draft = new_version(secret_client, EMAIL, layout=layout.json()["id"], strict=True)
    assert draft.status_code == 201, draft.content
    assert draft.json()["number"] == 1 and draft.json()["published_at"] is None
    assert draft.json()["channels"] == ["email", "sms"]

    preview = secret_client.post(
        "/api/v1/templates/welcome/preview", {"data": {"code": "4242"}, "subscriber": "ada"}, format="json"
    )
    assert preview.status_code == 200, preview.content
    body = preview.json()
    assert (body["version"], body["published"]) == (1, False)
    assert body["rendered"]["email"]["subject"] == "Hello Ada"
    assert body["rendered"]["email"]["html"] == '<div class="shell"><p>Your code is <b>4242</b>.</p></div>'
    assert body["rendered"]["sms"] == {"text": "Code 4242"}

    published = secret_client.post("/api/v1/templates/welcome/versions/1/publish", format="json")
    assert published.status_code == 200, published.content
    assert published.json()["published_at"] is not None
    detail = secret_client.get("/api/v1/templates/welcome").json()
    assert (detail["latest_version"], detail["published_version"]) == (1, 1)

    second = new_version(secret_client, {"sms": {"text": "New {{ code }}"}})
    assert second.json()["number"] == 2
    old = secret_client.post(
        "/api/v1/templates/welcome/preview", {"data": {"code": "7"}, "version": 1, "subscriber": "ada"}, format="json"
    )
    assert old.json()["rendered"]["sms"] == {"text": "Code 7"} and old.json()["published"] is True
    assert secret_client.get("/api/v1/templates/welcome/versions/2").json()["content"] == {
        "sms": {"text": "New {{ code }}"}
    }
    assert [v["number"] for v in secret_client.get("/api/v1/templates/welcome/versions").json()] == [2, 1]


def test_template_and_layout_lists_page_with_a_cursor(secret_client: Any) -> None:
    for key in ("a", "b", "c"):
        create_template(secret_client, key=key)
    first = secret_client.get("/api/v1/templates?limit=2").json()
    assert [t["key"] for t in first["results"]] == ["a", "b"]
    rest = secret_client.get(f"/api/v1/templates?limit=2&cursor={first['next_cursor']}").json()
    assert [t["key"] for t in rest["results"]] == ["c"] and rest["next_cursor"] is None
    problem(secret_client.get("/api/v1/templates?cursor=bogus"), 422, "validation_error")
    misspelt = problem(secret_client.get("/api/v1/templates?limt=2"), 422, "validation_error")
    assert misspelt["errors"][0]["code"] == "unknown_parameter"
    secret_client.post("/api/v1/layouts", {"name": "One", "html": SHELL}, format="json")
    assert [la["name"] for la in secret_client.get("/api/v1/layouts").json()["results"]] == ["One"]


def test_a_taken_key_is_409_template_exists(secret_client: Any) -> None:
    create_template(secret_client)
    problem(create_template(secret_client), 409, "template_exists")


def test_a_layout_with_script_is_refused_with_the_sanitisers_code(secret_client: Any) -> None:
    html = '<div onclick="steal()">{{ content }}<script>alert(1)</script></div>'
    body = problem(
        secret_client.post("/api/v1/layouts", {"name": "Bad", "html": html}, format="json"), 422, "unsafe_layout"
    )
    assert body["findings"] and body["errors"][0]["field"] == "html"
    problem(
        secret_client.post("/api/v1/layouts", {"name": "X", "html": "<p>no slot</p>"}, format="json"),
        422,
        "invalid_layout",
    )
    assert not Layout.objects.exists()


def test_a_layout_update_is_checked_like_a_new_one(secret_client: Any) -> None:
    layout = secret_client.post("/api/v1/layouts", {"name": "Shell", "html": SHELL}, format="json").json()
    bad = {"name": "Shell", "html": "<a href='javascript:x()'>{{ content }}</a>"}
    problem(secret_client.put(f"/api/v1/layouts/{layout['id']}", bad, format="json"), 422, "unsafe_layout")
    good = {"name": "Wide", "html": '<div style="width: 100%">{{ content }}</div>'}
    assert secret_client.put(f"/api/v1/layouts/{layout['id']}", good, format="json").json()["name"] == "Wide"
    assert Layout.objects.get().html == good["html"]


def test_renaming_a_layout_to_a_taken_name_is_409_layout_exists(secret_client: Any) -> None:
    secret_client.post("/api/v1/layouts", {"name": "First", "html": SHELL}, format="json")
    second = secret_client.post("/api/v1/layouts", {"name": "Second", "html": SHELL}, format="json").json()
    renamed = secret_client.put(f"/api/v1/layouts/{second['id']}", {"name": "First", "html": SHELL}, format="json")
    problem(renamed, 409, "layout_exists")
    kept = secret_client.put(f"/api/v1/layouts/{second['id']}", {"name": "Second", "html": SHELL}, format="json")
    assert kept.status_code == 200, kept.content


def test_script_in_a_versions_email_html_is_unsafe_html(secret_client: Any) -> None:
    create_template(secret_client)
    content = {"email": {"subject": "Hi", "html": "<p>Hi</p><script>alert(1)</script>"}}
    body = problem(new_version(secret_client, content), 422, "unsafe_html")
    assert body["errors"][0]["field"] == "email.html"
    assert not TemplateVersion.objects.exists()


def test_whatsapp_without_a_template_name_is_content_incomplete(secret_client: Any) -> None:
    create_template(secret_client, channel="whatsapp")
    body = problem(new_version(secret_client, {"whatsapp": {"language": "en"}}), 422, "content_incomplete")
    assert body["errors"][0]["field"] == "whatsapp.template"


def test_unknown_channels_and_syntax_errors_are_refused(secret_client: Any) -> None:
    create_template(secret_client)
    problem(new_version(secret_client, {"fax": {"text": "x"}}), 422, "invalid_content")
    problem(new_version(secret_client, {"sms": {"text": "{% if %}"}}), 422, "template_syntax")


def test_publishing_a_draft_checks_it_again(secret_client: Any, project: Any) -> None:
    # Saved before WhatsApp needed a template name: publishing it must not let it reach senders.
    template = Template.objects.create(project=project, key="old", channel="whatsapp", name="Old")
    TemplateVersion.objects.create(project=project, template=template, number=1, content={"whatsapp": {}})
    problem(secret_client.post("/api/v1/templates/old/versions/1/publish"), 422, "content_incomplete")
    assert TemplateVersion.objects.get().published_at is None


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{% for i in range(10000) %}{{ "y" * 200 }}{% endfor %}', "template_output_too_large"),
        ("{{ range(10000000) | list }}", "template_range_too_big"),
        ('{{ "x" | center(10000000) }}', "template_too_large"),
    ],
)
def test_a_preview_over_a_render_limit_is_422_with_the_limits_code(secret_client: Any, text: str, code: str) -> None:
    create_template(secret_client, channel="sms")
    assert new_version(secret_client, {"sms": {"text": text}}).status_code == 201
    problem(secret_client.post("/api/v1/templates/welcome/preview", {}, format="json"), 422, code)


def test_a_strict_preview_names_the_missing_variable(secret_client: Any) -> None:
    create_template(secret_client, channel="sms")
    new_version(secret_client, {"sms": {"text": "Code {{ code }}"}}, strict=True)
    body = problem(
        secret_client.post("/api/v1/templates/welcome/preview", {"data": {}}, format="json"),
        422,
        "template_variable_missing",
    )
    assert body["errors"][0]["field"] == "code"


def test_preview_of_an_unknown_subscriber_or_version_is_404(secret_client: Any) -> None:
    create_template(secret_client, channel="sms")
    problem(
        secret_client.post("/api/v1/templates/welcome/preview", {}, format="json"), 404, "template_version_not_found"
    )
    new_version(secret_client, {"sms": {"text": "Hi"}})
    problem(
        secret_client.post("/api/v1/templates/welcome/preview", {"subscriber": "nobody"}, format="json"),
        404,
        "not_found",
    )
    problem(
        secret_client.post("/api/v1/templates/welcome/preview", {"version": 9}, format="json"),
        404,
        "template_version_not_found",
    )


def test_a_key_holding_a_newline_is_a_404_problem(secret_client: Any) -> None:
    problem(secret_client.post("/api/v1/templates/a%0Ab/preview", {}, format="json"), 404, "not_found")


def test_a_huge_body_is_413_and_stores_nothing(secret_client: Any) -> None:
    create_template(secret_client, channel="sms")
    response = new_version(secret_client, {"sms": {"text": "x" * (1024 * 1024 + 1)}})
    assert response.status_code == 413 and response["Content-Type"] == PROBLEM
    assert not TemplateVersion.objects.exists()
    # Under the body limit, a layout still has its own bound, far above any real email.
    huge = {"name": "Huge", "html": "{{ content }}" + "x" * 300_000}
    body = problem(secret_client.post("/api/v1/layouts", huge, format="json"), 422, "validation_error")
    assert (body["errors"][0]["field"], body["errors"][0]["code"]) == ("html", "max_length")
    assert not Layout.objects.exists()


def test_nul_in_content_is_422_invalid_character(secret_client: Any) -> None:
    create_template(secret_client, channel="sms")
    text = json.dumps({"content": {"sms": {"text": "a\\u0000b"}}}).replace("\\\\u0000", "\\u0000")
    response = secret_client.post("/api/v1/templates/welcome/versions", text.encode(), content_type="application/json")
    assert problem(response, 422, "invalid_character")["errors"][0]["field"] == "content.sms.text"
    assert not TemplateVersion.objects.exists()


def test_another_projects_key_sees_404_for_every_template_and_layout(
    secret_client: Any, other_secret_client: Any
) -> None:
    create_template(secret_client)
    new_version(secret_client, EMAIL)
    layout_id = secret_client.post("/api/v1/layouts", {"name": "Shell", "html": SHELL}, format="json").json()["id"]
    other = other_secret_client
    problem(other.get("/api/v1/templates/welcome"), 404, "template_not_found")
    problem(other.get("/api/v1/templates/welcome/versions/1"), 404, "template_not_found")
    problem(other.post("/api/v1/templates/welcome/versions/1/publish"), 404, "template_not_found")
    problem(other.post("/api/v1/templates/welcome/preview", {}, format="json"), 404, "template_not_found")
    problem(new_version(other, EMAIL), 404, "template_not_found")
    problem(other.get(f"/api/v1/layouts/{layout_id}"), 404, "layout_not_found")
    assert other.get("/api/v1/templates").json()["results"] == []
    # Its own template may not borrow this project's layout either.
    create_template(other)
    body = problem(new_version(other, EMAIL, layout=layout_id), 404, "layout_not_found")
    assert body["errors"][0]["field"] == "layout"
    assert TemplateVersion.objects.filter(published_at__isnull=True).count() == 1


def test_a_public_key_is_refused_403(public_client: Any, secret_client: Any) -> None:
    create_template(secret_client)
    assert create_template(public_client, key="mine").status_code == 403
    assert public_client.get("/api/v1/templates").status_code == 403
    assert public_client.post("/api/v1/templates/welcome/preview", {}, format="json").status_code == 403
    assert public_client.post("/api/v1/layouts", {"name": "S", "html": SHELL}, format="json").status_code == 403
    assert Template.objects.count() == 1


def test_a_read_only_key_may_preview_but_not_write(
    project: Any, make_key: Any, client_for: Any, secret_client: Any
) -> None:
    client = client_for(make_key(project, "restricted", ceiling="secret", scopes=["read"])[1])
    create_template(secret_client, channel="sms")
    new_version(secret_client, {"sms": {"text": "Hi"}})
    problem(create_template(client, key="mine"), 403, "missing_scope")
    problem(new_version(client, {"sms": {"text": "Bye"}}), 403, "missing_scope")
    assert client.post("/api/v1/templates/welcome/preview", {}, format="json").json()["rendered"] == {
        "sms": {"text": "Hi"}
    }


def test_a_repeated_idempotency_key_replays_the_version(secret_client: Any) -> None:
    create_template(secret_client, channel="sms")
    body = {"content": {"sms": {"text": "Hi"}}}
    first = secret_client.post("/api/v1/templates/welcome/versions", body, format="json", HTTP_IDEMPOTENCY_KEY="v-1")
    again = secret_client.post("/api/v1/templates/welcome/versions", body, format="json", HTTP_IDEMPOTENCY_KEY="v-1")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    assert TemplateVersion.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_creations_of_one_key_at_once_are_one_template_and_one_409(project: Any) -> None:
    """The second request's existence check runs before the first commits: the unique
    constraint decides, and the loser hears 409 template_exists, not a 500."""
    import threading

    from django.db import connection, transaction

    from apps.core.errors import Conflict
    from apps.delivery.services.templates import template_create

    first_inserted, outcomes = threading.Event(), []

    def second() -> None:
        first_inserted.wait(10)
        try:
            template_create(project=project, key="race", channel="email")
            outcomes.append("created")
        except Conflict as exc:
            outcomes.append(exc.code)
        finally:
            connection.close()

    racer = threading.Thread(target=second)
    racer.start()
    with transaction.atomic():
        template_create(project=project, key="race", channel="email")
        first_inserted.set()
        racer.join(1)  # the second insert waits on the first's row until this commits
    racer.join(10)
    assert outcomes == ["template_exists"]
    assert Template.objects.filter(project=project, key="race").count() == 1
