"""Receipt webhooks: verified per connector, deduplicated, replay-proof, project-scoped."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from apps.delivery.models import Connector, Delivery, Receipt, Suppression
from apps.delivery.webhooks.twilio import twilio_signature
from apps.delivery.webhooks.whatsapp import hub_signature
from apps.projects.models import Project

pytestmark = pytest.mark.django_db


def connector(project: Project, channel: str, provider: str, credentials: dict[str, Any], **settings: Any) -> Connector:
    item = Connector(project=project, channel=channel, provider=provider, settings=settings, is_default=False)
    item.set_credentials(credentials)
    item.save()
    return item


def sent_delivery(project: Project, channel: str, destination: str, reference: str) -> Delivery:
    return Delivery.objects.create(
        project=project,
        channel=channel,
        destination=destination,
        origin_kind="notification",
        origin_id="n-1",
        state="sent",
        due_at=timezone.now(),
        delivery_key=f"notification:{channel}:{destination}:{reference}",
        provider_reference=reference,
        sent_at=timezone.now(),
    )


# --- SMS: Twilio status callbacks -------------------------------------------------------


@pytest.fixture
def twilio_connector(project: Project) -> Connector:
    return connector(project, "sms", "twilio", {"account_sid": "ACabc", "auth_token": "tw-token"}, from_number="+1555")


def twilio_post(client, item: Connector, form: dict[str, str], token: str = "tw-token"):  # type: ignore[no-untyped-def]  # noqa: S107
    url = f"/webhooks/{item.pk}/twilio"
    signature = twilio_signature(token, f"http://testserver{url}", {k: [v] for k, v in form.items()})
    return client.post(url, form, HTTP_X_TWILIO_SIGNATURE=signature)


def test_twilio_delivered_callback_marks_the_delivery_delivered(client, project, twilio_connector) -> None:  # type: ignore[no-untyped-def]
    delivery = sent_delivery(project, "sms", "+15551234567", "SM1")
    response = twilio_post(
        client, twilio_connector, {"AccountSid": "ACabc", "MessageSid": "SM1", "MessageStatus": "delivered"}
    )
    assert response.status_code == 200, response.content
    delivery.refresh_from_db()
    assert delivery.state == "delivered"
    assert Receipt.objects.get(project=project).provider_event_id == "twilio:SM1:delivered"


def test_twilio_unknown_number_bounces_and_suppresses_it(client, project, twilio_connector) -> None:  # type: ignore[no-untyped-def]
    delivery = sent_delivery(project, "sms", "+15551234567", "SM2")
    form = {"AccountSid": "ACabc", "MessageSid": "SM2", "MessageStatus": "undelivered", "ErrorCode": "30005"}
    assert twilio_post(client, twilio_connector, form).status_code == 200
    delivery.refresh_from_db()
    assert delivery.state == "bounced"
    assert Suppression.objects.filter(project=project, channel="sms", reason="bounce").count() == 1


def test_forged_twilio_callback_is_refused_and_changes_nothing(client, project, twilio_connector) -> None:  # type: ignore[no-untyped-def]
    delivery = sent_delivery(project, "sms", "+15551234567", "SM3")
    form = {"AccountSid": "ACabc", "MessageSid": "SM3", "MessageStatus": "undelivered", "ErrorCode": "30005"}
    forged = twilio_post(client, twilio_connector, form, token="guessed-token")
    unsigned = client.post(f"/webhooks/{twilio_connector.pk}/twilio", form)
    assert (forged.status_code, unsigned.status_code) == (403, 403)
    assert forged["Content-Type"] == "application/problem+json"
    delivery.refresh_from_db()
    assert delivery.state == "sent"
    assert not Receipt.objects.exists()
    assert not Suppression.objects.exists()


def test_replayed_callback_is_refused_and_records_nothing_new(client, project, twilio_connector) -> None:  # type: ignore[no-untyped-def]
    sent_delivery(project, "sms", "+15551234567", "SM4")
    form = {"AccountSid": "ACabc", "MessageSid": "SM4", "MessageStatus": "delivered"}
    assert twilio_post(client, twilio_connector, form).status_code == 200
    replay = twilio_post(client, twilio_connector, form)
    assert replay.status_code == 409
    assert replay.json()["code"] == "webhook_replayed"
    assert Receipt.objects.count() == 1


def test_receipt_for_another_projects_delivery_is_ignored(client, project, other_project, twilio_connector) -> None:  # type: ignore[no-untyped-def]
    theirs = sent_delivery(other_project, "sms", "+15551234567", "SM5")
    form = {"AccountSid": "ACabc", "MessageSid": "SM5", "MessageStatus": "undelivered", "ErrorCode": "30005"}
    response = twilio_post(client, twilio_connector, form)
    assert response.status_code == 200
    assert response.json()["unmatched"] == 1
    theirs.refresh_from_db()
    assert theirs.state == "sent"
    assert not Suppression.objects.filter(project=other_project).exists()


def test_unknown_connector_or_wrong_provider_is_404(client, twilio_connector) -> None:  # type: ignore[no-untyped-def]
    assert client.post("/webhooks/999999/twilio", {}).status_code == 404
    assert client.post(f"/webhooks/{twilio_connector.pk}/postmark", {}).status_code == 404


# --- WhatsApp Cloud API -----------------------------------------------------------------


@pytest.fixture
def whatsapp_connector(project: Project) -> Connector:
    credentials = {"access_token": "EAAG", "app_secret": "wa-secret", "verify_token": "verify-me"}
    return connector(project, "whatsapp", "cloudapi", credentials, phone_number_id="42")


def whatsapp_body(status: dict[str, Any], phone_number_id: str = "42") -> bytes:
    value = {"messaging_product": "whatsapp", "metadata": {"phone_number_id": phone_number_id}, "statuses": [status]}
    return json.dumps(
        {
            "object": "whatsapp_business_account",
            "entry": [{"id": "1", "changes": [{"field": "messages", "value": value}]}],
        }
    ).encode()


def test_whatsapp_failed_status_bounces_the_delivery(client, project, whatsapp_connector) -> None:  # type: ignore[no-untyped-def]
    delivery = sent_delivery(project, "whatsapp", "+31612345678", "wamid.1")
    body = whatsapp_body(
        {
            "id": "wamid.1",
            "status": "failed",
            "timestamp": "1700000000",
            "errors": [{"code": 131026, "title": "Message undeliverable"}],
        }
    )
    response = client.post(
        f"/webhooks/{whatsapp_connector.pk}/cloudapi",
        body,
        content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=hub_signature("wa-secret", body),
    )
    assert response.status_code == 200, response.content
    delivery.refresh_from_db()
    assert delivery.state == "bounced"
    assert Receipt.objects.get().description == "Message undeliverable"


def test_whatsapp_body_changed_after_signing_is_refused(client, project, whatsapp_connector) -> None:  # type: ignore[no-untyped-def]
    delivery = sent_delivery(project, "whatsapp", "+31612345678", "wamid.2")
    signed = whatsapp_body({"id": "wamid.2", "status": "delivered", "timestamp": "1700000000"})
    tampered = whatsapp_body({"id": "wamid.2", "status": "failed", "timestamp": "1700000000"})
    response = client.post(
        f"/webhooks/{whatsapp_connector.pk}/cloudapi",
        tampered,
        content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=hub_signature("wa-secret", signed),
    )
    assert response.status_code == 403
    delivery.refresh_from_db()
    assert delivery.state == "sent"


def test_whatsapp_subscription_handshake(client, whatsapp_connector) -> None:  # type: ignore[no-untyped-def]
    url = f"/webhooks/{whatsapp_connector.pk}/cloudapi"
    ok = client.get(url, {"hub.mode": "subscribe", "hub.verify_token": "verify-me", "hub.challenge": "1158201444"})
    wrong = client.get(url, {"hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1"})
    assert (ok.status_code, ok.content) == (200, b"1158201444")
    assert wrong.status_code == 403


# --- Email through Anymail's tracking webhooks ------------------------------------------


def basic_auth(user_pass: str) -> str:
    return "Basic " + base64.b64encode(user_pass.encode()).decode()


def test_postmark_hard_bounce_with_basic_auth_bounces_and_suppresses(client, project) -> None:  # type: ignore[no-untyped-def]
    item = connector(
        project, "email", "postmark", {"server_token": "t", "webhook_secret": "hook:pa55"}, from_email="a@b.c"
    )
    delivery = sent_delivery(project, "email", "gone@example.com", "pm-1")
    event = {
        "RecordType": "Bounce",
        "ID": 4242,
        "Type": "HardBounce",
        "TypeCode": 1,
        "MessageID": "pm-1",
        "Email": "gone@example.com",
        "BouncedAt": "2026-11-29T10:00:00Z",
        "Description": "Unknown user",
        "Metadata": {"delivery_id": str(delivery.pk)},
    }
    url = f"/webhooks/{item.pk}/postmark"
    refused = client.post(url, event, content_type="application/json", HTTP_AUTHORIZATION=basic_auth("hook:wrong"))
    assert refused.status_code == 403
    delivery.refresh_from_db()
    assert delivery.state == "sent"
    response = client.post(url, event, content_type="application/json", HTTP_AUTHORIZATION=basic_auth("hook:pa55"))
    assert response.status_code == 200, response.content
    delivery.refresh_from_db()
    assert delivery.state == "bounced"
    assert Suppression.objects.filter(project=project, address__iexact="gone@example.com", reason="bounce").exists()


def test_email_connector_without_a_webhook_secret_accepts_no_receipts(client, project) -> None:  # type: ignore[no-untyped-def]
    item = connector(project, "email", "postmark", {"server_token": "t"}, from_email="a@b.c")
    response = client.post(f"/webhooks/{item.pk}/postmark", {"RecordType": "Delivery"}, content_type="application/json")
    assert response.status_code == 403
    assert response.json()["code"] == "webhook_not_configured"


def mailgun_event(signing_key: str, event: dict[str, Any], timestamp: int | None = None) -> dict[str, Any]:
    timestamp = timestamp or int(time.time())
    token = "a" * 50
    signature = hmac.new(signing_key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256).hexdigest()
    return {"signature": {"timestamp": str(timestamp), "token": token, "signature": signature}, "event-data": event}


def test_mailgun_signed_delivered_event_finds_the_delivery_by_reference(client, project) -> None:  # type: ignore[no-untyped-def]
    item = connector(
        project, "email", "mailgun", {"api_key": "k", "webhook_signing_key": "mg-sign"}, from_email="a@b.c"
    )
    delivery = sent_delivery(project, "email", "a@example.com", "mg-1@mail.tidings.test")
    event = {
        "event": "delivered",
        "id": "evt-1",
        "timestamp": time.time(),
        "recipient": "a@example.com",
        "message": {"headers": {"message-id": "mg-1@mail.tidings.test"}},
    }
    response = client.post(
        f"/webhooks/{item.pk}/mailgun", mailgun_event("mg-sign", event), content_type="application/json"
    )
    assert response.status_code == 200, response.content
    delivery.refresh_from_db()
    assert delivery.state == "delivered"


def test_mailgun_event_with_an_old_signed_timestamp_is_a_refused_replay(client, project) -> None:  # type: ignore[no-untyped-def]
    item = connector(
        project, "email", "mailgun", {"api_key": "k", "webhook_signing_key": "mg-sign"}, from_email="a@b.c"
    )
    delivery = sent_delivery(project, "email", "a@example.com", "mg-2@mail.tidings.test")
    event = {
        "event": "failed",
        "severity": "permanent",
        "id": "evt-2",
        "timestamp": time.time(),
        "recipient": "a@example.com",
        "message": {"headers": {"message-id": "mg-2@mail.tidings.test"}},
    }
    old = int((timezone.now() - timedelta(hours=2)).timestamp())
    response = client.post(
        f"/webhooks/{item.pk}/mailgun", mailgun_event("mg-sign", event, old), content_type="application/json"
    )
    assert response.status_code == 409
    delivery.refresh_from_db()
    assert delivery.state == "sent"


def test_resend_event_verified_by_its_svix_signature(client, project) -> None:  # type: ignore[no-untyped-def]
    secret = "whsec_" + base64.b64encode(b"resend-signing-secret").decode()
    item = connector(
        project, "email", "resend", {"api_key": "re_k", "webhook_signing_secret": secret}, from_email="a@b.c"
    )
    delivery = sent_delivery(project, "email", "a@example.com", "re_77")
    body = json.dumps(
        {
            "type": "email.complained",
            "created_at": "2026-11-29T10:00:00.000Z",
            "data": {
                "email_id": "re_77",
                "to": ["a@example.com"],
                "from": "a@b.c",
                "subject": "Hi",
                "created_at": "2026-11-29T09:59:00.000Z",
            },
        }
    )
    now = timezone.now()
    signature = Webhook(secret).sign("msg_1", now, body)
    headers = {
        "HTTP_SVIX_ID": "msg_1",
        "HTTP_SVIX_TIMESTAMP": str(int(now.timestamp())),
        "HTTP_SVIX_SIGNATURE": signature,
    }
    forged = client.post(
        f"/webhooks/{item.pk}/resend",
        body.replace("complained", "delivered"),
        content_type="application/json",
        **headers,
    )
    assert forged.status_code == 403
    response = client.post(f"/webhooks/{item.pk}/resend", body, content_type="application/json", **headers)
    assert response.status_code == 200, response.content
    delivery.refresh_from_db()
    assert delivery.state == "complained"
    assert Suppression.objects.filter(project=project, reason="complaint").exists()


def test_ses_bounce_through_sns_with_basic_auth(client, project) -> None:  # type: ignore[no-untyped-def]
    credentials = {"access_key_id": "AKIA1", "secret_access_key": "s", "webhook_secret": "sns:hook-pass"}
    item = connector(project, "email", "ses", credentials, from_email="a@b.c", region="eu-west-1")
    delivery = sent_delivery(project, "email", "gone@example.com", "ses-1")
    ses_event = {
        "eventType": "Bounce",
        "bounce": {
            "bounceType": "Permanent",
            "bounceSubType": "General",
            "feedbackId": "fb-1",
            "bouncedRecipients": [
                {"emailAddress": "gone@example.com", "diagnosticCode": "smtp; 550 5.1.1 user unknown"}
            ],
            "timestamp": "2026-11-29T10:00:00.000Z",
        },
        "mail": {
            "messageId": "ses-1",
            "timestamp": "2026-11-29T09:59:00.000Z",
            "destination": ["gone@example.com"],
            "tags": {},
            "commonHeaders": {},
        },
    }
    sns = {
        "Type": "Notification",
        "MessageId": "sns-1",
        "TopicArn": "arn:aws:sns:eu-west-1:1:ses",
        "Message": json.dumps(ses_event),
        "Timestamp": "2026-11-29T10:00:01.000Z",
    }
    headers = {"HTTP_X_AMZ_SNS_MESSAGE_TYPE": "Notification", "HTTP_X_AMZ_SNS_MESSAGE_ID": "sns-1"}
    url = f"/webhooks/{item.pk}/ses"
    refused = client.post(url, json.dumps(sns), content_type="text/plain", **headers)
    assert refused.status_code == 403
    response = client.post(
        url, json.dumps(sns), content_type="text/plain", HTTP_AUTHORIZATION=basic_auth("sns:hook-pass"), **headers
    )
    assert response.status_code == 200, response.content
    delivery.refresh_from_db()
    assert delivery.state == "bounced"
    assert Suppression.objects.filter(project=project, reason="bounce").exists()


def test_receipt_that_outruns_the_send_record_is_kept_for_later_not_lost(client, project, twilio_connector) -> None:  # type: ignore[no-untyped-def]
    delivery = sent_delivery(project, "sms", "+15551234567", "SM9")
    Delivery.objects.filter(pk=delivery.pk).update(state="claimed")
    form = {"AccountSid": "ACabc", "MessageSid": "SM9", "MessageStatus": "delivered"}
    response = twilio_post(client, twilio_connector, form)
    assert response.status_code == 200
    assert response.json()["pending"] == 1
    assert not Receipt.objects.exists()
    delivery.refresh_from_db()
    assert delivery.state == "claimed"


@pytest.mark.worker
def test_early_receipt_is_applied_once_the_send_is_recorded(client, project, celery_worker) -> None:  # type: ignore[no-untyped-def]
    from tests.fixtures.worker import wait_for

    item = connector(project, "sms", "twilio", {"account_sid": "ACabc", "auth_token": "tw-token"}, from_number="+1555")
    delivery = sent_delivery(project, "sms", "+15551234567", "SM10")
    Delivery.objects.filter(pk=delivery.pk).update(state="claimed")
    response = twilio_post(client, item, {"AccountSid": "ACabc", "MessageSid": "SM10", "MessageStatus": "delivered"})
    assert response.json()["pending"] == 1
    Delivery.objects.filter(pk=delivery.pk).update(state="sent")  # the dispatcher records the send
    wait_for(
        lambda: Delivery.objects.get(pk=delivery.pk).state == "delivered",
        timeout=30,
        message=celery_worker.log()[-2000:],
    )
    assert Receipt.objects.filter(provider_event_id="twilio:SM10:delivered").count() == 1


def test_brevo_event_matches_the_reference_stored_without_angle_brackets(client, project) -> None:  # type: ignore[no-untyped-def]
    item = connector(project, "email", "brevo", {"api_key": "k", "webhook_secret": "brevo:pw"}, from_email="a@b.c")
    delivery = sent_delivery(project, "email", "a@example.com", "br-1@smtp-relay.mailin.fr")
    event = {
        "event": "hard_bounce",
        "email": "a@example.com",
        "id": 77,
        "date": "2026-11-29 10:00:00",
        "ts": 1764410400,
        "ts_event": 1764410400,
        "message-id": "<br-1@smtp-relay.mailin.fr>",
        "reason": "unknown user",
    }
    response = client.post(
        f"/webhooks/{item.pk}/brevo", event, content_type="application/json", HTTP_AUTHORIZATION=basic_auth("brevo:pw")
    )
    assert response.status_code == 200, response.content
    delivery.refresh_from_db()
    assert delivery.state == "bounced"
