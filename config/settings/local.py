"""Local development and the demo: `make run`, on the embedded servers unless URLs name others.

DEBUG is off unless DJANGO_DEBUG=1: a newcomer clicking around gets Tidings' own 404 and
500 pages, and the tracebacks go to the terminal that runs `make run`."""

from __future__ import annotations

from config.env import env_bool

from .base import *  # noqa: F403

DEBUG = env_bool("DJANGO_DEBUG", False)
EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
# Uploaded files (CMS images, documents) from MEDIA_ROOT; production serves them from storage.
TIDINGS_SERVE_MEDIA = True
