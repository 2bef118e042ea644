"""One case per real adapter: how its fake provider answers, and how to configure and
address it. The shared contract test runs every case through the same scenarios."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tests.channels.fakes import SLOW_DELAY, Request, Response, outcome_in

_ids = itertools.count(1)


@dataclass
class ProviderCase:
    key: str  # "<channel>:<provider>"
    respond: Callable[[str, Request], Response]  # (outcome, request) -> answer
    credentials: Callable[[str], dict[str, Any]]  # server url -> credentials
    settings: Callable[[str], dict[str, Any]]  # server url -> settings
    destination: Callable[[str, int, str], str]  # (outcome, n, server url) -> destination
    # A dict, or a callable of the destination when the body must carry it (Teams).
    content: Any = field(default_factory=dict)
    # Which requests carry a message (others: OAuth token, etc.).
    is_send: Callable[[Request], bool] = lambda request: True
    permanent_destination_invalid: bool = False
    # A non-HTTP protocol server (SMTP); default: a FakeServer running ``respond``.
    serve: Callable[[], AbstractContextManager[Any]] | None = None
    # Some providers (Teams, Slack incoming webhooks) answer without a message id.
    has_reference: bool = True

    @property
    def channel(self) -> str:
        return self.key.split(":")[0]

    def responder(self) -> Callable[[Request], Response]:
        def respond(request: Request) -> Response:
            if not self.is_send(request):
                return self.respond("aux", request)
            outcome = outcome_in(request.text + request.path)
            response = self.respond(outcome, request)
            if outcome == "slow":
                response.delay = SLOW_DELAY
            return response

        return respond


def email_destination(outcome: str, n: int, url: str) -> str:
    return f"{outcome}-{n}@example.com"


EMAIL_CONTENT = {"subject": "Hello", "text": "Plain body", "html": "<p>Hello</p>"}


def _email_case(
    key: str, respond: Callable[[str, Request], Response], credentials: dict[str, Any], **settings: Any
) -> ProviderCase:
    return ProviderCase(
        key=key,
        respond=respond,
        credentials=lambda url: dict(credentials),
        settings=lambda url: {"from_email": "news@mail.tidings.test", "api_url": url, **settings},
        destination=email_destination,
        content=EMAIL_CONTENT,
    )


def resend(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(
            429,
            {"statusCode": 429, "name": "rate_limit_exceeded", "message": "Too many requests"},
            {"Retry-After": "7"},
        )
    if outcome == "perm":
        return Response(422, {"statusCode": 422, "name": "validation_error", "message": "Invalid `to` field."})
    return Response(200, {"id": f"re_{next(_ids)}"})


def postmark(outcome: str, request: Request) -> Response:
    to = request.json()["To"]
    if outcome == "retry":
        return Response(503, "Service Unavailable")
    if outcome == "perm":
        return Response(
            422,
            {
                "ErrorCode": 406,
                "Message": "You tried to send to a recipient that has been marked as inactive.\n"
                f"Found inactive addresses: {to}.\n"
                "Inactive recipients are ones that have generated a hard bounce or a spam complaint. ",
            },
        )
    return Response(
        200,
        {
            "To": to,
            "SubmittedAt": "2026-11-29T23:00:00Z",
            "MessageID": f"pm-{next(_ids)}",
            "ErrorCode": 0,
            "Message": "OK",
        },
    )


def sendgrid(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(500, {"errors": [{"message": "internal error"}]})
    if outcome == "perm":
        return Response(
            400,
            {"errors": [{"message": "Does not contain a valid address.", "field": "personalizations.0.to.0.email"}]},
        )
    return Response(202, b"", {"X-Message-Id": f"sg-{next(_ids)}"})


def mailgun(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(503, "Service Unavailable")
    if outcome == "perm":
        return Response(400, {"message": "to parameter is not a valid address. please check documentation"})
    return Response(200, {"id": f"<mg-{next(_ids)}@mail.tidings.test>", "message": "Queued. Thank you."})


def brevo(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(429, {"code": "too_many_requests", "message": "slow down"}, {"Retry-After": "3"})
    if outcome == "perm":
        return Response(400, {"code": "invalid_parameter", "message": "email is not valid in to"})
    return Response(201, {"messageId": f"<br-{next(_ids)}@smtp-relay.mailin.fr>"})


def ses(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(
            429, {"message": "Maximum sending rate exceeded."}, {"x-amzn-ErrorType": "TooManyRequestsException"}
        )
    if outcome == "perm":
        return Response(400, {"message": "Email address is not verified."}, {"x-amzn-ErrorType": "MessageRejected"})
    return Response(200, {"MessageId": f"ses-{next(_ids)}"})


EMAIL_CASES = [
    _email_case("email:resend", resend, {"api_key": "re_test_key_1234"}),
    _email_case("email:postmark", postmark, {"server_token": "pm-token-1234"}),
    _email_case("email:sendgrid", sendgrid, {"api_key": "SG.key1234"}),
    _email_case("email:mailgun", mailgun, {"api_key": "key-mailgun-1234"}, domain="mail.tidings.test"),
    _email_case("email:brevo", brevo, {"api_key": "xkeysib-1234"}),
    _email_case(
        "email:ses", ses, {"access_key_id": "AKIATEST1234", "secret_access_key": "secret/1234"}, region="eu-west-1"
    ),
]
# Postmark answers "inactive recipient" for a refused address: the destination is gone.
EMAIL_CASES[1].permanent_destination_invalid = True


def _smtp_case() -> ProviderCase:
    from tests.channels.smtp_server import PASSWORD, USERNAME, self_signed_certificate, smtp_server

    def settings(url: str) -> dict[str, Any]:
        host, port = url.rsplit(":", 1)
        return {
            "host": host,
            "port": int(port),
            "security": "starttls",
            "domain": "tidings.test",
            "from_email": "news@mail.tidings.test",
            "ca_certificate": self_signed_certificate()[0],
        }

    return ProviderCase(
        key="email:smtp",
        respond=lambda outcome, request: Response(),
        credentials=lambda url: {"username": USERNAME, "password": PASSWORD},
        settings=settings,
        destination=email_destination,
        content=EMAIL_CONTENT,
        permanent_destination_invalid=True,
        serve=smtp_server,
    )


ALL_CASES = [*EMAIL_CASES, _smtp_case()]


# --- Push: FCM v1 and the OAuth token endpoint on one local server ---------------------


@lru_cache(maxsize=1)
def _rsa_private_key_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def service_account(url: str, project_id: str = "tidings-test") -> dict[str, Any]:
    return {
        "type": "service_account",
        "project_id": project_id,
        "private_key_id": "key-1",
        "private_key": _rsa_private_key_pem(),
        "client_email": f"push@{project_id}.iam.gserviceaccount.com",
        "client_id": "1234567890",
        "token_uri": f"{url}/token",
    }


def fcm_error(status: int, rpc_status: str, message: str, fcm_code: str = "") -> dict[str, Any]:
    error: dict[str, Any] = {"code": status, "message": message, "status": rpc_status}
    if fcm_code:
        error["details"] = [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcm_code}]
    return {"error": error}


def fcm(outcome: str, request: Request) -> Response:
    if outcome == "aux":  # google-auth exchanging the signed JWT for an access token
        return Response(200, {"access_token": "ya29.local-token", "expires_in": 3600, "token_type": "Bearer"})
    if outcome == "retry":
        return Response(
            503, fcm_error(503, "UNAVAILABLE", "The service is currently unavailable."), {"Retry-After": "12"}
        )
    if outcome == "perm":
        return Response(404, fcm_error(404, "NOT_FOUND", "Requested entity was not found.", "UNREGISTERED"))
    project = request.route.split("/")[3]
    return Response(200, {"name": f"projects/{project}/messages/{next(_ids)}"})


FCM_CASE = ProviderCase(
    key="push:fcm",
    respond=fcm,
    credentials=lambda url: {"service_account": service_account(url)},
    settings=lambda url: {"api_url": url},
    destination=lambda outcome, n, url: f"{outcome}-token-{n}",
    content={"title": "Hi", "body": "You have mail", "data": {"n": 1}, "platform": "android"},
    is_send=lambda request: request.route.endswith("messages:send"),
    permanent_destination_invalid=True,
)
ALL_CASES.append(FCM_CASE)


# --- SMS, WhatsApp, Slack, Teams, outgoing webhooks -------------------------------------


def twilio(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(429, {"code": 20429, "message": "Too Many Requests", "status": 429}, {"Retry-After": "2"})
    if outcome == "perm":
        return Response(400, {"code": 21211, "message": "The 'To' number is not a valid phone number.", "status": 400})
    return Response(201, {"sid": f"SM{next(_ids):032d}", "status": "queued", "to": request.form()["To"]})


def whatsapp(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(
            400,
            {
                "error": {
                    "message": "(#130429) Rate limit hit",
                    "type": "OAuthException",
                    "code": 130429,
                    "fbtrace_id": "A1",
                }
            },
        )
    if outcome == "perm":
        error = {
            "message": "(#132001) Template name does not exist in the translation",
            "type": "OAuthException",
            "code": 132001,
        }
        return Response(404, {"error": error})
    to = request.json()["to"]
    return Response(
        200,
        {
            "messaging_product": "whatsapp",
            "contacts": [{"input": to, "wa_id": to}],
            "messages": [{"id": f"wamid.{next(_ids)}"}],
        },
    )


def slack(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "5"})
    if outcome == "perm":
        return Response(200, {"ok": False, "error": "channel_not_found"})
    return Response(200, {"ok": True, "channel": request.json()["channel"], "ts": f"1700000000.{next(_ids):06d}"})


def teams(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(429, "Microsoft Teams endpoint returned HTTP error 429", {"Retry-After": "4"})
    if outcome == "perm":
        return Response(400, "Bad payload received by generic incoming webhook.")
    return Response(202, b"")


def webhook(outcome: str, request: Request) -> Response:
    if outcome == "retry":
        return Response(503, "maintenance", {"Retry-After": "60"})
    if outcome == "perm":
        return Response(410, {"error": "endpoint disabled"})
    return Response(200, {"received": True}, {"X-Receiver": "tests"})


OTHER_CASES = [
    ProviderCase(
        key="sms:twilio",
        respond=twilio,
        credentials=lambda url: {"account_sid": "AC0123456789", "auth_token": "twilio-token-1234"},
        settings=lambda url: {"api_url": url, "from_number": "+15550000000"},
        destination=lambda outcome, n, url: f"+1555{n:07d}" if outcome == "ok" else f"{outcome}-+1555{n:07d}",
        content={"text": "Your code is 123456"},
        permanent_destination_invalid=True,
    ),
    ProviderCase(
        key="whatsapp:cloudapi",
        respond=whatsapp,
        credentials=lambda url: {"access_token": "EAAG-token-1234", "app_secret": "app-secret-1234"},
        settings=lambda url: {"api_url": url, "phone_number_id": "1055512345"},
        destination=lambda outcome, n, url: f"{outcome}-31612345{n:03d}",
        content={"template": "order_shipped", "language": "en_US", "variables": ["Ada", "#1234"]},
    ),
    ProviderCase(
        key="slack:slack",
        respond=slack,
        credentials=lambda url: {"bot_token": "xoxb-1234-abcd"},
        settings=lambda url: {"api_url": url},
        destination=lambda outcome, n, url: f"{outcome}-C0{n}",
        content={
            "text": "Deploy finished",
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*Deploy* finished"}}],
        },
        permanent_destination_invalid=True,
    ),
    ProviderCase(
        key="teams:teams",
        respond=teams,
        credentials=lambda url: {"webhook_url": f"{url}/workflows/incoming?sig=abc"},
        settings=lambda url: {},
        destination=lambda outcome, n, url: f"{outcome}-channel-{n}",
        content=lambda destination: {"text": f"Alert for {destination}"},
        has_reference=False,
    ),
    ProviderCase(
        key="webhook:webhook",
        respond=webhook,
        credentials=lambda url: {"secrets": ["whsec_" + "c2VjcmV0LW9uZS0xMjM0NTY3ODkw"]},
        settings=lambda url: {},
        destination=lambda outcome, n, url: f"{url}/hooks/{outcome}-{n}",
        content={"body": {"event": "order.shipped", "order": 1234}},
        permanent_destination_invalid=True,
    ),
]
ALL_CASES.extend(OTHER_CASES)
