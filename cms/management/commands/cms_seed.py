"""Seed the public site: docs, API reference, pricing, blog, changelog and legal pages."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand

from cms.demo import cms_demo_seed


class Command(BaseCommand):
    help = "Create the site's starting pages; pages that exist are left alone."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(json.dumps(cms_demo_seed()))
