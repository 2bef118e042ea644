"""Push through firebase-admin with the project's own service account.

One ``firebase_admin.App`` per connector (named after the connector id, rebuilt when
its credentials change), ``send_each`` in batches of up to 500. Unregistered and
invalid tokens are permanent with ``destination_invalid`` so the dispatcher
deactivates the device; unavailable, internal and quota answers are retryable and
keep the provider's ``Retry-After``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import firebase_admin
import google.auth.exceptions
from firebase_admin import credentials as fb_credentials
from firebase_admin import exceptions as fb_exceptions
from firebase_admin import messaging
from requests.adapters import HTTPAdapter

from ._http import AUTH_FAILED, check_api_url, connector_timeout, retry_after_seconds
from .base import ChannelAdapter, ConfigError, OutboundMessage, SendResult, register_adapter

FCM_BASE_URL = "https://fcm.googleapis.com"
SERVICE_ACCOUNT_FIELDS = ("project_id", "private_key", "client_email", "token_uri")

_apps_lock = threading.Lock()
_app_fingerprints: dict[str, str] = {}


def parse_service_account(raw: Any) -> dict[str, Any]:
    """The service-account JSON (text or already parsed), or a ConfigError saying why not."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ConfigError("the service account is not valid JSON", field="service_account") from None
    if not isinstance(raw, dict) or raw.get("type") != "service_account":
        raise ConfigError(
            'this is not a Firebase service-account file (expected "type": "service_account")',
            field="service_account",
        )
    missing = [name for name in SERVICE_ACCOUNT_FIELDS if not raw.get(name)]
    if missing:
        raise ConfigError(f"the service account lacks {', '.join(missing)}", field="service_account")
    try:
        fb_credentials.Certificate(raw)
    except ValueError as exc:
        raise ConfigError(f"the service account's private key is unusable: {exc}", field="service_account") from None
    return raw


def connector_app(name: str, service_account: dict[str, Any], timeout: float) -> firebase_admin.App:
    """The connector's own Firebase app, rebuilt if its service account changed."""
    fingerprint = hashlib.sha256(json.dumps([service_account, timeout], sort_keys=True).encode()).hexdigest()
    with _apps_lock:
        try:
            app = firebase_admin.get_app(name)
        except ValueError:
            app = None
        if app is not None and _app_fingerprints.get(name) != fingerprint:
            _delete_app(app)
            app = None
        if app is None:
            app = firebase_admin.initialize_app(
                fb_credentials.Certificate(service_account),
                options={"projectId": service_account["project_id"], "httpTimeout": timeout},
                name=name,
            )
            _app_fingerprints[name] = fingerprint
        return app


def _delete_app(app: firebase_admin.App) -> None:
    # delete_app closes the messaging service with asyncio.run(), which refuses to run
    # in a thread that already has an event loop (an ASGI request thread, say); a
    # short-lived thread of its own never has one.
    worker = threading.Thread(target=firebase_admin.delete_app, args=(app,), daemon=True)
    worker.start()
    worker.join(timeout=10)


def _messaging_service(app: firebase_admin.App, base_url: str) -> Any:
    # firebase-admin has no public setting for the FCM endpoint or its retry policy.
    # Point the cached service at the connector's endpoint (a proxy, or the local
    # server in tests) and turn off its internal retries: the dispatcher owns retry
    # policy, and urllib3 sleeping on Retry-After would stall a whole lane.
    service = messaging._get_messaging_service(app)
    project_id = app.project_id
    service._fcm_url = f"{base_url.rstrip('/')}/v1/projects/{project_id}/messages:send"
    no_retries = HTTPAdapter(max_retries=0, pool_connections=4, pool_maxsize=64)
    for prefix in ("http://", "https://", FCM_BASE_URL):
        service._client.session.mount(prefix, no_retries)
    return service


def build_message(message: OutboundMessage) -> messaging.Message:
    content = message.content
    notification = messaging.Notification(
        title=content.get("title") or None, body=content.get("body") or None, image=content.get("image") or None
    )
    data = {str(key): str(value) for key, value in (content.get("data") or {}).items()}
    platform = (content.get("platform") or "").lower()
    kwargs: dict[str, Any] = {}
    if platform == "ios":
        kwargs["apns"] = messaging.APNSConfig(headers={"apns-priority": "10"})
    elif platform == "android":
        kwargs["android"] = messaging.AndroidConfig(priority="high")
    elif platform == "web":
        kwargs["webpush"] = messaging.WebpushConfig(headers={"Urgency": "high"})
    with warnings.catch_warnings():
        # firebase-admin 7.7 deprecates ``token`` in favour of installation ids, but the
        # iOS / Android / web SDKs still hand devices registration tokens, which FCM v1
        # accepts as ``token``.
        warnings.filterwarnings("ignore", "Message.token is deprecated", DeprecationWarning)
        return messaging.Message(token=message.destination, notification=notification, data=data or None, **kwargs)


def classify_fcm_error(exc: BaseException) -> SendResult:
    text = str(exc)[:500]
    response = getattr(exc, "http_response", None)
    retry_after = retry_after_seconds(getattr(response, "headers", None))
    if isinstance(exc, (messaging.UnregisteredError, messaging.SenderIdMismatchError)):
        return SendResult.permanent(type(exc).__name__.removesuffix("Error").upper(), text, destination_invalid=True)
    if isinstance(exc, fb_exceptions.InvalidArgumentError):
        # FCM answers INVALID_ARGUMENT both for a malformed token and a malformed message.
        return SendResult.permanent("INVALID_ARGUMENT", text, destination_invalid="token" in text.lower())
    if isinstance(exc, messaging.ThirdPartyAuthError):
        return SendResult.permanent(AUTH_FAILED, f"APNs / web push credentials refused: {text}")
    if isinstance(exc, (fb_exceptions.UnauthenticatedError, fb_exceptions.PermissionDeniedError)):
        return SendResult.permanent(AUTH_FAILED, text)
    if isinstance(exc, (messaging.QuotaExceededError, fb_exceptions.ResourceExhaustedError)):
        return SendResult.retryable("QUOTA_EXCEEDED", text, throttled=True, retry_after=retry_after)
    if isinstance(exc, fb_exceptions.DeadlineExceededError):
        return SendResult.retryable("timeout", text)
    if isinstance(exc, fb_exceptions.FirebaseError):
        if isinstance(exc, (fb_exceptions.UnavailableError, fb_exceptions.InternalError, fb_exceptions.UnknownError)):
            return SendResult.retryable(exc.code or "UNAVAILABLE", text, retry_after=retry_after)
        return SendResult.permanent(exc.code or "FCM_ERROR", text)
    return SendResult.retryable("fcm_error", text)


def devices_deactivate(project_id: int, tokens: list[tuple[str, str]]) -> None:
    """Stop pushing to tokens FCM says are gone (the subscribers contract: push
    adapters deactivate unregistered tokens)."""
    try:
        from apps.subscribers.services import device_deactivate
    except ImportError:  # an older subscribers app without the service: same write
        from apps.subscribers.models import Device

        for token, code in tokens:
            Device.objects.for_project(project_id).filter(token=token).update(
                active=False, deactivated_reason=f"fcm: {code}"
            )
        return
    for token, code in tokens:
        device_deactivate(project=project_id, token=token, reason=f"fcm: {code}")  # type: ignore[arg-type]


@register_adapter
class FCMAdapter(ChannelAdapter):
    channel = "push"
    provider = "fcm"
    max_batch_size = 500

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        parse_service_account(credentials.get("service_account"))
        check_api_url(settings)
        connector_timeout(settings)

    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        try:
            service_account = parse_service_account(self.config.credentials.get("service_account"))
        except ConfigError as exc:
            return [SendResult.permanent("config_error", str(exc)) for _ in messages]
        name = str(self.config.connector_id or f"project-{self.config.project_id}")
        app = connector_app(name, service_account, connector_timeout(self.config.settings))
        _messaging_service(app, self.config.settings.get("api_url") or FCM_BASE_URL)
        results: list[SendResult] = []
        for start in range(0, len(messages), self.max_batch_size):
            results.extend(self._send_chunk(app, messages[start : start + self.max_batch_size]))
        gone = [(m.destination, r.code) for m, r in zip(messages, results, strict=True) if r.destination_invalid]
        if gone:
            devices_deactivate(self.config.project_id, gone)
        return results

    def _send_chunk(self, app: firebase_admin.App, chunk: Sequence[OutboundMessage]) -> list[SendResult]:
        try:
            built = [build_message(message) for message in chunk]
        except (ValueError, TypeError) as exc:
            return [SendResult.permanent("invalid_message", str(exc)) for _ in chunk]
        try:
            batch = messaging.send_each(built, app=app)
        except fb_exceptions.FirebaseError as exc:
            cause = exc.cause
            if isinstance(cause, google.auth.exceptions.RefreshError):
                # The OAuth token endpoint refused the service account.
                return [SendResult.permanent(AUTH_FAILED, str(cause)[:500]) for _ in chunk]
            if isinstance(cause, google.auth.exceptions.TransportError):
                return [SendResult.retryable("token_unavailable", str(cause)[:500]) for _ in chunk]
            return [classify_fcm_error(exc) for _ in chunk]
        return [
            SendResult.accepted(response.message_id) if response.success else classify_fcm_error(response.exception)
            for response in batch.responses
        ]
