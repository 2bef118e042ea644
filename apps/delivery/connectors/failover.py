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
    from apps.delivery.dispatch import prepare  # the dispatcher imports this module

    # This process's cached sender still holds the primary; drop it so the next batch
    # resolves again (other workers' caches expire within seconds).
    prepare._senders.items.clear()
    return results
