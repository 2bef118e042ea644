"""Shared behaviour of send nodes: enqueue deliveries, then wait for their final outcome.

A send step enqueues its deliveries through the delivery engine (origin_kind
"journey_step", origin_id = step id) and waits. The delivery origin listener wakes the
step when a delivery reaches a final state; the step then re-reads every delivery it
made and moves on only when all are final. A finally failed message still moves the
journey on (one undeliverable message must not freeze a person halfway); a step with no
destination at all (no email, no device token) fails at once and moves on too.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, ClassVar

from django.conf import settings

from apps.delivery.keys import delivery_key
from apps.workflows.context import BatchContext, SubscriberInfo
from apps.workflows.nodes.base import NodeBatch, NodeType, Outcome, References, StepRef

PENDING_DELIVERY_STATES = frozenset({"scheduled", "queued", "claimed", "retrying"})
SUCCESS_STATES = frozenset({"sent", "delivered"})
ORIGIN_KIND = "journey_step"

TEMPLATE_PROPERTY = {"type": "string", "minLength": 1, "maxLength": 100}
LANE_PROPERTY = {"enum": ["high", "normal", "bulk"]}


def recheck_after() -> timedelta:
    # The listener wakes a step as soon as a delivery is final; this is only the safety net.
    return timedelta(seconds=getattr(settings, "WORKFLOWS_SEND_RECHECK_SECONDS", 60))


class SendNode(NodeType):
    channel: ClassVar[str]

    def template_channel(self, config: Mapping[str, Any]) -> str:
        return self.channel

    def references(self, config: Mapping[str, Any]) -> References:
        connector = config.get("connector")
        return References(
            templates=[(str(config.get("template", "")), self.template_channel(config))],
            connectors=[(connector, self.template_channel(config))] if connector else [],
        )

    def destinations(self, config: Mapping[str, Any], info: SubscriberInfo, ctx: BatchContext) -> list[str]:
        raise NotImplementedError

    def missing_destination_reason(self) -> str:
        return "no_destination"

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        resumed = [step for step in batch.steps if step.resumed]
        fresh = [step for step in batch.steps if not step.resumed]
        outcomes = self._resume(batch, resumed) if resumed else {}
        if fresh:
            outcomes.update(self._send(batch, fresh))
        return outcomes

    def _send(self, batch: NodeBatch, steps: list[StepRef]) -> dict[int, Outcome]:
        from apps.delivery.services import DeliveryRequest

        ctx, config = batch.ctx, batch.config
        channel = self.template_channel(config)
        version_id = ctx.template_version_id(str(config["template"]), channel)
        if version_id is None:
            return {
                s.id: Outcome.fail("template_unpublished", handle="next", template=config["template"]) for s in steps
            }
        lane = str(config.get("lane") or "normal")
        outcomes: dict[int, Outcome] = {}
        requests = []
        until = ctx.now + recheck_after()
        for step in steps:
            info = ctx.subscriber(step.subscriber_id)
            addresses = self.destinations(config, info, ctx) if info and info.live else []
            if not addresses:
                outcomes[step.id] = Outcome.fail(self.missing_destination_reason(), handle="next")
                continue
            for address in addresses:
                requests.append(
                    DeliveryRequest(
                        channel=channel,
                        destination=address,
                        lane=lane,
                        delivery_key=delivery_key(f"{ORIGIN_KIND}:{step.id}", address),
                        origin_kind=ORIGIN_KIND,
                        origin_id=str(step.id),
                        template_version_id=version_id,
                        context={"subscriber": subscriber_render_context(info)},
                        subscriber_id=step.subscriber_id,
                        category=str(config.get("category") or ""),
                        connector_id=config.get("connector") or None,
                    )
                )
            outcomes[step.id] = Outcome.wait(until, reason="awaiting_delivery", deliveries=len(addresses))
        ctx.enqueue(requests)
        return outcomes

    def _resume(self, batch: NodeBatch, steps: list[StepRef]) -> dict[int, Outcome]:
        states = batch.ctx.delivery_states([s.id for s in steps])
        until = batch.ctx.now + recheck_after()
        outcomes: dict[int, Outcome] = {}
        for step in steps:
            mine = states.get(step.id, [])
            if any(state in PENDING_DELIVERY_STATES for state in mine):
                outcomes[step.id] = Outcome.wait(until, reason="awaiting_delivery", deliveries=len(mine))
                continue
            summary = {state: mine.count(state) for state in sorted(set(mine))}
            if mine and not any(state in SUCCESS_STATES for state in mine):
                outcomes[step.id] = Outcome.fail("delivery_failed", handle="next", deliveries=summary)
            else:
                outcomes[step.id] = Outcome.follow("next", deliveries=summary)
        return outcomes


def subscriber_render_context(info: SubscriberInfo) -> dict[str, Any]:
    return {
        "external_id": info.external_id,
        "email": info.email,
        "phone": info.phone,
        "timezone": info.timezone,
        "attributes": info.attributes,
    }


def base_schema(**extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["template", *extra.pop("_required", [])],
        "properties": {
            "template": TEMPLATE_PROPERTY,
            # A connector of the project's for this channel; without one, the channel's default.
            "connector": {"type": "integer", "minimum": 1},
            "lane": LANE_PROPERTY,
            "category": {"type": "string", "maxLength": 64},
            **extra,
        },
    }
