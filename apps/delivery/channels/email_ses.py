"""Amazon SES (v2) through Anymail's boto3 backend, with the connector's own keys.

SES errors arrive as botocore ``ClientError`` responses (an error code plus an HTTP
status), not as HTTP responses, so they get their own classification.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from anymail.exceptions import AnymailAPIError
from botocore.exceptions import ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError

from ._http import ACCOUNT_SUSPENDED, AUTH_FAILED, check_api_url, connector_timeout, require
from .base import ConfigError, SendResult, register_adapter
from .email_anymail import AnymailEmailAdapter, _first_line, check_from_email

THROTTLING_CODES = {"TooManyRequestsException", "LimitExceededException", "ThrottlingException", "Throttling"}
ACCOUNT_CODES = {"AccountSuspendedException", "SendingPausedException"}
AUTH_CODES = {
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "SignatureDoesNotMatch",
    "AccessDeniedException",
    "IncompleteSignature",
}


@register_adapter
class AmazonSESAdapter(AnymailEmailAdapter):
    provider = "ses"
    backend_path = "anymail.backends.amazon_ses.EmailBackend"
    credential_fields = ("access_key_id", "secret_access_key")

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        require(credentials, *cls.credential_fields)
        if not isinstance(settings.get("region"), str) or not settings["region"]:
            raise ConfigError("settings need the SES region, e.g. eu-west-1", field="region")
        check_from_email(settings)
        check_api_url(settings)
        connector_timeout(settings)

    def backend_kwargs(self) -> dict[str, Any]:
        timeout = connector_timeout(self.config.settings)
        client_params: dict[str, Any] = {
            "aws_access_key_id": self.config.credentials["access_key_id"],
            "aws_secret_access_key": self.config.credentials["secret_access_key"],
            "region_name": self.config.settings.get("region"),
            # One try: the dispatcher owns retries and their backoff.
            "config": {
                "connect_timeout": timeout,
                "read_timeout": timeout,
                "retries": {"total_max_attempts": 1},
            },
        }
        if self.config.settings.get("api_url"):
            client_params["endpoint_url"] = self.config.settings["api_url"]
        kwargs: dict[str, Any] = {"client_params": client_params}
        if self.config.settings.get("configuration_set"):
            kwargs["configuration_set_name"] = self.config.settings["configuration_set"]
        return kwargs

    def classify_api_error(self, exc: AnymailAPIError) -> SendResult:
        cause = exc.__cause__
        if isinstance(cause, (ReadTimeoutError, ConnectTimeoutError)):
            return SendResult.retryable("timeout", f"SES did not answer in time: {cause}")
        if isinstance(cause, EndpointConnectionError):
            return SendResult.retryable("connection_error", str(cause))
        response = exc.response if isinstance(exc.response, dict) else {}
        error = response.get("Error") or {}
        code = str(error.get("Code") or "")
        status = int((response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or 0)
        message = str(error.get("Message") or _first_line(exc))
        if not response:
            return SendResult.retryable("transport_error", _first_line(exc))
        if code in THROTTLING_CODES or status == 429:
            return SendResult.retryable(code or "throttled", message, throttled=True)
        if code in ACCOUNT_CODES:
            return SendResult.permanent(ACCOUNT_SUSPENDED, f"{code}: {message}")
        if code in AUTH_CODES or status in (401, 403):
            return SendResult.permanent(AUTH_FAILED, f"{code}: {message}")
        if status >= 500 or status == 0:
            return SendResult.retryable(code or f"http_{status}", message)
        return SendResult.permanent(code or f"http_{status}", message)
