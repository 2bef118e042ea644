"""Demo data for the delivery app: dry-run connectors for every channel and a few templates."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.delivery.models import Connector, Layout, Template, TemplateVersion
from apps.projects.models import Project
from apps.subscribers.models import Channel

# An email is the body's content (the allow-list drops html, head and body): the page
# background sits on the outer table.
DEMO_LAYOUT = """<table width="100%" style="font-family: sans-serif; background: #f6f6f6">
<tr><td style="max-width: 600px; margin: auto; background: #fff; padding: 24px">
{{ content }}
<p style="color: #888; font-size: 12px">Sent by Demo App with Tidings.</p>
</td></tr></table>"""

# The simulated provider's rates sit well inside the campaign breaker's default lines (5%
# bounces, 0.1% complaints over at least 200 receipts): one complaint in a few hundred
# messages would already cross the second, so the demo simulates none. Push and SMS refuse
# a few messages for good (unregistered tokens, dead numbers): the dead letters to look at.
DEMO_PROVIDER = {"latency_ms": 20, "delivered_rate": 0.97, "bounce_rate": 0.01, "complaint_rate": 0.0}
DEMO_REFUSALS = {"push": 0.08, "sms": 0.08}

DEMO_TEMPLATES: list[tuple[str, str, str, dict[str, Any]]] = [
    (
        "welcome",
        "email",
        "Welcome",
        {
            "email": {
                "subject": "Welcome, {{ subscriber.first_name or 'friend' }}!",
                "text": "Hi {{ subscriber.first_name or 'there' }}, thanks for joining {{ app_name or 'Demo App' }}.",
                "html": "<h1>Hi {{ subscriber.first_name or 'there' }}</h1>"
                "<p>Thanks for joining {{ app_name or 'Demo App' }}.</p>",
            },
            "push": {"title": "Welcome!", "body": "Thanks for joining, {{ subscriber.first_name or 'friend' }}."},
        },
    ),
    (
        "welcome-push",
        "push",
        "Welcome (push)",
        {
            "push": {
                "title": "Settling in?",
                "body": "Three things to try first, {{ subscriber.first_name or 'friend' }}.",
            }
        },
    ),
    (
        "one-time-code",
        "sms",
        "One-time code",
        {
            "sms": {"text": "Your Demo App code is {{ code }}. It expires in 10 minutes."},
            "email": {"subject": "Your code: {{ code }}", "text": "Your Demo App code is {{ code }}."},
        },
    ),
    (
        "order-shipped",
        "push",
        "Order shipped",
        {
            "push": {
                "title": "Order {{ order_id }} shipped",
                "body": "It is on its way.",
                "data": {"order": "{{ order_id }}"},
            },
            "slack": {"text": "Order {{ order_id }} shipped to {{ subscriber.email }}."},
            "webhook": {"body": {"event": "order.shipped", "order": "{{ order_id }}"}},
        },
    ),
]


@transaction.atomic
def seed_demo(project: Project) -> dict[str, object]:
    """Idempotent: dry-run connectors (the default provider of every channel) and templates.

    Answers what exists afterwards, not what this run created, so repeated runs print the
    same thing."""
    connectors = 0
    for channel in Channel.values:
        if not Connector.objects.for_project(project).filter(channel=channel).exists():
            connector = Connector(
                project=project,
                channel=channel,
                provider="dryrun",
                name=f"Dry run ({channel})",
                is_default=True,
                settings={**DEMO_PROVIDER, "permanent_rate": DEMO_REFUSALS.get(channel, 0.0)},
            )
            connector.set_credentials({"api_key": "dryrun-demo"})
            connector.save()
            connectors += 1
    layout, _ = Layout.objects.get_or_create(project=project, name="Demo shell", defaults={"html": DEMO_LAYOUT})
    templates = 0
    for key, channel, name, content in DEMO_TEMPLATES:
        template, created = Template.objects.get_or_create(
            project=project, key=key, defaults={"channel": channel, "name": name}
        )
        if created:
            TemplateVersion.objects.create(
                project=project,
                template=template,
                number=1,
                content=content,
                layout=layout if "email" in content else None,
                published_at=timezone.now(),
            )
            templates += 1
    del connectors, templates
    return {
        "connectors": sorted(
            Connector.objects.for_project(project).filter(provider="dryrun").values_list("channel", flat=True)
        ),
        "templates": sorted(Template.objects.for_project(project).values_list("key", flat=True)),
    }
