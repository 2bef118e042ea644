"""What every benchmark command does first: make sure its database exists and is migrated.

A benchmark runs against a database of its own (``DATABASE_URL=…``), often a fresh one.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


def bench_database_prepare() -> None:
    """Create the settings' database when the server lacks it, then apply the migrations."""
    bench_database_create()
    call_command("migrate", interactive=False, verbosity=0)


def bench_database_create() -> bool:
    """Create the settings' database when the server lacks it; answers whether it did."""
    import psycopg

    db = settings.DATABASES["default"]
    params = {
        "host": db.get("HOST") or "127.0.0.1",
        "port": db.get("PORT") or 5432,
        "user": db.get("USER") or "postgres",
    }
    if db.get("PASSWORD"):
        params["password"] = db["PASSWORD"]
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db["NAME"]]).fetchone():
            return False
        conn.execute(f'CREATE DATABASE "{db["NAME"]}"')
    return True


class BenchCommand(BaseCommand):
    """A benchmark: its database is prepared before ``handle`` (``--no-migrate`` skips it)."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> Any:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument("--no-migrate", action="store_true", help="The database is ready: skip creating/migrating.")
        return parser

    def execute(self, *args: Any, **options: Any) -> Any:
        if not options.get("no_migrate"):
            bench_database_prepare()
        return super().execute(*args, **options)
