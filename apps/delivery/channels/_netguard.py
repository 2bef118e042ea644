"""SSRF guard for URLs that customers give us (outgoing webhooks, chat webhooks).

A URL whose host resolves to a private, loopback, link-local, reserved or multicast
address is refused, unless ``TIDINGS_WEBHOOK_ALLOW_PRIVATE`` is set (local development
and tests). Redirects are never followed by the callers, so a public URL cannot bounce
a request inward.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings


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


def check_url(url: str, *, resolve: bool = True) -> None:
    """Raise ``UnsafeURL`` saying why ``url`` may not be called."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeURL("the URL must be an absolute http(s) URL")
    if parts.username or parts.password:
        raise UnsafeURL("the URL must not embed credentials")
    if getattr(settings, "TIDINGS_WEBHOOK_ALLOW_PRIVATE", False):
        return
    host = parts.hostname
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        if not resolve:
            return
        try:
            infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80))
        except (socket.gaierror, UnicodeError):
            raise UnsafeURL(f"the host {host} does not resolve") from None
        addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
    for address in addresses:
        if _forbidden(address):
            raise UnsafeURL(f"{host} resolves to {address}, a private, loopback or link-local address")
