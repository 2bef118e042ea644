"""Local development: `make run`. Embedded defaults, nothing to install but Python."""

from __future__ import annotations

from config.env import env_bool

from .base import *  # noqa: F403

DEBUG = env_bool("DJANGO_DEBUG", True)
EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
