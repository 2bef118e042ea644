"""Content-Security-Policy on the console and the API, HSTS in production."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent


def directives(response: Any) -> dict[str, str]:
    policy = response["Content-Security-Policy"]
    return {part.split()[0]: part.strip() for part in policy.split(";") if part.strip()}


def test_the_api_answers_carry_a_policy_that_allows_nothing(secret_client: Any) -> None:
    for response in (secret_client.get("/api/v1/me"), secret_client.get("/api/v1/no-such-thing")):
        policy = directives(response)
        assert policy["default-src"] == "default-src 'none'"
        assert policy["frame-ancestors"] == "frame-ancestors 'none'"


def test_console_pages_allow_only_their_own_scripts(client: Any, owner: Any) -> None:
    pages = [client.get("/console/login/")]
    client.force_login(owner)
    pages += [client.get(path) for path in ("/console/keys/", "/console/subscribers/", "/console/campaigns/")]
    for response in pages:
        path = response.request["PATH_INFO"]
        assert response.status_code == 200, path
        policy = directives(response)
        assert policy["script-src"] == "script-src 'self'", path
        assert "unsafe-inline" not in policy["script-src"] and "unsafe-eval" not in response["Content-Security-Policy"]
        assert policy["object-src"] == "object-src 'none'"
        assert policy["frame-ancestors"] == "frame-ancestors 'none'"


def test_no_console_template_carries_inline_script() -> None:
    import re

    offenders = []
    for template in (ROOT / "templates").rglob("*.html"):
        if template.parts[-2] == "cms":
            continue  # Wagtail pages are served outside the console's policy
        text = template.read_text()
        if re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text) or re.search(r"\son[a-z]+=", text):
            offenders.append(str(template.relative_to(ROOT)))
    assert offenders == []


def test_the_api_docs_page_runs_under_a_policy_without_inline_script(client: Any) -> None:
    page = client.get("/api/docs/")
    assert page.status_code == 200
    assert directives(page)["script-src"] == "script-src 'self'"
    assert b"<script>" not in page.content


def test_production_settings_turn_hsts_on() -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "a-production-like-secret-key-" + "x" * 40,
        "DATABASE_URL": os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres",
        "TIDINGS_SECRET_KEYS": "zEhGgX_uEL_mqYcOGUQBhtt9J5c_lRfpZOC8P5BTigs=",
        "DJANGO_ALLOWED_HOSTS": "tidings.example",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert "security.W004" not in result.stdout + result.stderr, result.stdout + result.stderr


@pytest.mark.parametrize("header", ["bearer {key}", "BEARER {key}", "Bearer  {key}", "Bearer {key}  "])
def test_the_documented_authorization_spellings_are_accepted(client: Any, project: Any, make_key: Any, header: str):
    raw = make_key(project, "secret")[1]
    assert client.get("/api/v1/me", HTTP_AUTHORIZATION=header.format(key=raw)).status_code == 200


def test_the_openapi_document_says_which_authorization_spellings_work() -> None:
    from drf_spectacular.generators import SchemaGenerator

    scheme = SchemaGenerator().get_schema(request=None, public=True)["components"]["securitySchemes"]["ApiKey"]
    assert "case-insensitive" in scheme["description"] and "spaces" in scheme["description"]
