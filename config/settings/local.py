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
# `make run`: account email goes to the dry-run connector, so the "Sent mail" page is
# where a newcomer finds the verification link; open to anyone here.
TIDINGS_SENT_MAIL_PUBLIC = env_bool("TIDINGS_SENT_MAIL_PUBLIC", True)
MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = True
