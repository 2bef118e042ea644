"""SMS, WhatsApp, Slack, Teams and outgoing webhooks: what goes over the wire."""

from __future__ import annotations

import base64
import json

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from apps.delivery.channels.base import ConfigError, Outcome, adapters
from apps.delivery.channels.webhook_out import sign
from tests.channels.fakes import Request, Response, fake_server
from tests.channels.helpers import make_adapter, message

SECRET_OLD = "whsec_" + base64.b64encode(b"old-secret-0123456789").decode()
SECRET_NEW = "whsec_" + base64.b64encode(b"new-secret-0123456789").decode()


@pytest.fixture
def allow_private(settings):  # type: ignore[no-untyped-def]
    settings.TIDINGS_WEBHOOK_ALLOW_PRIVATE = True
    settings.TIDINGS_PUBLIC_URL = "https://tidings.example"


def ok(request: Request) -> Response:
    return Response(200, {"ok": True})


def test_twilio_posts_with_the_connectors_account_and_asks_for_status_callbacks(allow_private) -> None:  # type: ignore[no-untyped-def]
    def respond(request: Request) -> Response:
        return Response(201, {"sid": "SM1", "status": "queued"})

    with fake_server(respond) as server:
        adapter = make_adapter(
            "sms:twilio",
            {"account_sid": "ACabc", "auth_token": "tok"},
            {"api_url": server.url, "from_number": "+15550001"},
        )
        [result] = adapter.send_batch([message("sms", "+15557654321", {"text": "Code 42"})])
    assert result.outcome == Outcome.ACCEPTED
    assert result.provider_reference == "SM1"
    [request] = server.requests
    assert request.route == "/2010-04-01/Accounts/ACabc/Messages.json"
    assert request.header("Authorization") == "Basic " + base64.b64encode(b"ACabc:tok").decode()
    assert request.form() == {
        "To": "+15557654321",
        "From": "+15550001",
        "Body": "Code 42",
        "StatusCallback": "https://tidings.example/webhooks/7/twilio",
    }


def test_twilio_refused_credentials_are_a_permanent_auth_failure(allow_private) -> None:  # type: ignore[no-untyped-def]
    answer = Response(401, {"code": 20003, "message": "Authenticate", "status": 401})
    with fake_server(lambda request: answer) as server:
        adapter = make_adapter(
            "sms:twilio", {"account_sid": "AC", "auth_token": "bad"}, {"api_url": server.url, "from_number": "+1"}
        )
        [result] = adapter.send_batch([message("sms", "+15557654321", {"text": "x"})])
    assert (result.outcome, result.code) == (Outcome.PERMANENT, "auth_failed")


def test_whatsapp_sends_the_approved_template_with_its_variables() -> None:
    answer = Response(200, {"messages": [{"id": "wamid.1"}]})
    with fake_server(lambda request: answer) as server:
        adapter = make_adapter(
            "whatsapp:cloudapi",
            {"access_token": "EAAG", "app_secret": "s"},
            {"api_url": server.url, "phone_number_id": "42"},
        )
        content = {"template": "order_shipped", "language": "nl", "variables": ["Ada", 1234]}
        [result] = adapter.send_batch([message("whatsapp", "+31612345678", content)])
        [missing] = adapter.send_batch([message("whatsapp", "+31612345678", {"text": "free text"})])
    assert result.provider_reference == "wamid.1"
    [request] = server.requests
    assert request.route == "/42/messages"
    assert request.header("Authorization") == "Bearer EAAG"
    assert request.json() == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "31612345678",
        "type": "template",
        "template": {
            "name": "order_shipped",
            "language": {"code": "nl"},
            "components": [
                {"type": "body", "parameters": [{"type": "text", "text": "Ada"}, {"type": "text", "text": "1234"}]}
            ],
        },
    }
    assert (missing.outcome, missing.code) == (Outcome.PERMANENT, "template_required")


def test_whatsapp_expired_token_is_a_permanent_auth_failure() -> None:
    error = {"message": "Error validating access token", "type": "OAuthException", "code": 190}
    with fake_server(lambda request: Response(401, {"error": error})) as server:
        adapter = make_adapter(
            "whatsapp:cloudapi",
            {"access_token": "old", "app_secret": "s"},
            {"api_url": server.url, "phone_number_id": "42"},
        )
        [result] = adapter.send_batch([message("whatsapp", "+31612345678", {"template": "t"})])
    assert (result.outcome, result.code) == (Outcome.PERMANENT, "auth_failed")


def test_slack_incoming_webhook_posts_blocks(allow_private) -> None:  # type: ignore[no-untyped-def]
    with fake_server(lambda request: Response(200, "ok")) as server:
        adapter = make_adapter("slack:slack", {"webhook_url": f"{server.url}/services/T/B/X"}, {})
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*hi*"}}]
        [result] = adapter.send_batch([message("slack", "", {"text": "hi", "blocks": blocks})])
    assert result.outcome == Outcome.ACCEPTED
    assert server.requests[0].json() == {"text": "hi", "blocks": blocks}


def test_slack_revoked_token_is_a_permanent_auth_failure(allow_private) -> None:  # type: ignore[no-untyped-def]
    with fake_server(lambda request: Response(200, {"ok": False, "error": "token_revoked"})) as server:
        adapter = make_adapter("slack:slack", {"bot_token": "xoxb-1"}, {"api_url": server.url})
        [result] = adapter.send_batch([message("slack", "C1", {"text": "hi"})])
    assert (result.outcome, result.code) == (Outcome.PERMANENT, "auth_failed")


def test_teams_posts_an_adaptive_card_and_reads_errors_wrapped_in_200(allow_private) -> None:  # type: ignore[no-untyped-def]
    answers = iter(
        [Response(200, "1"), Response(200, "Microsoft Teams endpoint returned HTTP error 429 with ContextId x")]
    )
    with fake_server(lambda request: next(answers)) as server:
        adapter = make_adapter("teams:teams", {"webhook_url": f"{server.url}/webhookb2/x"}, {})
        first, second = adapter.send_batch(
            [message("teams", "ops", {"text": "Deployed"}), message("teams", "ops", {"text": "again"})]
        )
    assert first.outcome == Outcome.ACCEPTED
    assert second.outcome == Outcome.RETRYABLE and second.throttled
    attachment = server.requests[0].json()["attachments"][0]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert attachment["content"]["type"] == "AdaptiveCard"
    assert attachment["content"]["body"][0]["text"] == "Deployed"


def test_webhook_signature_verifies_with_every_active_secret_during_rotation(allow_private) -> None:  # type: ignore[no-untyped-def]
    with fake_server(ok) as server:
        adapter = make_adapter("webhook:webhook", {"secrets": [SECRET_NEW, SECRET_OLD]}, {})
        body = {"event": "invoice.paid", "amount": 12}
        [result] = adapter.send_batch(
            [message("webhook", f"{server.url}/in", {"body": body}, delivery_key="notification:webhook:9")]
        )
    assert result.outcome == Outcome.ACCEPTED
    [request] = server.requests
    assert request.header("webhook-id") == "notification:webhook:9"
    assert len(request.header("webhook-signature").split(" ")) == 2
    # The reference implementation of Standard Webhooks accepts it under either secret.
    for secret in (SECRET_NEW, SECRET_OLD):
        assert Webhook(secret).verify(request.body, request.headers) == body
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + base64.b64encode(b"some-other-secret").decode()).verify(request.body, request.headers)


def test_webhook_signature_covers_id_timestamp_and_body() -> None:
    signature = sign([SECRET_OLD], "msg_1", 1700000000, b'{"a":1}')
    assert signature != sign([SECRET_OLD], "msg_2", 1700000000, b'{"a":1}')
    assert signature != sign([SECRET_OLD], "msg_1", 1700000001, b'{"a":1}')
    assert signature != sign([SECRET_OLD], "msg_1", 1700000000, b'{"a":2}')


def test_webhook_response_status_headers_and_first_4kb_are_kept(allow_private) -> None:  # type: ignore[no-untyped-def]
    big = "x" * 10_000
    with fake_server(lambda request: Response(500, big, {"X-Trace": "t-1"})) as server:
        adapter = make_adapter("webhook:webhook", {"secrets": [SECRET_NEW]}, {})
        [result] = adapter.send_batch([message("webhook", f"{server.url}/in", {"body": {}})])
    assert result.outcome == Outcome.RETRYABLE
    assert result.details["status"] == 500
    assert result.details["headers"]["X-Trace"] == "t-1"
    assert result.details["body"] == "x" * 4096


def test_webhook_redirects_are_not_followed(allow_private) -> None:  # type: ignore[no-untyped-def]
    with fake_server(lambda request: Response(302, "", {"Location": "http://169.254.169.254/latest"})) as server:
        adapter = make_adapter("webhook:webhook", {"secrets": [SECRET_NEW]}, {})
        [result] = adapter.send_batch([message("webhook", f"{server.url}/in", {"body": {}})])
    assert (result.outcome, result.code) == (Outcome.PERMANENT, "redirect_refused")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/in",
        "http://localhost:{port}/in",
        "http://10.1.2.3/in",
        "http://192.168.0.10/in",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:{port}/in",
        "http://[::ffff:127.0.0.1]:{port}/in",
        "ftp://example.com/in",
    ],
)
def test_webhook_to_private_loopback_or_link_local_addresses_is_refused(settings, url: str) -> None:  # type: ignore[no-untyped-def]
    settings.TIDINGS_WEBHOOK_ALLOW_PRIVATE = False
    with fake_server(ok) as server:
        port = server.url.rsplit(":", 1)[1]
        adapter = make_adapter("webhook:webhook", {"secrets": [SECRET_NEW]}, {})
        [result] = adapter.send_batch([message("webhook", url.format(port=port), {"body": {}})])
    assert (result.outcome, result.code) == (Outcome.PERMANENT, "unsafe_url")
    assert server.requests == []


def test_private_webhook_urls_are_refused_when_the_connector_is_saved(settings) -> None:  # type: ignore[no-untyped-def]
    settings.TIDINGS_WEBHOOK_ALLOW_PRIVATE = False
    for key, credentials, settings_ in [
        ("webhook:webhook", {"secrets": [SECRET_NEW]}, {"url": "http://10.0.0.5/hook"}),
        ("teams:teams", {"webhook_url": "http://127.0.0.1/webhookb2"}, {}),
        ("slack:slack", {"webhook_url": "http://169.254.169.254/"}, {}),
    ]:
        with pytest.raises(ConfigError) as error:
            adapters.get(key).validate_config(credentials, settings_)
        assert "private" in str(error.value) or "loopback" in str(error.value)


def test_webhook_needs_a_signing_secret() -> None:
    with pytest.raises(ConfigError) as error:
        adapters.get("webhook:webhook").validate_config({}, {})
    assert error.value.field == "secrets"
    with pytest.raises(ConfigError):
        adapters.get("webhook:webhook").validate_config({"secrets": "whsec_not*base64"}, {})


def test_body_is_sent_exactly_as_signed(allow_private) -> None:  # type: ignore[no-untyped-def]
    with fake_server(ok) as server:
        adapter = make_adapter("webhook:webhook", {"secrets": SECRET_NEW}, {})
        adapter.send_batch([message("webhook", f"{server.url}/in", {"body": {"b": [1, 2], "a": "é"}})])
    assert json.loads(server.requests[0].body) == {"b": [1, 2], "a": "é"}


def test_api_url_overrides_get_the_same_ssrf_guard(settings) -> None:  # type: ignore[no-untyped-def]
    settings.TIDINGS_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(ConfigError) as error:
        adapters.get("email:resend").validate_config(
            {"api_key": "k"}, {"from_email": "a@b.c", "api_url": "http://169.254.169.254/latest/"}
        )
    assert error.value.field == "api_url"


def test_webhook_connects_to_the_address_it_vetted_and_keeps_the_host_header() -> None:
    with fake_server(ok) as server:
        port = server.url.rsplit(":", 1)[1]
        adapter = make_adapter("webhook:webhook", {"secrets": [SECRET_NEW]}, {})
        [result] = adapter.send_batch([message("webhook", f"http://localhost:{port}/in?x=1", {"body": {}})])
    assert result.outcome == Outcome.ACCEPTED
    [request] = server.requests
    assert request.header("Host") == f"localhost:{port}"
    assert request.path == "/in?x=1"


def test_https_webhook_pinned_to_its_address_still_verifies_the_real_host_name(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.channels.smtp_server import self_signed_certificate, server_ssl_context

    ca = tmp_path / "ca.pem"
    ca.write_text(self_signed_certificate()[0])
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca))
    with fake_server(ok, tls=server_ssl_context()) as server:
        port = server.url.rsplit(":", 1)[1]
        adapter = make_adapter("webhook:webhook", {"secrets": [SECRET_NEW]}, {})
        [result] = adapter.send_batch([message("webhook", f"https://localhost:{port}/in", {"body": {"a": 1}})])
        monkeypatch.delenv("REQUESTS_CA_BUNDLE")
        [untrusted] = make_adapter("webhook:webhook", {"secrets": [SECRET_NEW]}, {}).send_batch(
            [message("webhook", f"https://localhost:{port}/in", {"body": {"a": 1}})]
        )
    assert result.outcome == Outcome.ACCEPTED, result
    assert server.requests[0].header("Host") == f"localhost:{port}"
    # Certificate checks stay on: without the CA the same endpoint is refused.
    assert untrusted.outcome == Outcome.RETRYABLE


@pytest.mark.django_db
def test_dispatcher_stores_the_webhook_response_on_the_attempt(allow_private, project) -> None:  # type: ignore[no-untyped-def]
    from apps.delivery.dispatch.runner import dispatch_batch
    from apps.delivery.models import Attempt, Delivery
    from apps.delivery.redis_client import get_redis
    from apps.delivery.services import DeliveryRequest, connector_create, deliveries_enqueue

    get_redis().flushdb()
    with fake_server(lambda request: Response(503, "busy " * 2000, {"X-Trace": "t-9"})) as server:
        connector_create(
            project=project,
            channel="webhook",
            provider="webhook",
            credentials={"secrets": [SECRET_NEW]},
            settings={},
            is_default=True,
        )
        [delivery_id] = deliveries_enqueue(
            project=project,
            requests=[
                DeliveryRequest(
                    channel="webhook",
                    destination=f"{server.url}/in",
                    lane="high",
                    delivery_key="attempt-response:1",
                    origin_kind="test",
                    origin_id="1",
                    content={"body": {"hello": "world"}},
                )
            ],
        )
        assert dispatch_batch("high") == 1
    attempt = Attempt.objects.get(delivery_id=delivery_id)
    assert attempt.outcome == "retryable"
    assert attempt.response["status"] == 503
    assert attempt.response["headers"]["X-Trace"] == "t-9"
    assert len(attempt.response["body"]) == 4096
    assert Delivery.objects.get(pk=delivery_id).state == "retrying"


@pytest.mark.django_db
def test_refused_messages_do_not_count_against_the_connector_but_outages_do(allow_private, project, settings) -> None:  # type: ignore[no-untyped-def]
    from apps.delivery.dispatch.runner import dispatch_batch
    from apps.delivery.models import Connector
    from apps.delivery.redis_client import get_redis
    from apps.delivery.services import DeliveryRequest, connector_create, deliveries_enqueue

    get_redis().flushdb()
    settings.TIDINGS_CONNECTOR_FAILURE_THRESHOLD = 2
    answers = iter([Response(400, "bad payload"), Response(400, "bad payload"), Response(503, "down"), Response(503)])
    with fake_server(lambda request: next(answers)) as server:
        connector = connector_create(
            project=project,
            channel="webhook",
            provider="webhook",
            credentials={"secrets": [SECRET_NEW]},
            is_default=True,
        )

        def send(key: str) -> None:
            deliveries_enqueue(
                project=project,
                requests=[
                    DeliveryRequest(
                        channel="webhook",
                        destination=f"{server.url}/in",
                        lane="high",
                        delivery_key=key,
                        origin_kind="test",
                        origin_id=key,
                        content={"body": {}},
                    )
                ],
            )
            assert dispatch_batch("high") == 1

        send("refused-1")
        send("refused-2")
        connector.refresh_from_db()
        assert (connector.status, connector.consecutive_failures) == (Connector.Status.HEALTHY, 0)
        send("outage-1")
        send("outage-2")
    connector.refresh_from_db()
    assert connector.consecutive_failures == 2
    assert connector.status == Connector.Status.FAILING
