"""The per-key budget reserved in chunks: exact in total, one Redis round trip per chunk."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from django.core.cache import cache

from apps.governance import throttling


@pytest.fixture
def counter() -> Iterator[str]:
    name = f"throttle-test:{uuid.uuid4().hex}"
    yield name
    throttling._reserved.pop(name, None)


def _stored(counter: str) -> int:
    return int(cache.get(counter) or 0)


def test_a_small_budget_is_counted_request_by_request(counter: str) -> None:
    assert [throttling.admit(counter, 3) for _ in range(4)] == [True, True, True, False]
    assert _stored(counter) == 4
    assert counter not in throttling._reserved


def test_a_large_budget_asks_redis_once_per_chunk(counter: str) -> None:
    # 12,000 a minute: chunks of 12.
    assert all(throttling.admit(counter, 12_000) for _ in range(24))
    assert _stored(counter) == 24
    assert throttling._reserved[counter] == 0
    assert throttling.admit(counter, 12_000)
    assert _stored(counter) == 36
    assert throttling._reserved[counter] == 11


def test_processes_sharing_a_budget_never_admit_more_than_it(counter: str, monkeypatch: pytest.MonkeyPatch) -> None:
    limit, chunk = 5_000, 5
    processes: list[dict[str, int]] = [{}, {}, {}]
    admitted = 0
    for i in range(limit + 2_000):
        # Each "process" holds its own reservations; they take turns unevenly.
        monkeypatch.setattr(throttling, "_reserved", processes[(i * 7 // 3) % 3])
        admitted += throttling.admit(counter, limit)
    assert admitted <= limit
    # Only tokens the other processes still hold unused were refused early.
    assert admitted >= limit - 2 * (chunk - 1)
    unused = sum(p.get(counter, 0) for p in processes)
    assert admitted + unused == limit
