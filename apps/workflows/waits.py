"""When a wait resumes: the one function behind wait steps, the preview API and the console.

Wait configs (``mode`` picks the kind):
  {"mode": "duration", "days": 1, "hours": 2, "minutes": 0, "seconds": 0, "weeks": 0}
  {"mode": "time_of_day", "time": "09:00"}                 next local 09:00
  {"mode": "weekday", "weekday": "tuesday", "time": "09:00"} next local Tuesday 09:00
  {"mode": "day_of_month", "day": 31, "time": "09:00"}     next month that has a 31st
  {"mode": "datetime", "at": "2026-12-25T09:00"}           local, or absolute with an offset

"Next" means strictly after ``now``. Days and weeks in a duration are plain multiples of
24 hours. Local times are read in the subscriber's timezone, else the project's.

DST rules, pinned by tests:
- a local time skipped by a spring-forward resolves to the next valid minute of that day
  (Lisbon 2026-03-29 01:30 -> 02:00 WEST);
- a local time that happens twice takes its first occurrence (Lisbon 2026-10-25 01:30 ->
  01:30 WEST, i.e. 00:30 UTC).
A day of the month that a month lacks (31 in April) skips that month; it is never moved to
the month's last day, so "the 31st" only ever fires on a 31st.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
LOCAL_MODES = frozenset({"time_of_day", "weekday", "day_of_month", "datetime"})
DURATION_UNITS = {"weeks": 7 * 86400, "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}
_TIME = re.compile(r"^(\d{2}):(\d{2})$")
# Day-of-month waits look this far ahead for a month that has the day (always found within 12).
_MONTHS_AHEAD = 14


class WaitConfigError(ValueError):
    pass


def parse_time(value: str) -> time:
    match = _TIME.match(value or "")
    if not match:
        raise WaitConfigError(f"{value!r} is not a time of day as HH:MM.")
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 23 or minute > 59:
        raise WaitConfigError(f"{value!r} is not a time of day: hours run 00-23 and minutes 00-59.")
    return time(hour, minute)


def parse_fixed(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise WaitConfigError(f"{value!r} is not a date and time such as 2026-12-25T09:00.") from None
    return parsed


def needs_timezone(config: Mapping[str, Any]) -> bool:
    mode = config.get("mode")
    if mode == "datetime":
        try:
            return parse_fixed(str(config.get("at", ""))).tzinfo is None
        except WaitConfigError:
            return True
    return mode in LOCAL_MODES


def check_config(config: Mapping[str, Any]) -> None:
    """Raise ``WaitConfigError`` for values a schema cannot refuse (25:00, 31 February)."""
    mode = config.get("mode")
    if mode == "duration":
        total = sum(int(config.get(unit, 0) or 0) * seconds for unit, seconds in DURATION_UNITS.items())
        if total <= 0:
            raise WaitConfigError("A duration wait needs a positive length.")
    elif mode in {"time_of_day", "weekday", "day_of_month"}:
        parse_time(str(config.get("time", "")))
        if mode == "weekday" and str(config.get("weekday", "")).lower() not in WEEKDAYS:
            raise WaitConfigError(f"{config.get('weekday')!r} is not a weekday (monday … sunday).")
        if mode == "day_of_month" and not 1 <= int(config.get("day", 0)) <= 31:
            raise WaitConfigError(f"Day {config.get('day')} is not a day of the month (1-31).")
    elif mode == "datetime":
        parse_fixed(str(config.get("at", "")))
    else:
        raise WaitConfigError(f"Unknown wait mode {mode!r}.")


def localize(wall: datetime, tz: tzinfo) -> datetime:
    """A local wall-clock time as an instant, by the DST rules in the module docstring."""
    wall = wall.replace(tzinfo=None, second=0, microsecond=0)
    # zoneinfo: fold=0 is the earlier of two occurrences, so a repeated time takes the first.
    if _exists(wall, tz):
        return wall.replace(tzinfo=tz, fold=0)
    candidate = wall + timedelta(minutes=1)
    while candidate.date() == wall.date():
        if _exists(candidate, tz):
            return candidate.replace(tzinfo=tz, fold=0)
        candidate += timedelta(minutes=1)
    # No valid minute left that day (no real zone does this): midnight of the next day.
    return localize(datetime.combine(wall.date() + timedelta(days=1), time(0, 0)), tz)


def _exists(wall: datetime, tz: tzinfo) -> bool:
    aware = wall.replace(tzinfo=tz, fold=0)
    return aware.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == wall


def resume_at(config: Mapping[str, Any], now: datetime, tz: tzinfo | None) -> datetime:
    """The instant (UTC) a subscriber reaching this wait at ``now`` resumes."""
    check_config(config)
    now = now.astimezone(UTC)
    mode = config["mode"]
    if mode == "duration":
        seconds = sum(int(config.get(unit, 0) or 0) * length for unit, length in DURATION_UNITS.items())
        return now + timedelta(seconds=seconds)
    if mode == "datetime":
        fixed = parse_fixed(str(config["at"]))
        if fixed.tzinfo is None:
            fixed = localize(fixed, _require(tz))
        # A moment already past resumes at once rather than never.
        return max(fixed.astimezone(UTC), now)
    zone = _require(tz)
    at = parse_time(str(config["time"]))
    today = now.astimezone(zone).date()
    if mode == "time_of_day":
        days: Any = (today + timedelta(days=n) for n in range(0, 3))
    elif mode == "weekday":
        wanted = WEEKDAYS.index(str(config["weekday"]).lower())
        days = (today + timedelta(days=n) for n in range(0, 15) if (today + timedelta(days=n)).weekday() == wanted)
    else:
        days = _month_days(today, int(config["day"]))
    for day in days:
        candidate = localize(datetime.combine(day, at), zone).astimezone(UTC)
        if candidate > now:
            return candidate
    raise WaitConfigError("No resume time found.")  # unreachable for checked configs


def _month_days(start: date, day: int) -> Any:
    year, month = start.year, start.month
    for _ in range(_MONTHS_AHEAD):
        if day <= calendar.monthrange(year, month)[1]:
            yield date(year, month, day)
        month += 1
        if month > 12:
            year, month = year + 1, 1


def _require(tz: tzinfo | None) -> tzinfo:
    if tz is None:
        raise WaitConfigError("This wait needs a timezone: set one on the subscriber or the project.")
    return tz
