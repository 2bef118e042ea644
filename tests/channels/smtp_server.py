"""A local SMTP server (aiosmtpd) with STARTTLS or implicit TLS and a self-signed
certificate made here with the cryptography package."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.channels.fakes import SLOW_DELAY, outcome_in

USERNAME = "relay-user"
PASSWORD = "relay-password-1234"


@lru_cache(maxsize=1)
def self_signed_certificate() -> tuple[str, str]:
    """(certificate PEM, private key PEM) for localhost / 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return cert_pem, key_pem


def server_ssl_context() -> ssl.SSLContext:
    cert_pem, key_pem = self_signed_certificate()
    directory = Path(tempfile.mkdtemp(prefix="tidings-smtp-"))
    (directory / "cert.pem").write_text(cert_pem)
    (directory / "key.pem").write_text(key_pem)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(directory / "cert.pem", directory / "key.pem")
    return context


@dataclass
class Handler:
    messages: list[Any] = field(default_factory=list)
    recipients: list[str] = field(default_factory=list)  # every RCPT, answered or not
    sessions: set[int] = field(default_factory=set)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        self.recipients.append(address)
        outcome = outcome_in(address)
        if outcome == "perm":
            return "550 5.1.1 mailbox does not exist"
        if outcome == "retry":
            return "451 4.3.0 try again later"
        if outcome == "slow":
            await asyncio.sleep(SLOW_DELAY)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.sessions.add(id(session))
        self.messages.append(envelope)
        return "250 2.0.0 queued"


def _authenticate(server, session, envelope, mechanism, auth_data) -> AuthResult:  # type: ignore[no-untyped-def]
    ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (
        USERNAME.encode(),
        PASSWORD.encode(),
    )
    return AuthResult(success=ok, handled=False)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class SMTPServer:
    host: str
    port: int
    handler: Handler

    @property
    def url(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def requests(self) -> list[str]:
        return self.handler.recipients


@contextmanager
def smtp_server(mode: str = "starttls") -> Iterator[SMTPServer]:
    """mode: "starttls" (STARTTLS required before AUTH/MAIL), "ssl" (implicit TLS),
    "plain" (no TLS offered at all)."""
    handler = Handler()
    port = _free_port()
    kwargs: dict[str, Any] = {"hostname": "127.0.0.1", "port": port}
    if mode == "starttls":
        kwargs.update(tls_context=server_ssl_context(), require_starttls=True)
        kwargs.update(authenticator=_authenticate, auth_require_tls=True)
    elif mode == "ssl":
        kwargs.update(ssl_context=server_ssl_context())
        kwargs.update(authenticator=_authenticate, auth_require_tls=False)
    else:
        kwargs.update(authenticator=_authenticate, auth_require_tls=False)
    controller = Controller(handler, **kwargs)
    controller.start()
    try:
        yield SMTPServer("127.0.0.1", port, handler)
    finally:
        controller.stop()
