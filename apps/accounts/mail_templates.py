"""The branded content of every account email, seeded on the platform project.

Seeded once as version 1 of each template; platform staff then edit them in the
template editor like any other template, and sends always use the latest published
version. Every value a template uses is a string the caller puts in ``context``.
"""

from __future__ import annotations

from typing import Any

LAYOUT_NAME = "Tidings account mail"

LAYOUT_HTML = """<!doctype html>
<html><body style="margin:0;padding:0;background:#f4f5f7;font-family:Helvetica,Arial,sans-serif;color:#1f2933">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f5f7;padding:24px 0">
<tr><td align="center">
<table role="presentation" width="560" cellpadding="0" cellspacing="0" style="background:#ffffff;border-radius:8px">
<tr><td style="padding:20px 32px;border-bottom:1px solid #e4e7eb;font-size:20px;font-weight:bold;color:#3b49df">
Tidings</td></tr>
<tr><td style="padding:24px 32px;font-size:15px;line-height:1.5">{{ content }}</td></tr>
<tr><td style="padding:16px 32px;border-top:1px solid #e4e7eb;font-size:12px;color:#7b8794">
You receive this because of your Tidings account. If it was not you, reply to this email.</td></tr>
</table></td></tr></table></body></html>"""


def _button(link: str, label: str) -> str:
    return (
        f'<p><a href="{{{{ {link} }}}}" style="display:inline-block;padding:10px 18px;background:#3b49df;'
        f'color:#ffffff;border-radius:6px;text-decoration:none">{label}</a></p>'
        f'<p style="font-size:13px;color:#52606d">Or open this link: '
        f'<a href="{{{{ {link} }}}}">{{{{ {link} }}}}</a></p>'
    )


# kind -> (template name, email content)
ACCOUNT_MAIL_CONTENT: dict[str, tuple[str, dict[str, Any]]] = {
    "verify_email": (
        "Verify your email address",
        {
            "subject": "Verify your email address for Tidings",
            "preheader": "One click and your console opens.",
            "text": "Confirm that {{ email }} is yours by opening this link:\n\n{{ link }}\n",
            "html": "<p>Confirm that <strong>{{ email }}</strong> is yours.</p>" + _button("link", "Verify email"),
        },
    ),
    "password_reset": (
        "Reset your password",
        {
            "subject": "Reset your Tidings password",
            "text": (
                "Someone asked to reset the password of {{ email }}. To choose a new one, open:\n\n{{ link }}\n\n"
                "If it was not you, ignore this email: your password stays as it is."
            ),
            "html": "<p>Someone asked to reset the password of <strong>{{ email }}</strong>.</p>"
            + _button("link", "Choose a new password")
            + "<p>If it was not you, ignore this email: your password stays as it is.</p>",
        },
    ),
    "email_changed": (
        "Your email address changed",
        {
            "subject": "Your Tidings email address changed",
            "text": "The email address of your Tidings account changed from {{ old_email }} to {{ new_email }}.",
            "html": "<p>The email address of your Tidings account changed from <strong>{{ old_email }}</strong> "
            "to <strong>{{ new_email }}</strong>.</p>",
        },
    ),
    "new_sign_in": (
        "New sign-in",
        {
            "subject": "New sign-in to your Tidings account",
            "text": (
                "Your account {{ email }} signed in at {{ signed_in_at }} from {{ ip_address }} ({{ user_agent }}). "
                "Review your sessions: {{ link }}"
            ),
            "html": "<p>Your account <strong>{{ email }}</strong> signed in at {{ signed_in_at }} from "
            "{{ ip_address }} ({{ user_agent }}).</p>" + _button("link", "Review your sessions"),
        },
    ),
    "mfa_changed": (
        "Two-factor authentication changed",
        {
            "subject": "Two-factor authentication changed on your Tidings account",
            "text": "{{ change }} on your account {{ email }}. Review your devices: {{ link }}",
            "html": "<p>{{ change }} on your account <strong>{{ email }}</strong>.</p>"
            + _button("link", "Review your devices"),
        },
    ),
    "invite": (
        "Invitation",
        {
            "subject": "{{ inviter }} invited you to {{ organization }} on Tidings",
            "text": "{{ inviter }} invited you to join {{ organization }} as {{ role }}. Accept: {{ link }}",
            "html": "<p>{{ inviter }} invited you to join <strong>{{ organization }}</strong> as {{ role }}.</p>"
            + _button("link", "Accept the invitation"),
        },
    ),
    "role_changed": (
        "Your role changed",
        {
            "subject": "Your role in {{ organization }} changed",
            "text": "Your role in {{ organization }} is now {{ role }}. Open the console: {{ link }}",
            "html": "<p>Your role in <strong>{{ organization }}</strong> is now {{ role }}.</p>"
            + _button("link", "Open the console"),
        },
    ),
}

ACCOUNT_MAIL_KINDS = frozenset(ACCOUNT_MAIL_CONTENT)


def template_key(kind: str) -> str:
    return "account-" + kind.replace("_", "-")
