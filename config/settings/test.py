"""Tests: real PostgreSQL and Redis (127.0.0.1), never eager Celery."""

from __future__ import annotations

import os

# Tests always talk to real servers; these defaults match `make test`.
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/tidings")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
os.environ.setdefault("CACHE_KEY_PREFIX", "tidings-test")

from config.env import env_int, env_str

from .base import *  # noqa: F403
from .base import DATABASES

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
DATABASES["default"]["CONN_MAX_AGE"] = 0
# Several test runs may share one server: each can name its own test database.
DATABASES["default"]["TEST"] = {"NAME": env_str("TIDINGS_TEST_DB_NAME", "test_tidings")}
TIDINGS_SECRET_KEYS = ["MEb3q3tFybFbUkZjEzvUP0nI1w_TkkIXil93dD-7SZs="]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
CELERY_TASK_ALWAYS_EAGER = False
# Tests size their batches with TIDINGS_DISPATCH_BATCH_SIZE, for every lane alike.
TIDINGS_DISPATCH_BULK_BATCH_SIZE = env_int("TIDINGS_DISPATCH_BULK_BATCH_SIZE", 0)
