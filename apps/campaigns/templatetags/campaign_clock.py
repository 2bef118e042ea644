"""``{{ value|clock }}``: the campaign pages' one time format (see ``console.controls.clock``)."""

from __future__ import annotations

from datetime import datetime

from django import template

from apps.campaigns.console.controls import clock as format_clock

register = template.Library()


@register.filter
def clock(value: datetime | str | None) -> str:
    return format_clock(value)
