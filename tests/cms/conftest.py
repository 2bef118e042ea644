"""The public site's page tree, seeded once per test database with the demo content.

Seeded outside any test's transaction so that each test rolls back to it; a transactional
test elsewhere empties the database, and the next test here seeds it again.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from cms.demo import cms_demo_seed
from cms.models import DocsIndexPage, HomePage

HOST = "site.test"


@pytest.fixture(scope="session")
def _cms_seeded(django_db_setup: Any, django_db_blocker: Any) -> None:
    with django_db_blocker.unblock():
        cms_demo_seed()


@pytest.fixture
def site_home(_cms_seeded: None, db: Any, settings: Any) -> HomePage:
    if not DocsIndexPage.objects.exists():
        cms_demo_seed()
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, HOST]
    home = HomePage.objects.get()
    site = home.sites_rooted_here.get()
    site.hostname, site.port = HOST, 80
    site.save()
    return home


@pytest.fixture
def site_client(site_home: HomePage) -> Client:
    return Client(HTTP_HOST=HOST)
