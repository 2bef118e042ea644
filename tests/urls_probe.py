"""A URLconf tests fill with probe views that exercise the API plumbing."""

from __future__ import annotations

from typing import Any

urlpatterns: list[Any] = []
