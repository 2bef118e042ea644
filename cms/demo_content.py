"""The starting content a new Tidings site ships with: real docs, a blog post, legal pages.

Plain data only; cms.demo puts it into the page tree. Bodies are StreamField raw data.
"""

from __future__ import annotations

from typing import Any


def text(html: str) -> dict[str, Any]:
    return {"type": "text", "value": html}


def code(language: str, source: str, caption: str = "") -> dict[str, Any]:
    return {"type": "code", "value": {"language": language, "caption": caption, "code": source.strip("\n")}}


def callout(kind: str, title: str, html: str) -> dict[str, Any]:
    return {"type": "callout", "value": {"kind": kind, "title": title, "body": html}}


def operation(operation_id: str) -> dict[str, Any]:
    return {"type": "api_operation", "value": {"operation_id": operation_id}}


HOME = {
    "hero_heading": "Notifications your users actually get",
    "intro": (
        "<p>Tidings sends transactional messages, journeys and campaigns over email, push, SMS, "
        "WhatsApp, Slack, Teams and webhooks, from one API and one console.</p>"
    ),
    "features": [
        ("One publish call", "Name a template and the recipients; Tidings picks the channels, renders and delivers."),
        ("Journeys", "Wait for events, branch on data, respect each subscriber's local time and quiet hours."),
        ("Campaigns at volume", "Send to millions with rate control that backs off when a provider struggles."),
        ("Every channel", "Email, push, SMS, WhatsApp, Slack, Teams and signed webhooks behind one model."),
        ("Receipts and suppression", "Bounces and complaints come back from providers and stop further sends."),
        ("Built for teams", "Projects, roles, audit log and API keys with scopes for each service."),
    ],
}

DOCS_INTRO = "<p>Everything you need to send your first notification and run Tidings in production.</p>"

DOCS: list[dict[str, Any]] = [
    {
        "slug": "getting-started",
        "title": "Getting started",
        "summary": "Create a project, take a key and send your first notification in five minutes.",
        "body": [
            text(
                "<p>Tidings is organised in <b>projects</b>: each has its own subscribers, templates, "
                "connectors and API keys, and nothing crosses from one project to another.</p>"
                "<h2>1. Sign in and pick a project</h2><p>Sign in to the console at <code>/console/</code>. "
                "A new organization starts with one project; create more from the project switcher.</p>"
                "<h2>2. Take a secret key</h2><p>Under <b>API keys</b>, create a secret key. It is shown once: "
                "store it in your server's secrets.</p>"
                "<h2>3. Check the key</h2>"
            ),
            code(
                "bash",
                'curl https://tidings.example.com/api/v1/me \\\n  -H "Authorization: Bearer $TIDINGS_SECRET_KEY"',
            ),
            text("<h2>4. Publish</h2><p>Send the <code>welcome</code> template to a subscriber by external id:</p>"),
            code(
                "bash",
                "curl -X POST https://tidings.example.com/api/v1/notifications \\\n"
                '  -H "Authorization: Bearer $TIDINGS_SECRET_KEY" \\\n'
                '  -H "Content-Type: application/json" \\\n'
                '  -d \'{"template": "welcome", "to": ["user-42"], "channels": ["email"]}\'',
            ),
            callout(
                "tip",
                "Safe retries",
                "<p>Send an <code>Idempotency-Key</code> header with every publish: a retried request "
                "then answers with the first one's result instead of sending twice.</p>",
            ),
        ],
    },
    {
        "slug": "api-keys",
        "title": "API keys",
        "summary": "Public, secret and restricted keys: what each may do and where it may live.",
        "body": [
            text(
                "<p>Every request to <code>/api/v1/</code> carries a project key as "
                "<code>Authorization: Bearer &lt;key&gt;</code>. The prefix tells you its kind:</p>"
                "<ul><li><code>pk_</code> <b>public</b>: safe in browsers and mobile apps; it may only "
                "identify subscribers and register devices.</li><li><code>sk_</code> <b>secret</b>: every "
                "scope; keep it on your servers.</li><li><code>rk_</code> <b>restricted</b>: only the scopes "
                "you grant, for one service or one job.</li></ul>"
                "<h2>Rotating a key</h2><p>Rotate a key from the console with a grace period: the old value "
                "keeps working until the period ends, so deploys can pick up the new one.</p>"
            ),
            callout(
                "warning",
                "Never ship a secret key",
                "<p>A secret key in an app bundle is a leaked key. Revoke it at once.</p>",
            ),
            operation("me"),
        ],
    },
    {
        "slug": "publishing",
        "title": "Publishing notifications",
        "summary": "One call sends a template to subscribers or raw addresses on the channels you name.",
        "body": [
            text(
                "<p>A publish names a <b>template</b> (its key, or <code>key@version</code> to pin a "
                "version), the recipients and the channels. It answers <code>202</code> at once; deliveries "
                "are routed in the background and each one is tracked until the provider confirms it.</p>"
            ),
            code(
                "python",
                'import requests\n\nresponse = requests.post(\n    "https://tidings.example.com/api/v1/notifications",\n'
                '    headers={"Authorization": f"Bearer {secret_key}", "Idempotency-Key": order.id},\n'
                '    json={"template": "order-shipped", "to": [customer.id], "channels": ["email", "push"],\n'
                '          "data": {"order": order.number}},\n    timeout=10,\n)\nresponse.raise_for_status()',
                "publish.py",
            ),
            operation("notification_publish"),
        ],
    },
    {
        "slug": "journeys",
        "title": "Journeys",
        "summary": "Multi-step workflows: wait, branch and send, in each subscriber's own time zone.",
        "body": [
            text(
                "<p>A journey is a published <b>workflow</b>: nodes for sending, waiting (for a duration, "
                "until a local time, or for an event) and branching on subscriber data. Draw it in the "
                "console's builder, publish a version, then start it for an audience.</p>"
                "<p>Waits that name a local time use the subscriber's time zone and handle daylight-saving "
                "changes: a skipped 02:30 becomes the next minute that exists.</p>"
            ),
            code(
                "bash",
                "curl -X POST https://tidings.example.com/api/v1/workflows/onboarding/executions \\\n"
                '  -H "Authorization: Bearer $TIDINGS_SECRET_KEY" \\\n'
                '  -H "Content-Type: application/json" \\\n  -d \'{"external_ids": ["user-42"]}\'',
            ),
            operation("workflows_execute"),
        ],
    },
    {
        "slug": "campaigns",
        "title": "Campaigns",
        "summary": "One message to a large audience, sent at a safe rate and resumable at any point.",
        "body": [
            text(
                "<p>A campaign sends one template to everyone, a segment, a tag or an uploaded list. It is "
                "created as a draft; nothing goes out until you start it. Tidings fans the audience out in "
                "chunks and adapts its rate to what the provider accepts, pausing when errors climb.</p>"
            ),
            callout(
                "note",
                "Pause and resume",
                "<p>A paused campaign keeps its place: resuming sends only to those not yet reached.</p>",
            ),
            operation("campaign_create"),
        ],
    },
    {
        "slug": "webhooks",
        "title": "Webhooks",
        "summary": "Receive notifications as signed HTTP requests, and verify each signature.",
        "body": [
            text(
                "<p>The webhook channel POSTs each message as JSON to your URL, signed the "
                '<a href="https://www.standardwebhooks.com/">Standard Webhooks</a> way. Every request '
                "carries <code>webhook-id</code> (the same across retries: use it to deduplicate), "
                "<code>webhook-timestamp</code> and <code>webhook-signature</code>.</p>"
                "<h2>Verifying a request</h2>"
            ),
            code(
                "python",
                "from standardwebhooks import Webhook\n\nwebhook = Webhook(WEBHOOK_SECRET)  # whsec_...\n"
                "payload = webhook.verify(request.body, request.headers)  # raises on a bad signature",
                "receiver.py",
            ),
            callout(
                "tip",
                "Rotating secrets",
                "<p>While you rotate, Tidings signs with every active secret; keep verifying with either "
                "until the old one is removed.</p>",
            ),
            text(
                "<p>Answer with a <code>2xx</code> within ten seconds. Other answers and timeouts are "
                "retried with back-off; a <code>410 Gone</code> stops retries for that message.</p>"
            ),
        ],
    },
]

API_REFERENCE = {
    "slug": "api-reference",
    "title": "API reference",
    "intro": "<p>Every operation of the Tidings API, with its parameters, body and answers.</p>",
}

BLOG_POST = {
    "slug": "introducing-tidings",
    "title": "Introducing Tidings",
    "author": "Inês Duarte",
    "summary": "Why we built one platform for transactional messages, journeys and campaigns.",
    "tags": ["announcements", "product"],
    "body": [
        text(
            "<p>Most products grow their notifications one channel at a time: an email library here, a push "
            "service there, a cron job for the newsletter. Each has its own templates, retries and opt-outs, "
            "and nobody can answer the question \u201cdid this user get told?\u201d.</p>"
            "<p>Tidings puts every message behind one model: a template, a recipient, a channel and a "
            "ledger row that follows the message until the provider confirms it. Journeys and campaigns "
            "are built on the same ledger, so quiet hours, suppression and rate limits apply everywhere.</p>"
            '<p>Read <a href="/docs/getting-started/">Getting started</a> to send your first notification.</p>'
        ),
    ],
}

CHANGELOG = [
    {
        "version": "1.0",
        "kind": "added",
        "title": "Public docs, blog and legal pages",
        "body": "<p>The site you are reading.</p>",
    },
    {"version": "0.9", "kind": "added", "title": "Campaigns with adaptive rate control", "body": ""},
    {"version": "0.8", "kind": "changed", "title": "Journeys wait in each subscriber's local time", "body": ""},
]

LEGAL_INTRO = "<p>The terms that govern Tidings, and how we handle the data you send through it.</p>"

LEGAL: list[dict[str, Any]] = [
    {
        "slug": "terms",
        "title": "Terms of service",
        "summary": "The agreement between you and Tidings for using the service.",
        "versions": [
            {
                "days_ago": 400,
                "change_summary": "First published version.",
                "body": "<h2>1. The service</h2><p>Tidings provides a hosted notification platform.</p>"
                "<h2>2. Your account</h2><p>You are responsible for the keys and members of your organization.</p>",
            },
            {
                "days_ago": 30,
                "change_summary": "Added acceptable use limits for campaigns and clarified suspension for abuse.",
                "body": "<h2>1. The service</h2><p>Tidings provides a hosted notification platform.</p>"
                "<h2>2. Your account</h2><p>You are responsible for the keys and members of your organization.</p>"
                "<h2>3. Acceptable use</h2><p>Send only messages your recipients asked for; campaigns to "
                "purchased lists are not allowed. We may suspend sending that harms deliverability for others.</p>",
            },
        ],
    },
    {
        "slug": "privacy",
        "title": "Privacy policy",
        "summary": "What personal data Tidings collects, why, and your rights.",
        "versions": [
            {
                "days_ago": 400,
                "change_summary": "First published version.",
                "body": "<h2>What we collect</h2><p>Account details of your members and the subscriber data you "
                "send us to deliver messages.</p><h2>Your rights</h2><p>Access, correction and erasure, from "
                "the console or by writing to privacy@tidings.example.com.</p>",
            }
        ],
    },
    {
        "slug": "dpa",
        "title": "Data processing agreement",
        "summary": "The GDPR Article 28 terms under which Tidings processes your subscribers' data.",
        "versions": [
            {
                "days_ago": 400,
                "change_summary": "First published version.",
                "body": "<h2>Roles</h2><p>You are the controller of subscriber data; Tidings is your processor "
                "and acts only on your instructions.</p><h2>Security</h2><p>Secrets are encrypted at rest and "
                "every project's data is isolated.</p>",
            }
        ],
    },
    {
        "slug": "subprocessors",
        "title": "Subprocessors",
        "summary": "The companies that help Tidings deliver messages, and what each does.",
        "versions": [
            {
                "days_ago": 400,
                "change_summary": "First published version.",
                "body": "<ul><li><b>Email providers</b> you connect (SendGrid, Postmark, Resend, Amazon SES): "
                "delivery of email.</li><li><b>Twilio</b>: SMS and WhatsApp.</li><li><b>Firebase Cloud "
                "Messaging</b>: push notifications.</li></ul>",
            }
        ],
    },
]
