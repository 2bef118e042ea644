"""bench_publish's load generator sends real, complete HTTP requests (pre-built or not)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from apps.notifications.bench.loadgen import drive

SEEN: list[tuple[dict[str, str], bytes]] = []


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the API server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        SEEN.append((dict(self.headers.items()), body))
        answer = b'{"id":1,"state":"accepted"}'
        self.send_response(202)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    SEEN.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def body(i: int) -> dict[str, Any]:
    return {"template": "bench", "to": [f"bench-{i}"], "n": i}


def test_prebuilt_requests_carry_their_headers_and_bodies(server: str) -> None:
    result = drive(server, "/api/v1/notifications", body, {"Authorization": "Bearer k"}, rate=200, seconds=0.5)
    assert len(result.ok()) == 100 and not result.errors
    bodies = sorted(json.loads(raw)["n"] for _, raw in SEEN)
    assert bodies == list(range(100))
    for headers, raw in SEEN:
        assert headers["Authorization"] == "Bearer k" and headers["Content-Type"] == "application/json"
        assert int(headers["Content-Length"]) == len(raw)


def test_a_fresh_idempotency_key_per_request_is_still_sent(server: str) -> None:
    counter = iter(range(1000))

    class Keyed(dict):
        def items(self) -> Any:
            return [("Authorization", "Bearer k"), ("Idempotency-Key", f"k-{next(counter)}")]

    result = drive(server, "/api/v1/notifications", body, Keyed(), rate=None, seconds=0.3, concurrency=4)
    assert result.ok() and not result.errors
    keys = [headers["Idempotency-Key"] for headers, _ in SEEN]
    assert len(keys) == len(set(keys)) == len(SEEN)
