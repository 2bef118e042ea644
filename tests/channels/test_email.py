"""Anymail email adapters: credentials per connector, idempotency key, throttling."""

from __future__ import annotations

import pytest

from apps.delivery.channels.base import ConfigError, Outcome
from tests.channels import cases
from tests.channels.fakes import fake_server
from tests.channels.helpers import make_adapter, message


def case(key: str) -> cases.ProviderCase:
    return next(c for c in cases.EMAIL_CASES if c.key == key)


def test_resend_sends_the_delivery_key_as_idempotency_key_with_the_connectors_api_key() -> None:
    resend = case("email:resend")
    with fake_server(resend.responder()) as server:
        adapter = make_adapter("email:resend", {"api_key": "re_connector_a"}, resend.settings(server.url))
        adapter.send_batch(
            [message("email", "a@example.com", cases.EMAIL_CONTENT, delivery_key="notification:email:a")]
        )
    [request] = server.requests
    assert request.route == "/emails"
    assert request.header("Idempotency-Key") == "notification:email:a"
    assert request.header("Authorization") == "Bearer re_connector_a"
    assert request.json()["to"] == ["a@example.com"]


def test_throttled_answer_is_retryable_with_retry_after() -> None:
    resend = case("email:resend")
    with fake_server(resend.responder()) as server:
        adapter = make_adapter("email:resend", {"api_key": "k"}, resend.settings(server.url))
        [result] = adapter.send_batch([message("email", "retry-1@example.com", cases.EMAIL_CONTENT)])
    assert result.outcome == Outcome.RETRYABLE
    assert result.throttled
    assert result.retry_after == 7


def test_ses_signs_with_the_connectors_own_access_key() -> None:
    ses = case("email:ses")
    credentials = {"access_key_id": "AKIACONNECTORB", "secret_access_key": "s3cr3t"}
    with fake_server(ses.responder()) as server:
        adapter = make_adapter("email:ses", credentials, ses.settings(server.url))
        [result] = adapter.send_batch([message("email", "a@example.com", cases.EMAIL_CONTENT)])
    assert result.outcome == Outcome.ACCEPTED
    [request] = server.requests
    assert request.route == "/v2/email/outbound-emails"
    assert "Credential=AKIACONNECTORB/" in request.header("Authorization")
    assert request.json()["Destination"] == {"ToAddresses": ["a@example.com"]}


def test_rejected_api_key_is_a_permanent_auth_failure() -> None:
    def respond(request):  # type: ignore[no-untyped-def]
        from tests.channels.fakes import Response

        return Response(401, {"ErrorCode": 10, "Message": "Bad or missing Server API token."})

    with fake_server(respond) as server:
        adapter = make_adapter("email:postmark", {"server_token": "wrong"}, case("email:postmark").settings(server.url))
        [result] = adapter.send_batch([message("email", "a@example.com", cases.EMAIL_CONTENT)])
    assert result.outcome == Outcome.PERMANENT
    assert result.code == "auth_failed"


@pytest.mark.parametrize("key", [c.key for c in cases.EMAIL_CASES])
def test_missing_credentials_are_refused_at_save_naming_the_field(key: str) -> None:
    from apps.delivery.channels.base import adapters

    with pytest.raises(ConfigError) as error:
        adapters.get(key).validate_config({}, {"from_email": "a@tidings.test", "region": "eu-west-1"})
    assert error.value.field
