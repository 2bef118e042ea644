"""Importing this module registers every real provider adapter."""

from __future__ import annotations

from . import email_anymail, email_ses, smtp  # noqa: F401
