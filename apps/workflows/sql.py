"""Small helpers for the engine's hand-written Postgres statements."""

from __future__ import annotations

from collections.abc import Iterable


def id_array(ids: Iterable[int]) -> str:
    """A Postgres array literal of ids (bind it with ``::bigint[]``).

    One string to bind instead of a list for the driver to dump element by element, and
    instead of an ORM ``pk__in``: for batches of a thousand ids both cost more in Python
    than the statement costs in Postgres.
    """
    return "{" + ",".join(str(int(i)) for i in ids) + "}"
