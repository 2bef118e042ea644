"""What the delivery SQL needs to know about the database it runs on.

Postgres is the production database and its SQL stays as written. ``make run`` runs on a
SQLite file; the few statements that use Postgres-only SQL (SKIP LOCKED, jsonb_to_recordset,
unnest, COPY, arrays) have a SQLite variant chosen by ``is_sqlite()``. SQLite has a single
writer, so a plain ``UPDATE ... RETURNING`` in an IMMEDIATE transaction is already an
atomic claim. The helpers live in core so the apps below delivery can use them too.
"""

from __future__ import annotations

from apps.core.dbcompat import ids_json, is_sqlite, ts

__all__ = ["ids_json", "is_sqlite", "ts"]
