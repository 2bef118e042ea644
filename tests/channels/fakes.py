"""A small threaded HTTP server that tests script to speak a provider's API.

Each request is answered by a ``respond(request)`` callable. Requests are recorded so
tests can assert on what the real provider library actually sent.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def form(self) -> dict[str, str]:
        return {key: values[0] for key, values in parse_qs(self.text).items()}

    @property
    def route(self) -> str:
        return urlsplit(self.path).path

    def header(self, name: str) -> str:
        for key, value in self.headers.items():
            if key.lower() == name.lower():
                return value
        return ""


@dataclass
class Response:
    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        if isinstance(self.body, (dict, list)):
            headers.setdefault("Content-Type", "application/json")
            return json.dumps(self.body).encode(), headers
        if isinstance(self.body, str):
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
            return self.body.encode(), headers
        return bytes(self.body), headers


Responder = Callable[[Request], Response]


class FakeServer:
    def __init__(self, respond: Responder, tls: ssl.SSLContext | None = None) -> None:
        self.respond = respond
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Request(self.command, self.path, dict(self.headers.items()), body)
                with server._lock:
                    server.requests.append(request)
                response = server.respond(request)
                if response.delay:
                    time.sleep(response.delay)
                payload, headers = response.encoded()
                try:
                    self.send_response(response.status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            do_POST = do_GET = do_PUT = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.scheme = "http"
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"{self.scheme}://{host}:{port}"

    def start(self) -> FakeServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def fake_server(respond: Responder, tls: ssl.SSLContext | None = None) -> Iterator[FakeServer]:
    server = FakeServer(respond, tls).start()
    try:
        yield server
    finally:
        server.stop()


# Destinations carry the answer the fake provider should give, so one batch can mix them.
SLOW_DELAY = 3.0
ADAPTER_TIMEOUT = 0.4


def outcome_in(text: str) -> str:
    for marker in ("slow", "retry", "perm"):
        if f"{marker}-" in text:
            return marker
    return "ok"
