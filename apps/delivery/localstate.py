"""Redis stand-ins for running without servers (``make run``: SQLite, no REDIS_URL).

The dispatcher keeps three small pieces of shared state in Redis: token buckets, the
dry-run provider's accepted delivery keys and per-account send counters. Without
REDIS_URL they live in a SQLite file of their own next to the database (hashes with an
expiry per key), so web, worker and beat processes share them. Each operation runs in a
``BEGIN IMMEDIATE`` transaction: SQLite's single writer makes a read-modify-write as
atomic as the Lua scripts it replaces. Correctness over speed; Postgres deployments
never touch this module.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (
    key TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, field)
);
CREATE TABLE IF NOT EXISTS kv_expiry (key TEXT PRIMARY KEY, expires_at REAL NOT NULL);
"""

_local = threading.local()


def enabled() -> bool:
    """True when there is no Redis to talk to."""
    return not settings.REDIS_URL


def _connection() -> sqlite3.Connection:
    path = str(settings.DATA_DIR / "delivery-state.sqlite3")
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None or getattr(_local, "path", None) != path:
        conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(_SCHEMA)
        _local.conn, _local.path = conn, path
    return conn


@contextmanager
def atomic() -> Iterator[sqlite3.Connection]:
    """One write transaction; expired keys are dropped first so reads never see them."""
    conn = _connection()
    conn.execute("BEGIN IMMEDIATE")
    try:
        now = time.time()
        conn.execute("DELETE FROM kv WHERE key IN (SELECT key FROM kv_expiry WHERE expires_at <= ?)", [now])
        conn.execute("DELETE FROM kv_expiry WHERE expires_at <= ?", [now])
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def hgetall(conn: sqlite3.Connection, key: str) -> dict[str, str]:
    return dict(conn.execute("SELECT field, value FROM kv WHERE key = ?", [key]).fetchall())


def hget(conn: sqlite3.Connection, key: str, field: str) -> str | None:
    row = conn.execute("SELECT value FROM kv WHERE key = ? AND field = ?", [key, field]).fetchone()
    return row[0] if row else None


def hset(conn: sqlite3.Connection, key: str, mapping: dict[str, object]) -> None:
    conn.executemany(
        "INSERT INTO kv (key, field, value) VALUES (?, ?, ?)"
        " ON CONFLICT (key, field) DO UPDATE SET value = excluded.value",
        [(key, field, str(value)) for field, value in mapping.items()],
    )


def hincrby(conn: sqlite3.Connection, key: str, field: str, amount: int) -> None:
    conn.execute(
        "INSERT INTO kv (key, field, value) VALUES (?, ?, ?)"
        " ON CONFLICT (key, field) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + ? AS TEXT)",
        [key, field, str(amount), amount],
    )


def expire(conn: sqlite3.Connection, key: str, seconds: float) -> None:
    conn.execute(
        "INSERT INTO kv_expiry (key, expires_at) VALUES (?, ?)"
        " ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at",
        [key, time.time() + seconds],
    )


def delete(conn: sqlite3.Connection, *keys: str) -> None:
    for key in keys:
        conn.execute("DELETE FROM kv WHERE key = ?", [key])
        conn.execute("DELETE FROM kv_expiry WHERE key = ?", [key])


def set_nx(key: str, seconds: float) -> bool:
    """Redis ``SET key 1 NX EX``: True when the flag was not set yet."""
    with atomic() as conn:
        if hget(conn, key, "") is not None:
            return False
        hset(conn, key, {"": 1})
        expire(conn, key, seconds)
        return True


def delete_now(*keys: str) -> None:
    with atomic() as conn:
        delete(conn, *keys)
