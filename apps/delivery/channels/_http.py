"""What the HTTP provider adapters share: one pooled session, timeouts, and the
classification of an HTTP answer into accepted / retryable / permanent.

Adapters call providers with ``requests`` and an explicit timeout. Library retries are
off: the dispatcher owns retry policy, so a 503 must come back as a retryable result
at once instead of being retried (and slept on) inside the library.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from .base import ConfigError, SendResult

DEFAULT_TIMEOUT_SECONDS = 10.0
# A permanent answer with one of these codes is the account's fault, not the message's:
# failover moves the channel to its secondary connector (apps/delivery/connectors/failover.py).
AUTH_FAILED = "auth_failed"
ACCOUNT_SUSPENDED = "account_suspended"
BODY_SNIPPET_BYTES = 4096


def connector_timeout(settings: Mapping[str, Any]) -> float:
    try:
        value = float(settings.get("timeout", DEFAULT_TIMEOUT_SECONDS))
    except (TypeError, ValueError):
        raise ConfigError("timeout must be a number of seconds", field="timeout") from None
    if not 0 < value <= 120:
        raise ConfigError("timeout must be between 0 and 120 seconds", field="timeout")
    return value


def new_session() -> requests.Session:
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=0, pool_connections=4, pool_maxsize=16)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = "Tidings/1.0"
    return session


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """``Retry-After`` as seconds: either delta-seconds or an HTTP date."""
    if not headers:
        return None
    raw = headers.get("Retry-After") or headers.get("retry-after")
    if not raw:
        return None
    raw = raw.strip()
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def classify_status(
    status: int,
    *,
    code: str = "",
    message: str = "",
    headers: Mapping[str, str] | None = None,
    details: Mapping[str, Any] | None = None,
    invalid_destination_statuses: tuple[int, ...] = (),
) -> SendResult:
    """Classify a non-2xx HTTP answer. 408/425/429/5xx retry; other 4xx are final."""
    code = code or f"http_{status}"
    message = message or f"provider answered HTTP {status}"
    extra: dict[str, Any] = {"details": dict(details or {})}
    if status == 429:
        return SendResult.retryable(code, message, throttled=True, retry_after=retry_after_seconds(headers), **extra)
    if status in (408, 409, 425) or status >= 500:
        return SendResult.retryable(code, message, retry_after=retry_after_seconds(headers), **extra)
    return SendResult.permanent(code, message, destination_invalid=status in invalid_destination_statuses, **extra)


def classify_request_error(exc: requests.RequestException) -> SendResult:
    """A transport failure: nothing was answered, so the provider may retry safely."""
    if isinstance(exc, requests.Timeout):
        return SendResult.retryable("timeout", f"provider did not answer in time: {exc}")
    if isinstance(exc, requests.ConnectionError):
        return SendResult.retryable("connection_error", f"could not reach the provider: {exc}")
    return SendResult.retryable("transport_error", str(exc))


def response_details(response: requests.Response) -> dict[str, Any]:
    """Status, headers and the first 4 KB of the body, for the attempt record."""
    return {
        "status": response.status_code,
        "headers": dict(response.headers),
        "body": response.content[:BODY_SNIPPET_BYTES].decode("utf-8", errors="replace"),
    }


def json_or_empty(response: requests.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def require(mapping: Mapping[str, Any], *names: str, kind: str = "credentials") -> None:
    for name in names:
        value = mapping.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{kind} need a non-empty {name}", field=name)


def post(session: requests.Session, url: str, *, timeout: float, **kwargs: Any) -> requests.Response | SendResult:
    """POST without following redirects; a transport failure comes back as a result."""
    try:
        return session.post(url, timeout=timeout, allow_redirects=False, **kwargs)
    except requests.RequestException as exc:
        return classify_request_error(exc)


def check_api_url(settings: Mapping[str, Any]) -> None:
    """An ``api_url`` override (EU region, proxy, emulator) is a URL we will call with the
    connector's credentials, so it gets the same SSRF guard as customer webhooks."""
    from ._netguard import UnsafeURL, check_url

    if settings.get("api_url"):
        try:
            check_url(str(settings["api_url"]))
        except UnsafeURL as exc:
            raise ConfigError(f"api_url: {exc}", field="api_url") from None
