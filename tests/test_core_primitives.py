from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet

from apps.core import crypto
from apps.core.limits import BodySizeLimitASGI
from apps.core.registry import Registry, RegistryError


@pytest.fixture
def fresh_keys(settings):
    def _use(keys):
        settings.TIDINGS_SECRET_KEYS = keys
        crypto.reset_keys_cache()

    yield _use
    crypto.reset_keys_cache()


def test_secrets_round_trip_and_are_not_plaintext(fresh_keys):
    fresh_keys([Fernet.generate_key().decode()])
    token = crypto.encrypt_json({"api_key": "re_live_123"})
    assert "re_live_123" not in token
    assert crypto.decrypt_json(token) == {"api_key": "re_live_123"}


def test_key_rotation_keeps_old_secrets_readable_and_reencrypts(fresh_keys):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    fresh_keys([old])
    token = crypto.encrypt_text("s3cret")
    fresh_keys([new, old])
    assert crypto.decrypt_text(token) == "s3cret"
    rotated = crypto.rotate_token(token)
    fresh_keys([new])
    assert crypto.decrypt_text(rotated) == "s3cret"
    with pytest.raises(crypto.SecretError):
        crypto.decrypt_text(token)


def test_registry_names_unknown_entries():
    registry: Registry[int] = Registry("node type")
    registry.add("wait", 1)
    with pytest.raises(RegistryError, match=r"unknown node type 'nope'.*wait"):
        registry.get("nope")
    with pytest.raises(RegistryError):
        registry.add("wait", 2)


def test_asgi_wrapper_refuses_oversized_body_before_the_app_reads_it(settings):
    settings.TIDINGS_API_MAX_BODY_BYTES = 100
    called = []

    async def app(scope, receive, send):
        called.append(scope)

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():  # pragma: no cover - must not be read
        raise AssertionError("body was read")

    scope = {"type": "http", "path": "/api/v1/notifications", "headers": [(b"content-length", b"2147483648")]}
    asyncio.run(BodySizeLimitASGI(app)(scope, receive, send))
    assert called == []
    assert sent[0]["status"] == 413
    body = json.loads(sent[1]["body"])
    assert body["code"] == "payload_too_large"
    assert body["limit"] == 100


def test_asgi_wrapper_lets_normal_requests_through(settings):
    called = []

    async def app(scope, receive, send):
        called.append(scope["path"])

    scope = {"type": "http", "path": "/api/v1/me", "headers": [(b"content-length", b"10")]}
    asyncio.run(BodySizeLimitASGI(app)(scope, None, None))
    assert called == ["/api/v1/me"]


def _settings_in_subprocess(env: dict[str, str]) -> dict:
    code = (
        "import json, django; django.setup(); from django.conf import settings as s;"
        "db = s.DATABASES['default'];"
        "print(json.dumps({'engine': db['ENGINE'], 'db': [db['HOST'], db['PORT'], db['NAME']],"
        " 'broker': s.CELERY_BROKER_URL, 'cache': s.CACHES['default']['BACKEND'],"
        " 'embedded': [s.TIDINGS_EMBEDDED_POSTGRES, s.TIDINGS_EMBEDDED_REDIS]}))"
    )
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"}}
    clean.update(env, DJANGO_SETTINGS_MODULE="config.settings.local")
    out = subprocess.run([sys.executable, "-c", code], env=clean, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_without_urls_settings_name_the_embedded_servers(tmp_path):
    result = _settings_in_subprocess({"TIDINGS_DATA_DIR": str(tmp_path), "TIDINGS_EMBEDDED_PG_PORT": "55999"})
    assert result["engine"] == "django.db.backends.postgresql"
    assert result["db"] == ["127.0.0.1", 55999, "tidings"]
    assert result["broker"] == "redis://127.0.0.1:56379/0"
    assert result["cache"].endswith("RedisCache")
    assert result["embedded"] == [True, True]


def test_production_refuses_the_embedded_servers(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.production", DJANGO_SECRET_KEY="x" * 50)
    env.update(TIDINGS_SECRET_KEYS="MEb3q3tFybFbUkZjEzvUP0nI1w_TkkIXil93dD-7SZs=", TIDINGS_DATA_DIR=str(tmp_path))
    code = "import django; django.setup()"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "DATABASE_URL must point at PostgreSQL in production." in done.stderr
    env["DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/x"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert "REDIS_URL must point at Redis in production." in done.stderr


def test_environment_selects_postgres_and_redis(tmp_path):
    result = _settings_in_subprocess(
        {
            "TIDINGS_DATA_DIR": str(tmp_path),
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/x",
            "REDIS_URL": "redis://127.0.0.1:6379/3",
        }
    )
    assert result["engine"] == "django.db.backends.postgresql"
    assert result["broker"] == "redis://127.0.0.1:6379/3"
    assert result["cache"].endswith("RedisCache")
