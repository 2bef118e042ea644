"""Who is asking: the client address of a request, proxies taken into account."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_ip_address(request: HttpRequest) -> str | None:
    """The address that reached the outermost trusted proxy, or the socket's peer.

    Only the last ``TIDINGS_TRUSTED_PROXY_COUNT`` entries of X-Forwarded-For were written
    by our own proxies; anything left of them came from the client and may be forged.
    """
    trusted = int(getattr(settings, "TIDINGS_TRUSTED_PROXY_COUNT", 0))
    if trusted > 0:
        hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
        if len(hops) >= trusted:
            return hops[-trusted]
    return request.META.get("REMOTE_ADDR") or None
