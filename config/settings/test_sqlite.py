"""Tests of the embedded defaults (``make run``): SQLite, no Redis, filesystem broker.

Used by subprocesses that tests start with DATABASE_URL, REDIS_URL and CELERY_BROKER_URL
unset. Tables are created straight from the models (``migrate --run-syncdb``): replaying
every migration on SQLite takes longer than the tests themselves.
"""

from __future__ import annotations

from config.env import env_bool

from .local import *  # noqa: F403


class _NoMigrations(dict):
    """Every app label maps to no migration module, so syncdb creates its tables."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> None:
        return None


# Off unless a test asks for it: `make run` itself runs with DEBUG on.
DEBUG = env_bool("DJANGO_DEBUG", False)
MIGRATION_MODULES = _NoMigrations()
