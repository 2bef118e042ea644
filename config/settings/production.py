"""Production: every secret must come from the environment."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_str

from .base import *  # noqa: F403
from .base import SECRET_KEY, TIDINGS_EMBEDDED_POSTGRES, TIDINGS_EMBEDDED_REDIS, TIDINGS_SECRET_KEYS

DEBUG = False
if SECRET_KEY.startswith("insecure-"):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set in production.")
# The embedded servers are for development and the demo.
if TIDINGS_EMBEDDED_POSTGRES:
    raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL in production.")
if TIDINGS_EMBEDDED_REDIS:
    raise ImproperlyConfigured("REDIS_URL must point at Redis in production.")
if not TIDINGS_SECRET_KEYS:
    raise ImproperlyConfigured("TIDINGS_SECRET_KEYS must hold at least one Fernet key in production.")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0)
STORAGES = {
    "default": {"BACKEND": env_str("TIDINGS_FILE_STORAGE", "storages.backends.s3.S3Storage")},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
