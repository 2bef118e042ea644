"""Importing this module registers every real provider adapter."""

from __future__ import annotations

from . import email_anymail, email_ses, fcm, smtp  # noqa: F401
