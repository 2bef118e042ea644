"""Pauses the journey: a duration, or until a local time, weekday, day of month or date."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.workflows import waits
from apps.workflows.nodes.base import GraphIssue, NodeBatch, NodeType, Outcome, register_node

_TIME = {"type": "string", "pattern": "^[0-9]{2}:[0-9]{2}$"}
_UNIT = {"type": "integer", "minimum": 0, "maximum": 100000}


@register_node
class WaitNode(NodeType):
    type = "wait"
    label = "Wait"
    description = "Pauses for a duration, or until a local time, weekday, day of the month or date."
    starter_config = {"mode": "duration", "days": 1}
    waits_for_time = True
    schema = {
        "type": "object",
        "required": ["mode"],
        "oneOf": [
            {
                "additionalProperties": False,
                "properties": {"mode": {"const": "duration"}, **dict.fromkeys(waits.DURATION_UNITS, _UNIT)},
            },
            {
                "additionalProperties": False,
                "required": ["time"],
                "properties": {"mode": {"const": "time_of_day"}, "time": _TIME},
            },
            {
                "additionalProperties": False,
                "required": ["weekday", "time"],
                "properties": {"mode": {"const": "weekday"}, "weekday": {"enum": list(waits.WEEKDAYS)}, "time": _TIME},
            },
            {
                "additionalProperties": False,
                "required": ["day", "time"],
                "properties": {
                    "mode": {"const": "day_of_month"},
                    "day": {"type": "integer", "minimum": 1, "maximum": 31},
                    "time": _TIME,
                },
            },
            {
                "additionalProperties": False,
                "required": ["at"],
                "properties": {"mode": {"const": "datetime"}, "at": {"type": "string", "minLength": 10}},
            },
        ],
    }
    example_config = {"mode": "weekday", "weekday": "tuesday", "time": "09:00"}

    def needs_timezone(self, config: Mapping[str, Any]) -> bool:
        return waits.needs_timezone(config)

    def semantic_issues(self, node_id: str, config: Mapping[str, Any]) -> list[GraphIssue]:
        try:
            waits.check_config(config)
        except waits.WaitConfigError as error:
            return [GraphIssue("invalid_wait", f"Node {node_id!r}: {error}", node=node_id)]
        return []

    def execute(self, batch: NodeBatch) -> dict[int, Outcome]:
        outcomes: dict[int, Outcome] = {}
        for step in batch.steps:
            if step.resumed:
                outcomes[step.id] = Outcome.follow()
                continue
            tz = batch.ctx.timezone_for(step.subscriber_id)
            try:
                until = waits.resume_at(batch.config, batch.ctx.now, tz)
            except waits.WaitConfigError as error:
                # Only reachable when every timezone vanished after publish.
                outcomes[step.id] = Outcome.fail(str(error))
                continue
            outcomes[step.id] = Outcome.wait(until, reason="wait", tz=str(tz) if tz else "")
        return outcomes
