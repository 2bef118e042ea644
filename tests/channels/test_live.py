"""One real send per provider, for people with real accounts. Skipped by default.

Run with TIDINGS_LIVE_TESTS=1 and, per provider, TIDINGS_LIVE_<CHANNEL>_<PROVIDER> set to
a JSON object {"credentials": {...}, "settings": {...}, "destination": "..."}; e.g.
TIDINGS_LIVE_EMAIL_POSTMARK='{"credentials": {"server_token": "..."},
"settings": {"from_email": "you@yourdomain"}, "destination": "test@blackhole.postmarkapp.com"}'.
"""

from __future__ import annotations

import json
import os

import pytest

from apps.delivery.channels.base import Outcome
from apps.delivery.connectors.services import TEST_CONTENT
from tests.channels.cases import ALL_CASES
from tests.channels.helpers import make_adapter, message

pytestmark = [
    pytest.mark.live,
    pytest.mark.django_db,
    pytest.mark.skipif(
        os.environ.get("TIDINGS_LIVE_TESTS") != "1", reason="live provider tests need TIDINGS_LIVE_TESTS=1"
    ),
]


@pytest.mark.parametrize("key", [case.key for case in ALL_CASES])
def test_real_provider_accepts_a_message(key: str, settings) -> None:  # type: ignore[no-untyped-def]
    raw = os.environ.get("TIDINGS_LIVE_" + key.replace(":", "_").upper())
    if not raw:
        pytest.skip(f"no live account configured for {key}")
    settings.TIDINGS_WEBHOOK_ALLOW_PRIVATE = False
    account = json.loads(raw)
    adapter = make_adapter(key, account["credentials"], account.get("settings", {}))
    channel = key.split(":")[0]
    [result] = adapter.send_batch(
        [message(channel, account["destination"], account.get("content") or TEST_CONTENT[channel])]
    )
    adapter.close()
    assert result.outcome == Outcome.ACCEPTED, result
