"""Batch message APIs: up to 500 e-mails or pushes per call, straight into the ledger.

No notification intent here: each message becomes its delivery (or, for a subscriber's
push, one delivery per active device) in one transaction. A message is refused as a
whole batch: if any message is invalid, nothing is stored and the error names it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from apps.core.errors import ApplicationError
from apps.delivery.services import DeliveryRequest, deliveries_enqueue, html_validate
from apps.notifications.destinations import DestinationError, check_raw
from apps.notifications.rendering_check import strict_check
from apps.notifications.router import delivery_key
from apps.notifications.services import template_for_channels
from apps.notifications.template_refs import ResolvedTemplate
from apps.projects.models import Project
from apps.subscribers.models import Device, Subscriber

RAW_KIND = {"email": "email", "push": "push_token"}


@dataclass(frozen=True)
class BatchResult:
    batch_id: str
    deliveries: list[list[int]]  # per message, in order


def _recipient(message: dict[str, Any], channel: str, index: int) -> tuple[str, str]:
    to = message["to"]
    if isinstance(to, str):
        to = {"subscriber": to}
    if not isinstance(to, dict) or len(to) != 1:
        raise ApplicationError(
            f'"to" is an external id or {{"{RAW_KIND[channel]}": ...}}.',
            code="invalid_recipient",
            field=f"messages[{index}].to",
        )
    ((kind, value),) = to.items()
    if kind not in ("subscriber", RAW_KIND[channel]) or not isinstance(value, str) or not value:
        raise ApplicationError(
            f"A {channel} message goes to a subscriber or a {RAW_KIND[channel]}, not {kind!r}.",
            code="destination_channel_mismatch",
            field=f"messages[{index}].to",
        )
    if kind == "subscriber":
        return kind, value
    try:
        return kind, check_raw(kind, value)
    except DestinationError as exc:
        raise ApplicationError(str(exc), code=exc.code, field=f"messages[{index}].to") from None


def _content(message: dict[str, Any], channel: str) -> dict[str, Any]:
    if channel == "email":
        return {"subject": message["subject"], "text": message.get("text", ""), "html": message.get("html", "")}
    content: dict[str, Any] = {"title": message.get("title", ""), "body": message.get("body", "")}
    if message.get("payload"):
        content["data"] = message["payload"]
    if message.get("image"):
        content["image"] = message["image"]
    return content


def messages_send_batch(
    *, project: Project, channel: str, messages: list[dict[str, Any]], priority: str = "normal"
) -> BatchResult:
    batch_id = uuid.uuid4().hex
    templates: dict[str, ResolvedTemplate] = {}
    recipients: list[tuple[str, str]] = []
    for index, message in enumerate(messages):
        recipients.append(_recipient(message, channel, index))
        ref = message.get("template")
        if channel == "email" and not ref and message.get("html"):
            # Sent as written: refused here, whole batch, like any other invalid message.
            html_validate(message["html"], field=f"messages[{index}].html", code="unsafe_html", template=False)
        if ref:
            try:
                if ref not in templates:
                    templates[ref] = template_for_channels(project=project, template=ref, channels=[channel])
                if templates[ref].strict:
                    strict_check(templates[ref], channels=[channel], data=message.get("data") or {})
            except ApplicationError as exc:
                field = f"messages[{index}].{'data' if exc.code == 'template_variable_missing' else 'template'}"
                raise ApplicationError(exc.message, code=exc.code, field=field) from None

    external_ids = {value for kind, value in recipients if kind == "subscriber"}
    subscribers = {
        s.external_id: s
        for s in Subscriber.objects.for_project(project)
        .filter(external_id__in=external_ids, erased_at__isnull=True)
        .only("id", "external_id", "email")
    }
    tokens: dict[int, list[str]] = {}
    if channel == "push" and subscribers:
        for subscriber_id, token in (
            Device.objects.for_project(project)
            .filter(subscriber_id__in=[s.pk for s in subscribers.values()], active=True)
            .order_by("id")
            .values_list("subscriber_id", "token")
        ):
            tokens.setdefault(subscriber_id, []).append(token)

    requests: list[DeliveryRequest] = []
    owners: list[int] = []
    for index, (message, (kind, value)) in enumerate(zip(messages, recipients, strict=True)):
        subscriber = None
        if kind == "subscriber":
            subscriber = subscribers.get(value)
            if subscriber is None:
                raise ApplicationError(
                    f"There is no subscriber with external id {value!r} in this project.",
                    code="unknown_subscriber",
                    field=f"messages[{index}].to",
                )
            destinations = [subscriber.email] if channel == "email" and subscriber.email else []
            if channel == "push":
                destinations = tokens.get(subscriber.pk, [])
            if not destinations:
                raise ApplicationError(
                    f"Subscriber {value!r} has no {'e-mail address' if channel == 'email' else 'active device'}.",
                    code="no_destination",
                    field=f"messages[{index}].to",
                )
        else:
            destinations = [value]
        prefix = f"message:{message['key']}" if message.get("key") else f"message:{batch_id}:{index}"
        ref = message.get("template")
        for destination in destinations:
            requests.append(
                DeliveryRequest(
                    channel=channel,
                    destination=destination,
                    lane=priority,
                    delivery_key=delivery_key(prefix, channel, destination),
                    origin_kind="message",
                    origin_id=batch_id,
                    template_version_id=templates[ref].version_id if ref else None,
                    content=None if ref else _content(message, channel),
                    context=message.get("data") or {},
                    subscriber_id=subscriber.pk if subscriber else None,
                    category=message.get("category") or "",
                )
            )
            owners.append(index)
    with transaction.atomic():
        ids = deliveries_enqueue(project=project, requests=requests)
    per_message: list[list[int]] = [[] for _ in messages]
    for owner, delivery_id in zip(owners, ids, strict=True):
        per_message[owner].append(delivery_id)
    return BatchResult(batch_id=batch_id, deliveries=per_message)
