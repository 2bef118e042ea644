"""Every real adapter, through its real library, against a local server speaking its
provider's API: accepted, retryable, permanent, a mixed batch, and a timeout."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from apps.delivery.channels import providers  # noqa: F401  (registers every adapter)
from apps.delivery.channels.base import ChannelAdapter, ConnectorConfig, OutboundMessage, Outcome, adapters
from tests.channels.cases import ALL_CASES, ProviderCase
from tests.channels.fakes import ADAPTER_TIMEOUT, SLOW_DELAY, FakeServer, fake_server

# Push adapters deactivate unregistered devices, so these touch the database.
pytestmark = pytest.mark.django_db


@pytest.fixture(params=ALL_CASES, ids=lambda case: case.key)
def case(request: pytest.FixtureRequest) -> ProviderCase:
    return request.param


@pytest.fixture
def server(case: ProviderCase, settings) -> Iterator[FakeServer]:  # type: ignore[no-untyped-def]
    settings.TIDINGS_WEBHOOK_ALLOW_PRIVATE = True
    serve = case.serve or (lambda: fake_server(case.responder()))
    with serve() as running:
        yield running


def build(case: ProviderCase, server: FakeServer) -> ChannelAdapter:
    adapter_class = adapters.get(case.key)
    channel, provider = case.key.split(":")
    settings = {**case.settings(server.url), "timeout": ADAPTER_TIMEOUT}
    credentials = case.credentials(server.url)
    adapter_class.validate_config(credentials, settings)
    return adapter_class(
        ConnectorConfig(
            project_id=1,
            channel=channel,
            provider=provider,
            credentials=credentials,
            settings=settings,
            connector_id=101,
        )
    )


def messages(case: ProviderCase, server: FakeServer, *outcomes: str) -> list[OutboundMessage]:
    return [
        OutboundMessage(
            delivery_id=n,
            delivery_key=f"notification:{case.channel}:{n}",
            channel=case.channel,
            destination=(destination := case.destination(outcome, n, server.url)),
            content=case.content(destination) if callable(case.content) else case.content,
        )
        for n, outcome in enumerate(outcomes, start=1)
    ]


def send(case: ProviderCase, server: FakeServer, *outcomes: str):  # type: ignore[no-untyped-def]
    adapter = build(case, server)
    try:
        return adapter.send_batch(messages(case, server, *outcomes))
    finally:
        adapter.close()


def sends(case: ProviderCase, server: FakeServer) -> int:
    return sum(1 for request in server.requests if case.is_send(request))


def test_accepted_message_keeps_the_provider_reference(case: ProviderCase, server: FakeServer) -> None:
    [result] = send(case, server, "ok")
    assert result.outcome == Outcome.ACCEPTED, result
    assert bool(result.provider_reference) == case.has_reference
    assert sends(case, server) == 1


def test_provider_refusing_for_now_is_retryable(case: ProviderCase, server: FakeServer) -> None:
    [result] = send(case, server, "retry")
    assert result.outcome == Outcome.RETRYABLE, result
    assert result.code


def test_provider_refusing_for_good_is_permanent(case: ProviderCase, server: FakeServer) -> None:
    [result] = send(case, server, "perm")
    assert result.outcome == Outcome.PERMANENT, result
    assert result.message
    assert result.destination_invalid == case.permanent_destination_invalid


def test_mixed_batch_answers_one_result_per_message_in_order(case: ProviderCase, server: FakeServer) -> None:
    results = send(case, server, "ok", "retry", "perm", "ok")
    assert [result.outcome for result in results] == [
        Outcome.ACCEPTED,
        Outcome.RETRYABLE,
        Outcome.PERMANENT,
        Outcome.ACCEPTED,
    ]
    if case.has_reference:
        assert results[0].provider_reference != results[3].provider_reference
    assert sends(case, server) == 4


def test_provider_timeout_is_retryable_and_bounded(case: ProviderCase, server: FakeServer) -> None:
    started = time.monotonic()
    [result] = send(case, server, "slow")
    elapsed = time.monotonic() - started
    assert result.outcome == Outcome.RETRYABLE, result
    assert result.code == "timeout"
    # Well before the provider would have answered: the adapter gave up at its timeout.
    assert elapsed < SLOW_DELAY
