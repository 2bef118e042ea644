"""Failover: when a connector's account itself is refused (authentication failed,
account suspended) and the connector names a secondary, switch at once.

Runs on a batch's results before they are recorded: the connector is marked failing
(so ``connector_resolve`` hands out its secondary from now on), and each delivery the
refusal hit goes back to ``retrying`` instead of the dead letters, without spending
its attempt budget; the switch is recorded as that delivery's event. Transient
failures past the threshold flip the same status in the dispatcher's health update.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings

from apps.delivery.channels._http import ACCOUNT_SUSPENDED, AUTH_FAILED
from apps.delivery.models import Connector

if TYPE_CHECKING:
    from apps.delivery.dispatch.outcome import RowResult

# Codes adapters give a permanent answer that is the account's fault, not the message's.
PROVIDER_FAULT_CODES = frozenset({AUTH_FAILED, ACCOUNT_SUSPENDED})


def _provider_fault(result: RowResult) -> bool:
    return (
        result.attempted
        and result.outcome == "permanent"
        and result.code in PROVIDER_FAULT_CODES
        and result.connector_id is not None
    )


def failover_apply(results: list[RowResult], now: datetime) -> list[RowResult]:
    _note_transient_switch(results)
    faulted = {r.connector_id for r in results if _provider_fault(r)}
    if not faulted:
        return results
    secondaries = dict(
        Connector.objects.filter(pk__in=faulted, secondary__isnull=False).values_list("pk", "secondary_id")
    )
    if not secondaries:
        return results  # nowhere to go: the dead letter says why
    first_fault: dict[int, RowResult] = {}
    for result in results:
        if not _provider_fault(result) or result.connector_id not in secondaries:
            continue
        first_fault.setdefault(result.connector_id, result)
        result.reason = (
            f"failover: connector {result.connector_id} answered {result.code}; "
            f"retrying on connector {secondaries[result.connector_id]}"
        )
        result.state = "retrying"
        result.due_at = now
        # The refusal was the account's, not this message's: it costs no attempt.
        result.extra["budget"] = result.row.attempt_budget + 1
    for connector_id, result in first_fault.items():
        Connector.objects.filter(pk=connector_id).update(
            status=Connector.Status.FAILING,
            last_failure_at=now,
            last_error=f"failed over to connector {secondaries[connector_id]}: {result.code}: {result.message}"[:2000],
        )
    _forget_cached_senders()
    return results


def _forget_cached_senders() -> None:
    from apps.delivery.dispatch import prepare  # the dispatcher imports this module

    # This process's cached sender still holds the primary; drop it so the next batch
    # resolves again (other workers' caches expire within seconds).
    prepare._senders.items.clear()


def _note_transient_switch(results: list[RowResult]) -> None:
    """A connector whose failures in this batch take it past the threshold is marked
    failing by the dispatcher's health update; say so on the deliveries that will now
    be retried on its secondary, so the switch is in their event history."""
    by_connector: dict[int, list[RowResult]] = {}
    for result in results:
        if result.attempted and result.connector_id is not None:
            by_connector.setdefault(result.connector_id, []).append(result)
    candidates = {
        connector_id: [r for r in items if not r.throttled]
        for connector_id, items in by_connector.items()
        if not any(r.outcome == "accepted" for r in items) and any(not r.throttled for r in items)
    }
    if not candidates:
        return
    threshold = settings.TIDINGS_CONNECTOR_FAILURE_THRESHOLD
    switching = {
        pk: secondary_id
        for pk, secondary_id, failures in Connector.objects.filter(
            pk__in=candidates, status=Connector.Status.HEALTHY, secondary__isnull=False
        ).values_list("pk", "secondary_id", "consecutive_failures")
        if failures + len(candidates[pk]) >= threshold
    }
    for connector_id, secondary_id in switching.items():
        for result in candidates[connector_id]:
            if result.state == "retrying":
                result.reason = (
                    f"failover: connector {connector_id} kept failing ({result.reason}); "
                    f"retrying on connector {secondary_id}"
                )
    if switching:
        _forget_cached_senders()
