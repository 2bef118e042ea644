"""Channel tests talk to servers on 127.0.0.1, so private targets are allowed unless a
test (the SSRF ones) turns the guard back on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _allow_local_provider_servers(settings: Any) -> Iterator[None]:
    settings.TIDINGS_WEBHOOK_ALLOW_PRIVATE = True
    yield
