"""Hooks the delivery app registers with the apps below it."""

from __future__ import annotations

from django.db import connection


def deliveries_move_subscriber(project_id: int, from_id: int, to_id: int) -> None:
    """Called inside the subscriber merge transaction: one history for the survivor."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE delivery_delivery SET subscriber_id = %s WHERE project_id = %s AND subscriber_id = %s",
            [to_id, project_id, from_id],
        )
