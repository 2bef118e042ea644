"""The one way Tidings sends account email: ``account_mail_send``.

Account email leaves through the platform project (``apps.accounts.platform``) as an
ordinary delivery on the high lane, so it gets the same ledger, attempts, retries,
suppression and receipts as customer messages, and its rendered content is kept for the
"Sent mail" page. Callers name a kind and give string values; the branded template of
that kind (editable by platform staff) turns them into the message.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from apps.accounts.mail_templates import ACCOUNT_MAIL_KINDS, template_key
from apps.accounts.platform import platform_project_ensure
from apps.core.errors import ApplicationError, NotFound
from apps.delivery.models import Lane, TemplateVersion
from apps.delivery.services import DeliveryRequest, deliveries_enqueue

ORIGIN_KIND = "account_mail"

# What each kind's seeded template shows: refused up front when missing, rather than a
# message that dies at render time as a dead letter.
REQUIRED_CONTEXT: dict[str, tuple[str, ...]] = {
    "verify_email": ("link",),
    "password_reset": ("link",),
    "email_changed": ("old_email", "new_email"),
    "new_sign_in": ("signed_in_at", "ip_address", "user_agent", "link"),
    "mfa_changed": ("change", "link"),
    "invite": ("inviter", "organization", "role", "link"),
    "role_changed": ("organization", "role", "link"),
}


def account_mail_send(*, kind: str, to: str, context: dict[str, Any]) -> None:
    """Queue one account email of ``kind`` to the address ``to``.

    ``context`` values are strings (links included); ``email`` defaults to ``to``.
    Raises ``ApplicationError`` for an unknown kind, an invalid address or a context that
    lacks what the kind needs, and then queues nothing.
    """
    if kind not in ACCOUNT_MAIL_KINDS:
        raise ApplicationError(
            f"Unknown account email kind {kind!r}; use one of {', '.join(sorted(ACCOUNT_MAIL_KINDS))}.",
            code="unknown_account_mail_kind",
            field="kind",
        )
    address = (to or "").strip()
    try:
        validate_email(address)
    except ValidationError:
        raise ApplicationError(f"{to!r} is not an email address.", code="invalid_email", field="to") from None
    values = {"email": address, **context}
    not_strings = sorted(name for name, value in values.items() if not isinstance(value, str))
    if not_strings:
        raise ApplicationError(
            f"Account email context values must be strings; {', '.join(not_strings)} is not.",
            code="invalid_context",
            field="context",
        )
    missing = [name for name in REQUIRED_CONTEXT[kind] if not values.get(name)]
    if missing:
        raise ApplicationError(
            f"A {kind} email needs {', '.join(missing)} in its context.", code="missing_context", field="context"
        )

    project = platform_project_ensure()
    version = (
        TemplateVersion.objects.for_project(project)
        .filter(template__key=template_key(kind), published_at__isnull=False)
        .order_by("-number")
        .only("pk")
        .first()
    )
    if version is None:
        raise NotFound(f"The {kind} account template has no published version.", code="template_not_published")
    deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                channel="email",
                destination=address,
                # Someone is waiting for a link: never behind a campaign's bulk traffic.
                lane=Lane.HIGH,
                delivery_key=f"account:{kind}:{uuid.uuid4().hex}",
                origin_kind=ORIGIN_KIND,
                origin_id=kind,
                template_version_id=version.pk,
                context=values,
                category=f"account.{kind}",
            )
        ],
    )
