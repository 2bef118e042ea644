"""An execution's live progress: counts per node and per journey state, for polling pages.

There is no per-node roll-up table: counters on the step hot path would make every runner
queue on the same few rows. The counts are one grouped query over the (execution, node,
state) step index instead, and every viewer of an execution shares each result for half a
second, so many open pages cost no more than one.
"""

from __future__ import annotations

from time import time as clock
from typing import Any

from django.core.cache import cache

from apps.projects.models import Project
from apps.workflows.models import Execution
from apps.workflows.selectors import execution_journey_counts, execution_node_counts

# Short enough that a page polling every second shows a change within two.
SHARED_FOR_SECONDS = 0.5
FINISHED = (Execution.State.COMPLETED, Execution.State.CANCELLED)


def execution_progress(project: Project, execution: Execution) -> dict[str, Any]:
    """Counts per node (active, waiting, done, failed, cancelled) and journeys per state."""
    finished = execution.state in FINISHED
    # A finished execution's counts never change again; a running one's key moves on every
    # half second, so a stored answer is never older than that.
    window = "final" if finished else str(int(clock() / SHARED_FOR_SECONDS))
    key = f"workflows:progress:{project.pk}:{execution.pk}:{window}"
    progress = cache.get(key)
    if progress is None:
        journeys = execution_journey_counts(project, execution)
        progress = {
            "nodes": execution_node_counts(project, execution),
            "totals": {"journeys": sum(journeys.values()), **journeys},
        }
        cache.set(key, progress, 3600 if finished else 2)
    return progress
