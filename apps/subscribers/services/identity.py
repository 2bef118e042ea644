"""The rule that keeps public keys from changing people they cannot prove to be."""

from __future__ import annotations

from apps.core.errors import PermissionDenied
from apps.subscribers.models import Subscriber


def identity_guard(subscriber: Subscriber, *, created: bool, identity_verified: bool) -> None:
    """Refuse a change to an identified subscriber by a caller that has not proved it acts for them.

    ``identity_verified`` is the caller's standing: a secret key, the console and imports
    act for anyone; a public key only for the external id whose subscriber hash it sent.
    A subscriber the same call created, and an anonymous one (reached by the anonymous id
    the app made up itself), need no proof.
    """
    if identity_verified or created or subscriber.external_id is None:
        return
    raise PermissionDenied(
        "Changing an identified subscriber with a public key needs its subscriber_hash: "
        "HMAC-SHA256 of the external_id with the project's identity-verification secret, "
        "computed by your server. Send external_id and subscriber_hash.",
        code="identity_verification_required",
        field="subscriber_hash",
    )
