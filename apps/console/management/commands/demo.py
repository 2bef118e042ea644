"""Create or reuse the demo organization, project, staff user, API keys and small world.

Demo keys are derived from ``SECRET_KEY``, so running this again prints the same keys
without ever storing them in clear; a demo key that was revoked is issued anew.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
from typing import Any

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction

from apps.console.demo import demo_world_seed
from apps.delivery.demo import seed_demo
from apps.governance.keys import hash_key
from apps.governance.models import ApiKey, Role
from apps.governance.services import api_key_create, membership_set
from apps.projects.models import Organization, Project

DEMO_USERNAME = "demo"
DEMO_EMAIL = "demo@tidings.test"
DEMO_PASSWORD_DEFAULT = "tidings-demo"  # noqa: S105 - printed to the operator on purpose
DEMO_ORG = ("Demo Company", "demo")
DEMO_PROJECT = ("Demo App", "demo-app", "Europe/Lisbon")


def demo_key(kind: str) -> str:
    prefix = ApiKey.PREFIXES[ApiKey.Kind(kind)]
    digest = hmac.new(settings.SECRET_KEY.encode(), f"tidings-demo-{kind}".encode(), hashlib.sha256).digest()
    return prefix + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def ensure_demo_key(project: Project, kind: str, name: str) -> str:
    raw = demo_key(kind)
    existing = ApiKey.objects.filter(key_hash=hash_key(raw)).first()
    if existing is not None and existing.is_active():
        return raw
    if existing is not None:
        existing.delete()  # revoked demo key: issue the same value again
    api_key_create(project=project, name=name, kind=kind, raw_key=raw)
    return raw


def cms_seed() -> dict[str, Any]:
    """The public site's starting pages, through the cms's own command. Only what a second
    run repeats is shown: which pages this run created is the command's own detail."""
    out = io.StringIO()
    call_command("cms_seed", stdout=out)
    seeded = json.loads(out.getvalue())
    return {"url": seeded["site_url"], "pages_live": seeded["pages_live"]}


class Command(BaseCommand):
    help = "Create or reuse the demo organization, project, user and keys."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--json", action="store_true", help="Print one JSON object and nothing else.")

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        import os

        password = os.environ.get("TIDINGS_DEMO_PASSWORD", DEMO_PASSWORD_DEFAULT)
        org, _ = Organization.objects.get_or_create(slug=DEMO_ORG[1], defaults={"name": DEMO_ORG[0]})
        project, _ = Project.objects.get_or_create(
            organization=org, slug=DEMO_PROJECT[1], defaults={"name": DEMO_PROJECT[0], "timezone": DEMO_PROJECT[2]}
        )
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(username=DEMO_USERNAME, defaults={"is_staff": True})
        if created or not user.check_password(password) or user.email != DEMO_EMAIL:
            user.set_password(password)
            user.email = DEMO_EMAIL
            user.is_staff = True
            user.is_superuser = True
            user.save()
        # The console signs in by email and opens only to a verified one.
        EmailAddress.objects.update_or_create(user=user, email=DEMO_EMAIL, defaults={"verified": True, "primary": True})
        membership_set(user=user, organization=org, role=Role.OWNER)
        public_key = ensure_demo_key(project, "public", "Demo public key")
        secret_key = ensure_demo_key(project, "secret", "Demo secret key")
        extra = {"delivery": seed_demo(project), "world": demo_world_seed(project), "site": cms_seed()}
        result = {
            "organization": org.slug,
            "project": project.slug,
            "project_id": project.pk,
            "username": DEMO_USERNAME,
            "email": DEMO_EMAIL,
            "password": password,
            "public_key": public_key,
            "secret_key": secret_key,
            **extra,
        }
        if options["json"]:
            self.stdout.write(json.dumps(result))
        else:
            for name, value in result.items():
                self.stdout.write(f"{name}: {value}")
