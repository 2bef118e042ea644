"""An open-loop HTTP load generator for ``bench_publish``.

Requests are scheduled at a fixed rate whatever the server does (open loop), so a slow
server shows up as latency rather than as a politely lower request rate. The default
client is a minimal keep-alive HTTP/1.1 client on asyncio streams: the generator shares
the machine's two cores with the server, Postgres and the workers, and a full client
library costs several times more CPU per request. ``--client httpx`` uses httpx instead.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Sample:
    status: int
    latency: float  # send -> full response, seconds
    queued: float  # scheduled -> full response (includes waiting for a free connection)
    body: bytes
    done_at: float


@dataclass
class RunResult:
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Scheduled requests never sent because the server was already too far behind.
    shed: int = 0
    started: float = 0.0
    finished: float = 0.0

    @property
    def elapsed(self) -> float:
        return max(self.finished - self.started, 1e-9)

    def ok(self, status: int = 202) -> list[Sample]:
        return [s for s in self.samples if s.status == status]


class RawConnection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def _open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def request(self, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        """The whole request, head and body, as sent."""
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n"
        )
        return head.encode() + body

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        return await self.send(self.request(path, body, headers))

    async def send(self, request: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            await self._open()
        assert self.reader is not None and self.writer is not None
        self.writer.write(request)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        status = int(raw[9:12])
        length, close = 0, False
        for line in raw.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value.strip())
            elif name == b"connection" and value.strip().lower() == b"close":
                close = True
        payload = await self.reader.readexactly(length) if length else b""
        if close:
            self.writer.close()
            self.writer = self.reader = None
        return status, payload

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _drive(
    base_url: str,
    path: str,
    make_body: Callable[[int], dict[str, Any]],
    headers: dict[str, str],
    *,
    rate: float | None,
    seconds: float,
    concurrency: int,
    client: str,
    max_lag: float,
) -> RunResult:
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    result = RunResult()
    counter = itertools.count()
    queue: asyncio.Queue[tuple[int, float] | None] = asyncio.Queue()
    bodies = [json.dumps(make_body(i)).encode() for i in range(int((rate or 20000) * seconds) + concurrency)]
    # Fixed headers: every request's bytes are built before the clock starts, so the
    # generator spends its CPU on sockets and timing only (a fresh Idempotency-Key per
    # request, when asked for, is still built as it is sent).
    fixed = type(headers) is dict and client == "raw"
    prebuilt = [RawConnection(host, port).request(path, body, headers) for body in bodies] if fixed else []
    httpx_client = None
    if client == "httpx":
        import httpx

        httpx_client = httpx.AsyncClient(
            base_url=base_url,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
            timeout=30,
        )

    async def worker() -> None:
        conn = RawConnection(host, port)
        try:
            while True:
                job = await queue.get() if rate else (next(counter), time.perf_counter())
                if job is None:
                    return
                index, scheduled = job
                if rate and time.perf_counter() - scheduled > max_lag:
                    result.shed += 1
                    continue
                if not rate and time.perf_counter() - result.started >= seconds:
                    return
                if index >= len(bodies):
                    return
                request_headers = {} if prebuilt else dict(headers.items())  # a fresh Idempotency-Key if asked
                sent = time.perf_counter()
                try:
                    if httpx_client is not None:
                        response = await httpx_client.post(
                            path, content=bodies[index], headers={"Content-Type": "application/json", **request_headers}
                        )
                        status, payload = response.status_code, response.content
                    elif prebuilt:
                        status, payload = await conn.send(prebuilt[index])
                    else:
                        status, payload = await conn.post(path, bodies[index], request_headers)
                except (OSError, asyncio.IncompleteReadError) as exc:
                    result.errors.append(f"{type(exc).__name__}: {exc}")
                    conn.close()
                    conn = RawConnection(host, port)
                    continue
                done = time.perf_counter()
                result.samples.append(Sample(status, done - sent, done - scheduled, payload, time.time()))
        finally:
            conn.close()

    result.started = time.perf_counter()
    workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
    if rate:
        total = int(rate * seconds)
        for index in range(total):
            due = result.started + index / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            queue.put_nowait((index, due))
        for _ in workers:
            queue.put_nowait(None)
    await asyncio.gather(*workers)
    result.finished = time.perf_counter()
    if httpx_client is not None:
        await httpx_client.aclose()
    return result


def drive(
    base_url: str,
    path: str,
    make_body: Callable[[int], dict[str, Any]],
    headers: dict[str, str],
    *,
    rate: float | None,
    seconds: float,
    concurrency: int = 64,
    client: str = "raw",
    max_lag: float = 5.0,
) -> RunResult:
    """``rate=None`` is a closed loop: every connection sends its next request at once.

    In an open loop, a request that could not even be sent ``max_lag`` seconds after its
    slot is shed (counted, not sent), so an overloaded server ends the run in bounded time.
    """
    return asyncio.run(
        _drive(
            base_url,
            path,
            make_body,
            headers,
            rate=rate,
            seconds=seconds,
            concurrency=concurrency,
            client=client,
            max_lag=max_lag,
        )
    )


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]
