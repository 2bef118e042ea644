"""Identity verification: the project's secret and the subscriber hashes made with it.

A public key ships inside apps, so by itself it proves nothing about who is using the
app. The customer's server, which knows who signed in, computes the *subscriber hash*
``hex(HMAC-SHA256(identity secret, external_id))`` and gives it to its app; a public key
presenting it may change that one identified subscriber (Intercom, Knock and Novu work the
same way). The secret is one per project, shown in the console to those who manage keys,
and rotated there; a rotation ends every hash made with the old secret at once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from apps.core.crypto import decrypt_text, encrypt_text
from apps.governance.models import IdentitySecret
from apps.projects.models import Project

SECRET_PREFIX = "ivs_"  # noqa: S105 - a readable type prefix, not a secret
RANDOM_BYTES = 32


def subscriber_hash_for(secret: str, external_id: str) -> str:
    return hmac.new(secret.encode(), external_id.encode(), hashlib.sha256).hexdigest()


def identity_secret_reveal(*, project: Project) -> str:
    """The project's secret, made on first use so every project has one to show."""
    row = IdentitySecret.objects.for_project(project).first()
    if row is None:
        try:
            with transaction.atomic():
                row = IdentitySecret.objects.create(project=project, secret_encrypted=encrypt_text(_new_secret()))
        except IntegrityError:  # a concurrent first use made it
            row = IdentitySecret.objects.for_project(project).get()
    return decrypt_text(row.secret_encrypted)


@transaction.atomic
def identity_secret_rotate(*, project: Project, rotated_by: AbstractBaseUser | None = None) -> str:
    """Replace the secret; hashes made with the old one stop working now."""
    secret = _new_secret()
    IdentitySecret.objects.for_project(project).delete()
    IdentitySecret.objects.create(project=project, secret_encrypted=encrypt_text(secret), created_by=rotated_by)
    return secret


def subscriber_hash_matches(*, project: Project, external_id: str, given: str) -> bool:
    """Whether ``given`` is the subscriber hash of ``external_id`` (hex, either case)."""
    row = IdentitySecret.objects.for_project(project).first()
    if row is None:
        return False  # no secret was ever shown, so no hash can be right
    expected = subscriber_hash_for(decrypt_text(row.secret_encrypted), external_id)
    return hmac.compare_digest(expected.encode(), given.strip().lower().encode())


def _new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(RANDOM_BYTES)
