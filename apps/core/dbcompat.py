"""Helpers for hand-written PostgreSQL: array literals, COPY text, prepared statements."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper


def int_array(values: Iterable[int | None]) -> str:
    """A Postgres array literal of integers, None as NULL (bind it with ``::bigint[]``/``::int[]``).

    One string to bind instead of a list for the driver to dump element by element: for
    batches of a thousand ids that costs more in Python than the statement in Postgres.
    """
    return "{" + ",".join("NULL" if v is None else str(int(v)) for v in values) + "}"


def text_array(values: Iterable[str]) -> str:
    """A text[] literal: every element quoted, with its quotes and backslashes escaped."""
    return "{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
COPY_NULL = "\\N"


def copy_text(value: str) -> str:
    """One value in Postgres COPY text format.

    Hand-built COPY lines cost a fraction of psycopg's per-field ``write_row`` on hot
    paths (imports, the dispatcher's attempts and events).
    """
    return value.translate(_COPY_ESCAPES)


@contextmanager
def prepared_cursor() -> Iterator[CursorWrapper]:
    """Django's cursor, whose statements Postgres parses and plans once per connection.

    Django binds parameters on the client and never prepares (so that transaction-pooling
    proxies keep working). A hot statement run hundreds of times a second by a process
    with persistent connections pays its parse and plan every time; this cursor binds on
    the server and prepares each statement on first use, per connection. Errors are still
    wrapped and queries still logged the Django way (the SQL as written, placeholders
    included). ``DB_PREPARED_STATEMENTS=0`` (behind a proxy that cannot keep prepared
    statements): Django's own cursor.
    """
    if not getattr(settings, "TIDINGS_DB_PREPARED_STATEMENTS", False):
        with connection.cursor() as cursor:
            yield cursor
        return
    # What connection.cursor() does (health check, connect, thread check), with a
    # server-binding cursor instead of Django's client-binding one.
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # Django's default, with which psycopg prepares nothing, even when asked to.
        # A threshold no statement reaches keeps every other statement unprepared.
        raw.prepare_threshold = _NEVER_BY_COUNT
    wrapper = _LoggedAsWritten if connection.queries_logged else CursorWrapper
    with connection.wrap_database_errors:
        prepared = _prepared_cursor_class()(raw)
    with wrapper(prepared, connection) as cursor:
        yield cursor


_NEVER_BY_COUNT = 2**31 - 1


class _LoggedAsWritten(CursorDebugWrapper):
    # psycopg keeps no query text for a prepared execution to log.
    @contextmanager
    def debug_sql(
        self, sql: Any = None, params: Any = None, use_last_executed_query: bool = False, many: bool = False
    ) -> Iterator[None]:
        with super().debug_sql(sql, params, use_last_executed_query=False, many=many):
            yield


@functools.cache
def _prepared_cursor_class() -> type:
    from psycopg import Cursor

    class PreparingCursor(Cursor):
        """Server-side binding; every statement prepared on first use (psycopg caches them)."""

        def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
            return super().execute(query, params, prepare=True)

    return PreparingCursor
