"""Shared fixtures: tenants, keys, API clients, and a real Celery worker process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.governance.models import ApiKey
from apps.governance.services import api_key_create
from apps.projects.models import Project
from tests.factories import MembershipFactory, ProjectFactory

pytest_plugins = ["tests.fixtures.worker", "tests.fixtures.browser"]


@pytest.fixture
def project(db: Any) -> Project:
    return ProjectFactory()


@pytest.fixture
def other_project(db: Any) -> Project:
    return ProjectFactory()


@pytest.fixture
def make_key(db: Any) -> Callable[..., tuple[ApiKey, str]]:
    def _make(project: Project, kind: str = "secret", **kwargs: Any) -> tuple[ApiKey, str]:
        return api_key_create(project=project, name=kwargs.pop("name", f"{kind} key"), kind=kind, **kwargs)

    return _make


def _client_for(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.fixture
def secret_client(project: Project, make_key: Callable[..., tuple[ApiKey, str]]) -> APIClient:
    return _client_for(make_key(project, "secret")[1])


@pytest.fixture
def public_client(project: Project, make_key: Callable[..., tuple[ApiKey, str]]) -> APIClient:
    return _client_for(make_key(project, "public")[1])


@pytest.fixture
def other_secret_client(other_project: Project, make_key: Callable[..., tuple[ApiKey, str]]) -> APIClient:
    return _client_for(make_key(other_project, "secret")[1])


@pytest.fixture
def client_for() -> Callable[[str], APIClient]:
    return _client_for


@pytest.fixture
def owner(project: Project) -> Any:
    return MembershipFactory(organization=project.organization, role="owner").user


@pytest.fixture(autouse=True)
def _clear_cache() -> Iterator[None]:
    from django.core.cache import cache

    from apps.governance import services as governance_services

    cache.clear()
    governance_services._marked_in_process.clear()
    yield
