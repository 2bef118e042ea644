"""SSRF guard for URLs that customers give us (outgoing webhooks, chat webhooks).

A URL whose host resolves to a private, loopback, link-local, reserved or multicast
address is refused, unless ``TIDINGS_WEBHOOK_ALLOW_PRIVATE`` is set (local development
and tests). Redirects are never followed by the callers, so a public URL cannot bounce
a request inward.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter


class UnsafeURL(ValueError):
    """The URL is malformed or points somewhere Tidings must not send requests."""


def _forbidden(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
    )


def check_url(url: str, *, resolve: bool = True) -> list[str]:
    """Raise ``UnsafeURL`` saying why ``url`` may not be called; otherwise the vetted
    addresses its host resolves to (empty when not resolved), to connect to exactly those."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeURL("the URL must be an absolute http(s) URL")
    if parts.username or parts.password:
        raise UnsafeURL("the URL must not embed credentials")
    allow_private = getattr(settings, "TIDINGS_WEBHOOK_ALLOW_PRIVATE", False)
    host = parts.hostname
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        if not resolve:
            return []
        try:
            infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80))
        except (socket.gaierror, UnicodeError):
            if allow_private:
                return []
            raise UnsafeURL(f"the host {host} does not resolve") from None
        addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
    if not allow_private:
        for address in addresses:
            if _forbidden(address):
                raise UnsafeURL(f"{host} resolves to {address}, a private, loopback or link-local address")
    return [str(address) for address in addresses]


class _PinnedTLSAdapter(HTTPAdapter):
    """Connects to a vetted IP while verifying the certificate (and sending SNI) for
    the URL's real host name."""

    def __init__(self, hostname: str) -> None:
        self._hostname = hostname
        super().__init__(max_retries=0)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        pool_kwargs["server_hostname"] = self._hostname
        pool_kwargs["assert_hostname"] = self._hostname
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)


def pinned_request(url: str, address: str, session: requests.Session) -> tuple[str, dict[str, str]]:
    """The URL to request so the connection goes to ``address`` (not to whatever the
    name resolves to a moment later: DNS rebinding), and the Host header to send."""
    parts = urlsplit(url)
    ip_host = f"[{address}]" if ":" in address else address
    netloc = ip_host + (f":{parts.port}" if parts.port else "")
    if parts.scheme == "https":
        session.mount(f"https://{netloc}/", _PinnedTLSAdapter(parts.hostname or ""))
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")), {"Host": parts.netloc}
