"""What each provider's connector form asks for, and where each answer is stored.

Secrets go to the encrypted credentials and are never rendered back; everything else
is plain settings. Validation itself belongs to the adapter (``validate_config``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    secret: bool = False  # credentials (encrypted, write-only) vs settings
    required: bool = False
    kind: str = "text"  # text | textarea | number | choice | email | url
    help: str = ""
    choices: tuple[tuple[str, str], ...] = ()


FROM = Field("from_email", "From address", required=True, kind="email")
API_URL = Field("api_url", "API base URL", kind="url", help="Only for a regional endpoint or a proxy.")
TIMEOUT = Field("timeout", "Timeout (seconds)", kind="number", help="Default 10.")
BASIC_AUTH = Field(
    "webhook_secret",
    "Webhook basic auth (user:password)",
    secret=True,
    help="Put the same user:password in the receipt webhook URL you give the provider.",
)


@dataclass(frozen=True)
class ProviderForm:
    channel: str
    provider: str
    label: str
    fields: tuple[Field, ...]


PROVIDERS: tuple[ProviderForm, ...] = (
    ProviderForm(
        "email",
        "resend",
        "Resend",
        (
            Field("api_key", "API key", secret=True, required=True),
            Field("webhook_signing_secret", "Webhook signing secret (whsec_…)", secret=True),
            BASIC_AUTH,
            FROM,
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "email",
        "ses",
        "Amazon SES",
        (
            Field("access_key_id", "Access key id", secret=True, required=True),
            Field("secret_access_key", "Secret access key", secret=True, required=True),
            Field("region", "Region", required=True, help="e.g. eu-west-1"),
            Field("configuration_set", "Configuration set"),
            BASIC_AUTH,
            FROM,
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "email",
        "postmark",
        "Postmark",
        (
            Field("server_token", "Server token", secret=True, required=True),
            Field("message_stream", "Message stream"),
            BASIC_AUTH,
            FROM,
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "email",
        "sendgrid",
        "SendGrid",
        (
            Field("api_key", "API key", secret=True, required=True),
            Field("webhook_verification_key", "Signed event webhook public key", secret=True),
            BASIC_AUTH,
            FROM,
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "email",
        "mailgun",
        "Mailgun",
        (
            Field("api_key", "API key", secret=True, required=True),
            Field("webhook_signing_key", "Webhook signing key", secret=True),
            Field("domain", "Sending domain"),
            FROM,
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "email",
        "brevo",
        "Brevo",
        (
            Field("api_key", "API key", secret=True, required=True),
            BASIC_AUTH,
            FROM,
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "email",
        "smtp",
        "Custom SMTP",
        (
            Field("host", "Host", required=True),
            Field("port", "Port", kind="number", required=True, help="465 implicit TLS, 587 STARTTLS"),
            Field(
                "security",
                "Security",
                kind="choice",
                choices=(
                    ("", "From the port"),
                    ("ssl", "Implicit TLS"),
                    ("starttls", "STARTTLS"),
                    ("none", "None (plain text)"),
                ),
            ),
            Field("username", "Username", secret=True),
            Field("password", "Password", secret=True),
            Field("domain", "Account domain", required=True, help="From addresses must be on this domain."),
            FROM,
            Field(
                "ca_certificate", "CA certificate (PEM)", kind="textarea", help="Only for a relay with a private CA."
            ),
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "push",
        "fcm",
        "Firebase Cloud Messaging",
        (
            Field("service_account", "Service account JSON", secret=True, required=True, kind="textarea"),
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "sms",
        "twilio",
        "Twilio (or compatible)",
        (
            Field("account_sid", "Account SID", secret=True, required=True),
            Field("auth_token", "Auth token", secret=True, required=True),
            Field("from_number", "From number"),
            Field("messaging_service_sid", "Messaging service SID"),
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "whatsapp",
        "cloudapi",
        "WhatsApp Cloud API",
        (
            Field("access_token", "Access token", secret=True, required=True),
            Field("app_secret", "App secret", secret=True, required=True, help="Verifies status webhooks."),
            Field("verify_token", "Webhook verify token", secret=True),
            Field("phone_number_id", "Phone number id", required=True),
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "slack",
        "slack",
        "Slack",
        (
            Field("bot_token", "Bot token (xoxb-…)", secret=True),
            Field("webhook_url", "Incoming webhook URL", secret=True, kind="url"),
            Field("channel", "Default channel"),
            API_URL,
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "teams",
        "teams",
        "Microsoft Teams",
        (
            Field("webhook_url", "Incoming webhook URL", secret=True, required=True, kind="url"),
            TIMEOUT,
        ),
    ),
    ProviderForm(
        "webhook",
        "webhook",
        "Outgoing webhook",
        (
            Field("secrets", "Signing secrets (whsec_…, space-separated, newest first)", secret=True, required=True),
            Field("url", "Default endpoint URL", kind="url"),
            TIMEOUT,
        ),
    ),
)
BY_KEY = {f"{p.channel}:{p.provider}": p for p in PROVIDERS}
# Providers that send receipts to /webhooks/<connector_id>/<provider>.
RECEIPT_PROVIDERS = {"resend", "ses", "postmark", "sendgrid", "mailgun", "brevo", "twilio", "cloudapi"}
