"""One claimed step as the runner carries it through a batch: what was read, then the results
that the batch writes back. Its own module, so the engine, the guarded node run and the
step writer all name it without importing one another."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from apps.workflows.models import Step


@dataclass
class Work:
    id: int
    project_id: int
    journey_id: int
    execution_id: int
    subscriber_id: int
    version_id: int
    node_id: str
    node_type: str
    previous_id: int | None
    resumed: bool
    new: bool
    depth: int = 0
    attempts: int = 1
    detail: dict[str, Any] = field(default_factory=dict)
    # results
    state: str = Step.State.RUNNING
    outcome: str = ""
    due_at: datetime | None = None
    waited: bool = False
    finished_at: datetime | None = None
