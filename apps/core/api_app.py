"""A WSGI application for the API process: ``/api/v1/`` through a short middleware chain.

The public API authenticates with keys, never with sessions or CSRF tokens, and answers
JSON only; the console's middleware (sessions, CSRF, user authentication, messages,
static files, CMS redirects) costs an API request a tenth of its CPU or more and changes
none of its answers. ``ApiFirstApplication`` sends every ``/api/v1/`` request through
``settings.TIDINGS_API_MIDDLEWARE`` and everything else (console, admin, CMS, schema
documents, health) through the full ``settings.MIDDLEWARE`` stack, so a process serving
it still answers every path exactly as before.
"""

from __future__ import annotations

import functools
import select
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_started
from django.db import connections
from django.http import HttpRequest
from django.urls import ResolverMatch, URLResolver, get_resolver

API_PATH_PREFIX = "/api/v1/"


class MiddlewareListWSGIHandler(WSGIHandler):
    """Django's WSGI handler with a middleware list of its own instead of ``MIDDLEWARE``."""

    def __init__(self, middleware: list[str]) -> None:
        self.middleware = list(middleware)
        super().__init__()

    def load_middleware(self, is_async: bool = False) -> None:
        # BaseHandler reads settings.MIDDLEWARE; it runs once, at start-up, before any request.
        full = settings.MIDDLEWARE
        settings.MIDDLEWARE = self.middleware
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = full


class ApiWSGIHandler(MiddlewareListWSGIHandler):
    """The API's handler: its own middleware, and URL resolution remembered per path.

    Resolving walks every app's patterns in order; the answer depends only on the URLconf
    and the path, so the most recent paths' matches are kept (a path that resolves to
    nothing raises and is not kept; a request with its own ``urlconf`` is resolved afresh).
    """

    def resolve_request(self, request: HttpRequest) -> ResolverMatch:
        if hasattr(request, "urlconf"):
            return super().resolve_request(request)
        match = _resolve(get_resolver(), request.path_info)
        request.resolver_match = match
        return match


@functools.lru_cache(maxsize=1024)
def _resolve(resolver: URLResolver, path: str) -> ResolverMatch:
    return resolver.resolve(path)


class ApiFirstApplication:
    """Routes by path prefix to the lean API handler or the full Django handler."""

    def __init__(self, api: WSGIHandler, full: WSGIHandler) -> None:
        self.api, self.full = api, full

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        handler = self.api if environ.get("PATH_INFO", "").startswith(API_PATH_PREFIX) else self.full
        return handler(environ, start_response)


def server_hung_up(raw: Any) -> bool:
    """Whether an idle Postgres connection has been closed or written to by the server.

    Between requests nothing is owed to an idle connection; anything readable on its
    socket is the server saying goodbye (a terminated backend, a restart: an error
    message, then end of file). Costs a poll() instead of Django's SELECT 1 round trip;
    a peer that vanished without a word is only noticed by the next query, as with
    health checks off.
    """
    if raw.closed or raw.broken:
        return True
    try:
        poller = select.poll()  # not select(): no limit on the descriptor's number
        poller.register(raw.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


def drop_hung_up_connections(**kwargs: Any) -> None:
    """request_started: close Postgres connections the server hung up on (reopened lazily)."""
    for conn in connections.all(initialized_only=True):
        raw = conn.connection
        if raw is None or conn.in_atomic_block:
            continue
        if server_hung_up(raw):
            conn.close()


def api_first_application() -> ApiFirstApplication:
    from django.core.wsgi import get_wsgi_application

    full = get_wsgi_application()  # sets Django up
    # Only persistent connections (CONN_MAX_AGE None or > 0) outlive a request.
    if any(not db.get("CONN_HEALTH_CHECKS") and db.get("CONN_MAX_AGE", 0) != 0 for db in settings.DATABASES.values()):
        request_started.connect(drop_hung_up_connections, dispatch_uid="tidings-drop-hung-up-connections")
    return ApiFirstApplication(ApiWSGIHandler(settings.TIDINGS_API_MIDDLEWARE), full)
