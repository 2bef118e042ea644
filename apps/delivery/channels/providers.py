"""Importing this module registers every real provider adapter."""

from __future__ import annotations

from . import (  # noqa: F401
    chat_slack,
    chat_teams,
    email_anymail,
    email_ses,
    fcm,
    sms_twilio,
    smtp,
    webhook_out,
    whatsapp_cloud,
)
