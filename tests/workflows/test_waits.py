"""resume_at: every wait kind, and the DST rules, pinned with real zones."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from apps.workflows.waits import WaitConfigError, check_config, localize, resume_at

LISBON = ZoneInfo("Europe/Lisbon")
NEW_YORK = ZoneInfo("America/New_York")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_duration_days_are_plain_24_hours_even_across_dst():
    # Lisbon springs forward on 2026-03-29: one "day" later is still exactly 24 h.
    assert resume_at({"mode": "duration", "days": 1}, utc(2026, 3, 28, 12), LISBON) == utc(2026, 3, 29, 12)
    assert resume_at({"mode": "duration", "hours": 1, "minutes": 30}, utc(2026, 1, 1), None) == utc(2026, 1, 1, 1, 30)


def test_time_of_day_later_today_in_subscriber_zone():
    # 08:00 UTC in New York (EST, -5) is 03:00 local: 09:00 local today is 14:00 UTC.
    assert resume_at({"mode": "time_of_day", "time": "09:00"}, utc(2026, 1, 15, 8), NEW_YORK) == utc(2026, 1, 15, 14)


def test_time_of_day_already_past_means_tomorrow():
    assert resume_at({"mode": "time_of_day", "time": "09:00"}, utc(2026, 1, 15, 10), LISBON) == utc(2026, 1, 16, 9)


def test_time_of_day_exactly_now_is_not_next():
    assert resume_at({"mode": "time_of_day", "time": "09:00"}, utc(2026, 1, 15, 9), LISBON) == utc(2026, 1, 16, 9)


def test_wait_until_skipped_local_time_takes_next_minute_lisbon():
    # 2026-03-29 Lisbon: 01:00 WET jumps to 02:00 WEST; 01:30 never happens -> 02:00 WEST = 01:00 UTC.
    assert resume_at({"mode": "time_of_day", "time": "01:30"}, utc(2026, 3, 28, 23), LISBON) == utc(2026, 3, 29, 1, 0)


def test_wait_until_skipped_local_time_takes_next_minute_new_york():
    # 2026-03-08 New York: 02:00 EST jumps to 03:00 EDT; 02:30 -> 03:00 EDT = 07:00 UTC.
    assert resume_at({"mode": "time_of_day", "time": "02:30"}, utc(2026, 3, 8, 5), NEW_YORK) == utc(2026, 3, 8, 7)


def test_wait_until_repeated_local_time_takes_first_occurrence_lisbon():
    # 2026-10-25 Lisbon: 02:00 WEST falls back to 01:00 WET; 01:30 happens twice, first at 00:30 UTC.
    assert resume_at({"mode": "time_of_day", "time": "01:30"}, utc(2026, 10, 24, 22), LISBON) == utc(
        2026, 10, 25, 0, 30
    )


def test_wait_until_repeated_local_time_takes_first_occurrence_new_york():
    # 2026-11-01 New York: 01:30 happens at 05:30 UTC (EDT) and again at 06:30 UTC (EST).
    assert resume_at({"mode": "time_of_day", "time": "01:30"}, utc(2026, 11, 1, 4), NEW_YORK) == utc(2026, 11, 1, 5, 30)


def test_localize_keeps_valid_times_and_moves_only_the_gap():
    assert localize(datetime(2026, 3, 29, 0, 59), LISBON).astimezone(UTC) == utc(2026, 3, 29, 0, 59)
    assert localize(datetime(2026, 3, 29, 1, 0), LISBON).astimezone(UTC) == utc(2026, 3, 29, 1, 0)
    assert localize(datetime(2026, 3, 29, 2, 15), LISBON).astimezone(UTC) == utc(2026, 3, 29, 1, 15)


def test_weekday_next_tuesday_at_time():
    # 2026-01-15 is a Thursday; next Tuesday is 2026-01-20.
    config = {"mode": "weekday", "weekday": "tuesday", "time": "09:00"}
    assert resume_at(config, utc(2026, 1, 15, 12), LISBON) == utc(2026, 1, 20, 9)


def test_weekday_same_day_later_counts_and_earlier_rolls_a_week():
    config = {"mode": "weekday", "weekday": "thursday", "time": "18:00"}
    assert resume_at(config, utc(2026, 1, 15, 12), LISBON) == utc(2026, 1, 15, 18)
    assert resume_at(config, utc(2026, 1, 15, 19), LISBON) == utc(2026, 1, 22, 18)


def test_day_of_month_skips_months_without_that_day():
    # From 2026-04-05: April has no 31st, so the next 31st is 2026-05-31 (WEST, -1 h).
    config = {"mode": "day_of_month", "day": 31, "time": "09:00"}
    assert resume_at(config, utc(2026, 4, 5), LISBON) == utc(2026, 5, 31, 8)


def test_day_of_month_february_29_waits_for_a_leap_year():
    config = {"mode": "day_of_month", "day": 29, "time": "10:00"}
    assert resume_at(config, utc(2026, 2, 1), LISBON) == utc(2026, 3, 29, 9)


def test_fixed_datetime_local_and_absolute():
    assert resume_at({"mode": "datetime", "at": "2026-12-25T09:00"}, utc(2026, 1, 1), NEW_YORK) == utc(2026, 12, 25, 14)
    at = {"mode": "datetime", "at": "2026-12-25T09:00+00:00"}
    assert resume_at(at, utc(2026, 1, 1), None) == utc(2026, 12, 25, 9)


def test_fixed_datetime_in_the_past_resumes_now():
    now = utc(2027, 1, 1)
    assert resume_at({"mode": "datetime", "at": "2026-12-25T09:00"}, now, LISBON) == now


@pytest.mark.parametrize(
    "config",
    [
        {"mode": "datetime", "at": "2026-02-31T09:00"},
        {"mode": "time_of_day", "time": "25:00"},
        {"mode": "time_of_day", "time": "09:60"},
        {"mode": "weekday", "weekday": "funday", "time": "09:00"},
        {"mode": "day_of_month", "day": 32, "time": "09:00"},
        {"mode": "duration"},
        {"mode": "sometime"},
    ],
)
def test_impossible_waits_are_refused(config):
    with pytest.raises(WaitConfigError):
        check_config(config)


def test_local_wait_without_any_timezone_is_refused():
    with pytest.raises(WaitConfigError, match="timezone"):
        resume_at({"mode": "time_of_day", "time": "09:00"}, utc(2026, 1, 1), None)
