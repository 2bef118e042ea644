from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from apps.delivery.channels.base import ConnectorConfig, OutboundMessage, Outcome, adapters
from apps.delivery.channels.dryrun import dryrun_request_counts, dryrun_reset, dryrun_sent_counts
from tests.delivery.conftest import redis_clear

CHANNEL_EXAMPLES = {
    "email": ("ann@example.com", {"subject": "Hi", "text": "t", "html": "<p>t</p>", "headers": {"X-Tag": "1"}}),
    "push": ("device-token-1", {"title": "Hi", "body": "b", "data": {"order": 7}}),
    "sms": ("+351912345678", {"text": "code 1234"}),
    "whatsapp": ("+351912345678", {"template": "order_update", "language": "pt_PT", "variables": ["A1"]}),
    "slack": ("#general", {"text": "hello"}),
    "teams": ("https://example.webhook.office.com/x", {"text": "hello"}),
    "webhook": ("https://hooks.example.com/in", {"body": {"event": "x"}}),
}


@pytest.fixture(autouse=True)
def _redis():
    redis_clear()


def adapter(channel, **settings):
    cls = adapters.get(f"{channel}:dryrun")
    return cls(ConnectorConfig(project_id=999, channel=channel, provider="dryrun", settings=settings, connector_id=1))


def message(channel, key="k1", destination=None, content=None):
    dest, body = CHANNEL_EXAMPLES[channel]
    return OutboundMessage(1, key, channel, destination or dest, content or body)


@pytest.mark.parametrize("channel", sorted(CHANNEL_EXAMPLES))
def test_every_channel_has_a_dry_run_adapter_that_accepts_a_valid_message(channel):
    results = adapter(channel, delivered_rate=0).send_batch([message(channel)])
    assert results[0].outcome == Outcome.ACCEPTED and results[0].provider_reference.startswith("dryrun-")


def test_email_payload_is_built_by_anymail():
    a = adapter("email", delivered_rate=0, from_email="Shop <shop@example.com>")
    a.send_batch([message("email")])
    params = a.last_payloads[0]
    assert params["subject"] == "Hi" and params["extra_headers"] == {"X-Tag": "1"}
    assert [e.addr_spec for e in params["to"]] == ["ann@example.com"] and params["from"].addr_spec == "shop@example.com"
    assert params["metadata"] == {"delivery_key": "k1"}


def test_push_payload_is_what_firebase_admin_would_post():
    a = adapter("push", delivered_rate=0)
    a.send_batch([message("push")])
    assert a.last_payloads[0] == {
        "message": {"fid": "device-token-1", "notification": {"title": "Hi", "body": "b"}, "data": {"order": "7"}}
    }


def test_webhook_payload_carries_a_standard_webhooks_signature():
    a = adapter("webhook", delivered_rate=0)
    a.send_batch([message("webhook")])
    payload = a.last_payloads[0]
    headers = payload["headers"]
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.{payload['body']}".encode()
    expected = base64.b64encode(hmac.new(b"dryrun-secret", signed, hashlib.sha256).digest()).decode()
    assert headers["webhook-signature"] == f"v1,{expected}"


@pytest.mark.parametrize(
    ("channel", "destination"), [("sms", "0912"), ("email", "not an address"), ("webhook", "ftp://x")]
)
def test_invalid_destinations_are_permanent(channel, destination):
    (result,) = adapter(channel).send_batch([message(channel, destination=destination)])
    assert result.outcome == Outcome.PERMANENT and result.destination_invalid


def test_knobs_simulate_throttling_and_transient_errors():
    (throttled,) = adapter("sms", throttle_rate=1.0).send_batch([message("sms")])
    (transient,) = adapter("sms", transient_rate=1.0).send_batch([message("sms", key="k2")])
    assert throttled.outcome == Outcome.RETRYABLE and throttled.throttled
    assert transient.outcome == Outcome.RETRYABLE and not transient.throttled


def test_a_resent_delivery_key_is_answered_as_accepted_without_sending_again():
    a = adapter("sms", delivered_rate=0, record_sends=True)
    (first,) = a.send_batch([message("sms")])
    (again,) = a.send_batch([message("sms")])
    assert again.outcome == Outcome.ACCEPTED and again.provider_reference == first.provider_reference
    assert again.code == "duplicate"
    assert dryrun_sent_counts(999) == {"k1": 1}
    assert dryrun_request_counts(999) == {"k1": 2}  # the duplicate reached the provider, once sent
    dryrun_reset(999)
    assert dryrun_sent_counts(999) == {} and dryrun_request_counts(999) == {}
