"""The publish request's plain-input path answers exactly as the serializer does."""

from __future__ import annotations

from typing import Any

import pytest

from apps.notifications.api.serializers import MAX_RECIPIENTS, NotificationPublishInput, publish_input_plain

BASE: dict[str, Any] = {"template": "welcome", "to": ["ada"], "channels": ["email"]}

# Bodies the plain path must take as they are.
PLAIN = [
    BASE,
    {**BASE, "template": "welcome@3", "priority": "high", "data": {"name": "Ada", "n": 1, "nested": {"a": [1]}}},
    {**BASE, "to": ["ada", {"email": "a@example.com"}, {"phone": "+351912345678"}], "channels": ["email", "sms"]},
    {**BASE, "priority": "bulk", "data": {}, "send_at": None},
    {**BASE, "to": [f"s{i}" for i in range(MAX_RECIPIENTS)], "data": {"x": None}},
    {**BASE, "template": "w" * 120},
]

# Everything else: refusals, and valid bodies the serializer alone normalises.
OTHER = [
    {},
    [],
    None,
    "welcome",
    {**BASE, "template": ""},
    {**BASE, "template": "   "},
    {**BASE, "template": " welcome "},
    {**BASE, "template": "w" * 121},
    {**BASE, "template": "wel\x00come"},
    {**BASE, "template": "wélcome"},
    {**BASE, "template": 5},
    {**BASE, "template": None},
    {**BASE, "template": True},
    {k: v for k, v in BASE.items() if k != "template"},
    {**BASE, "to": []},
    {**BASE, "to": "ada"},
    {**BASE, "to": {"email": "a@example.com"}},
    {**BASE, "to": [None]},
    {**BASE, "to": [5]},
    {**BASE, "to": [{"email": 5}]},
    {**BASE, "to": [["ada"]]},
    {**BASE, "to": [f"s{i}" for i in range(MAX_RECIPIENTS + 1)]},
    {k: v for k, v in BASE.items() if k != "to"},
    {**BASE, "channels": []},
    {**BASE, "channels": "email"},
    {**BASE, "channels": ["email", "email"]},
    {**BASE, "channels": ["fax"]},
    {**BASE, "channels": ["Email"]},
    {**BASE, "channels": [None]},
    {**BASE, "channels": [1]},
    {k: v for k, v in BASE.items() if k != "channels"},
    {**BASE, "priority": "urgent"},
    {**BASE, "priority": None},
    {**BASE, "priority": ""},
    {**BASE, "priority": 1},
    {**BASE, "data": None},
    {**BASE, "data": []},
    {**BASE, "data": "x"},
    {**BASE, "send_at": "2030-01-01T00:00:00Z"},
    {**BASE, "send_at": "tomorrow"},
    {**BASE, "send_at": 5},
    {**BASE, "extra": 1},
]


def _serializer_answer(body: Any) -> dict | None:
    serializer = NotificationPublishInput(data=body)
    return dict(serializer.validated_data) if serializer.is_valid() else None


@pytest.mark.parametrize("body", PLAIN, ids=range(len(PLAIN)))
def test_plain_bodies_skip_the_serializer_with_the_same_result(body: Any) -> None:
    expected = _serializer_answer(body)
    assert expected is not None
    plain = publish_input_plain(body)
    assert plain == expected
    assert {k: type(v) for k, v in plain.items()} == {k: type(v) for k, v in expected.items()}


@pytest.mark.parametrize("body", OTHER, ids=range(len(OTHER)))
def test_every_other_body_is_left_to_the_serializer(body: Any) -> None:
    assert publish_input_plain(body) is None


def test_the_plain_answer_is_a_copy_of_the_request() -> None:
    body = {**BASE, "data": {"name": "Ada"}}
    plain = publish_input_plain(body)
    assert plain is not None
    plain["to"].append("eve")
    plain["data"]["name"] = "Eve"
    plain["channels"].append("sms")
    assert body == {**BASE, "data": {"name": "Ada"}}
