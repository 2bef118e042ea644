"""Custom SMTP: TLS modes, certificate checks, domain ownership, connection reuse."""

from __future__ import annotations

from typing import Any

import pytest

from apps.delivery.channels.base import ConfigError, Outcome
from tests.channels.cases import EMAIL_CONTENT
from tests.channels.helpers import make_adapter, message
from tests.channels.smtp_server import PASSWORD, USERNAME, self_signed_certificate, smtp_server

CREDENTIALS = {"username": USERNAME, "password": PASSWORD}


def smtp_settings(server: Any, **overrides: Any) -> dict[str, Any]:
    return {
        "host": server.host,
        "port": server.port,
        "security": "starttls",
        "domain": "tidings.test",
        "from_email": "news@tidings.test",
        "ca_certificate": self_signed_certificate()[0],
        "timeout": 2,
        **overrides,
    }


def send(settings: dict[str, Any], *destinations: str, credentials: dict[str, Any] = CREDENTIALS, **content: Any):  # type: ignore[no-untyped-def]
    adapter = make_adapter("email:smtp", credentials, settings, validate=False)
    return adapter.send_batch([message("email", d, {**EMAIL_CONTENT, **content}) for d in destinations])


def test_batch_reuses_one_starttls_session() -> None:
    with smtp_server("starttls") as server:
        results = send(smtp_settings(server), "a@example.com", "b@example.com", "c@example.com")
    assert [r.outcome for r in results] == [Outcome.ACCEPTED] * 3
    assert len(server.handler.messages) == 3
    assert len(server.handler.sessions) == 1
    assert len({r.provider_reference for r in results}) == 3


def test_implicit_tls_sends() -> None:
    with smtp_server("ssl") as server:
        [result] = send(smtp_settings(server, security="ssl"), "a@example.com")
    assert result.outcome == Outcome.ACCEPTED
    assert server.handler.messages[0].mail_from == "news@tidings.test"


def test_port_465_means_implicit_tls_when_security_is_not_given() -> None:
    from apps.delivery.channels.smtp import security_mode

    assert security_mode({"port": 465}) == "ssl"
    assert security_mode({"port": 587}) == "starttls"
    assert security_mode({"port": 25}) == "starttls"  # plain is never implied


def test_host_that_refuses_tls_fails_permanently_and_sends_nothing() -> None:
    with smtp_server("plain") as server:
        [result] = send(smtp_settings(server), "a@example.com")
    assert result.outcome == Outcome.PERMANENT
    assert result.code == "tls_refused"
    assert server.handler.messages == []


def test_plain_smtp_only_when_explicitly_chosen() -> None:
    with smtp_server("plain") as server:
        [result] = send(smtp_settings(server, security="none"), "a@example.com")
    assert result.outcome == Outcome.ACCEPTED


def test_untrusted_certificate_is_refused() -> None:
    with smtp_server("starttls") as server:
        [result] = send(smtp_settings(server, ca_certificate=""), "a@example.com")
    assert result.outcome == Outcome.PERMANENT
    assert result.code == "tls_failed"
    assert server.handler.messages == []


def test_wrong_password_is_a_permanent_auth_failure() -> None:
    with smtp_server("starttls") as server:
        [result] = send(smtp_settings(server), "a@example.com", credentials={"username": USERNAME, "password": "nope"})
    assert result.outcome == Outcome.PERMANENT
    assert result.code == "auth_failed"


def test_from_address_outside_the_connector_domain_is_refused() -> None:
    with smtp_server("starttls") as server:
        settings = smtp_settings(server)
        [result] = send(settings, "a@example.com", from_email="ceo@elsewhere.test")
        with pytest.raises(ConfigError) as error:
            make_adapter("email:smtp", CREDENTIALS, {**settings, "from_email": "news@nottidings.test"})
    assert result.outcome == Outcome.PERMANENT
    assert result.code == "from_domain_mismatch"
    assert server.handler.recipients == []
    assert error.value.field == "from_email"


def test_subdomain_of_the_connector_domain_is_allowed() -> None:
    with smtp_server("starttls") as server:
        [result] = send(smtp_settings(server), "a@example.com", from_email="alerts@mail.tidings.test")
    assert result.outcome == Outcome.ACCEPTED
