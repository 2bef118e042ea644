"""Sign-in throttling on the console (allauth, by email) and the Django admin (by username):
per account and per client, one count per account whichever page names it."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

COOL_OFF = timedelta(seconds=3)
RIGHT = "correct-horse-battery"
LOCKED = "Signing in is locked"
SIGN_IN_PAGES = {"console": "/console/login/", "admin": "/admin/login/"}


@pytest.fixture(autouse=True)
def short_cool_off(settings: Any) -> None:
    settings.AXES_COOLOFF_TIME = COOL_OFF
    settings.AXES_FAILURE_LIMIT = 5


@pytest.fixture(params=sorted(SIGN_IN_PAGES))
def page(request: pytest.FixtureRequest) -> str:
    return SIGN_IN_PAGES[request.param]


@pytest.fixture
def staff_user() -> Any:
    # Staff, so the same account may sign in to the admin as well as the console.
    return UserFactory(is_staff=True, is_superuser=True)


def sign_in(client: Client, page: str, who: Any, password: str, ip: str) -> Any:
    """``who`` is a user (named as the page asks: email on the console, username in the
    admin) or a made-up account name."""
    if page.startswith("/admin/"):
        name = who if isinstance(who, str) else who.username
        return client.post(page, {"username": name, "password": password, "next": "/admin/"}, REMOTE_ADDR=ip)
    name = who if isinstance(who, str) else who.email
    return client.post(page, {"login": name, "password": password, "next": "/console/"}, REMOTE_ADDR=ip)


def assert_signed_in(client: Client, response: Any, user: Any) -> None:
    assert response.status_code == 302, response.content.decode()[:500]
    assert client.session.get("_auth_user_id") == str(user.pk)


def assert_locked(client: Client, response: Any) -> None:
    assert response.status_code == 429
    assert LOCKED in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_wrong_passwords_lock_the_account_from_every_client(page: str, staff_user: Any) -> None:
    client = Client()
    for attempt in range(1, 31):
        # A new client address each time: only the account's own count can lock it.
        response = sign_in(client, page, staff_user, "wrong-guess", f"198.51.100.{attempt}")
        if attempt < 5:
            assert response.status_code == 200
            assert LOCKED not in response.content.decode()
        else:
            assert_locked(client, response)
        if attempt == 3:
            assert "2 more failed attempts will lock signing in" in response.content.decode()

    assert_locked(client, sign_in(client, page, staff_user, RIGHT, "203.0.113.50"))

    time.sleep(COOL_OFF.total_seconds() + 0.5)
    assert_signed_in(client, sign_in(client, page, staff_user, RIGHT, "203.0.113.51"), staff_user)


def test_wrong_passwords_lock_the_client_for_every_account(page: str, staff_user: Any, secret_client: Any) -> None:
    attacker = "192.0.2.66"
    client = Client()
    for attempt in range(1, 31):
        # A new account name each time: only the client's own count can lock it.
        response = sign_in(client, page, f"guess-{attempt}@example.com", "wrong-guess", attacker)
        if attempt < 5:
            assert response.status_code == 200
        else:
            assert_locked(client, response)

    assert_locked(client, sign_in(client, page, staff_user, RIGHT, attacker))
    # The account itself is not locked: another client signs in to it.
    elsewhere = Client()
    assert_signed_in(elsewhere, sign_in(elsewhere, page, staff_user, RIGHT, "203.0.113.60"), staff_user)
    # API keys never sign in, so the locked client's API calls still pass.
    assert secret_client.get("/api/v1/me", REMOTE_ADDR=attacker).status_code == 200

    time.sleep(COOL_OFF.total_seconds() + 0.5)
    assert_signed_in(client, sign_in(client, page, staff_user, RIGHT, attacker), staff_user)


def test_behind_a_trusted_proxy_the_client_is_the_forwarded_address(settings: Any, staff_user: Any) -> None:
    settings.TIDINGS_TRUSTED_PROXY_COUNT = 1
    client = Client()
    for attempt in range(5):
        response = client.post(
            "/console/login/",
            {"login": f"guess-{attempt}@example.com", "password": "wrong-guess"},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR="spoofed, 192.0.2.77",
        )
    assert_locked(client, response)
    # Another client behind the same proxy is not locked with it.
    other = Client()
    response = other.post(
        "/console/login/",
        {"login": staff_user.email, "password": RIGHT},
        REMOTE_ADDR="10.0.0.1",
        HTTP_X_FORWARDED_FOR="192.0.2.78",
    )
    assert_signed_in(other, response, staff_user)


def test_cms_sign_in_page_reports_the_lock(staff_user: Any) -> None:
    client = Client()
    for _ in range(5):
        response = client.post(
            "/cms/login/", {"username": staff_user.username, "password": "wrong-guess"}, REMOTE_ADDR="192.0.2.90"
        )
    assert_locked(client, response)


def test_the_lock_reads_the_same_under_asgi(staff_user: Any) -> None:
    """The web process serves ASGI: the async middleware path must give the same page."""
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    client = AsyncClient()
    post = async_to_sync(client.post)
    for attempt in range(6):
        body = {"login": staff_user.email, "password": f"wrong-{attempt}"}
        response = post("/console/login/", body, REMOTE_ADDR="192.0.2.95")
    assert response.status_code == 429
    assert LOCKED in response.content.decode()
    assert "Sign in to Tidings" in response.content.decode()


def test_wrong_passwords_on_the_console_lock_the_same_account_in_the_admin(staff_user: Any) -> None:
    console, admin = Client(), Client()
    for attempt in range(5):
        # The console names the account by its email, in any case; the admin by username.
        sign_in(console, SIGN_IN_PAGES["console"], staff_user.email.upper(), "wrong-guess", f"198.51.100.{attempt}")
    assert_locked(admin, sign_in(admin, SIGN_IN_PAGES["admin"], staff_user, RIGHT, "203.0.113.70"))
