"""The demo project's small world, so a newcomer's first look at every console page shows
something real: a few hundred subscribers with tags, timezones and devices, two segments,
a published welcome journey (email → wait → push) under way, a campaign, and transactional
notifications of which the dry-run providers deliver most, bounce some and refuse a few
(the dead letters).

Everything goes through the services, and the sending is left to the real worker: under
``make run`` the journey and the campaign run, and the receipts come in, once it is up.
Seeded once per project (the journey's existence says it was), in one transaction.
"""

from __future__ import annotations

import random
from typing import Any

from django.db import transaction

from apps.campaigns.lifecycle import campaign_start
from apps.campaigns.models import Campaign
from apps.campaigns.services import campaign_create
from apps.delivery.models import Template
from apps.notifications.services import notification_publish
from apps.projects.models import Project
from apps.subscribers.models import Segment, Subscriber
from apps.subscribers.services.devices import device_register
from apps.subscribers.services.segments import segment_create
from apps.subscribers.services.subscribers import subscriber_identify
from apps.subscribers.services.tags import tags_change_bulk
from apps.workflows.models import Execution, Workflow
from apps.workflows.services import execution_start, workflow_publish, workflow_save_draft

SUBSCRIBERS = 300
JOURNEY_KEY = "welcome"
CAMPAIGN_NAME = "Spring newsletter"
FIRST_NAMES = ["Ana", "Bruno", "Chloé", "Dmitri", "Eva", "Femi", "Grace", "Hiro", "Inês", "Jonas", "Kaia", "Luca"]
TIMEZONES = ["Europe/Lisbon", "Europe/Berlin", "America/New_York", "America/Sao_Paulo", "Asia/Tokyo", "UTC"]
PLANS = ["free", "free", "free", "pro", "pro", "team"]
INTERESTS = ["newsletter", "product-updates", "offers"]
WELCOME_GRAPH = {
    "nodes": [
        {"id": "start", "type": "start", "config": {}},
        {"id": "email", "type": "email", "config": {"template": "welcome"}},
        {"id": "wait", "type": "wait", "config": {"mode": "duration", "seconds": 30}},
        {"id": "push", "type": "push", "config": {"template": "welcome-push"}},
        {"id": "end", "type": "end", "config": {}},
    ],
    "edges": [
        {"from": "start", "handle": "next", "to": "email"},
        {"from": "email", "handle": "next", "to": "wait"},
        {"from": "wait", "handle": "next", "to": "push"},
        {"from": "push", "handle": "next", "to": "end"},
    ],
}
SEGMENTS = [
    ("Pro and team plans", {"op": "and", "groups": [{"any": ["plan-pro", "plan-team"]}]}),
    ("Newsletter readers, not churned", {"op": "and", "groups": [{"all": ["newsletter"]}, {"none": ["churned"]}]}),
]


@transaction.atomic
def demo_world_seed(project: Project) -> dict[str, Any]:
    """Seed the world once; answers what the project holds either way."""
    if not Workflow.objects.for_project(project).filter(key=JOURNEY_KEY).exists():
        _seed(project)
    execution = Execution.objects.for_project(project).filter(workflow__key=JOURNEY_KEY, started_by="demo").first()
    campaign = Campaign.objects.for_project(project).filter(name=CAMPAIGN_NAME).first()
    return {
        "subscribers": Subscriber.objects.for_project(project).count(),
        "segments": sorted(Segment.objects.for_project(project).values_list("name", flat=True)),
        "journey": JOURNEY_KEY,
        "execution_id": execution.pk if execution else None,
        "campaign_id": campaign.pk if campaign else None,
    }


def _seed(project: Project) -> None:
    rng = random.Random(13)  # the same world every time
    people = _subscribers(project, rng)
    segments = [segment_create(project=project, name=name, rules=rules) for name, rules in SEGMENTS]

    workflow, _ = workflow_save_draft(project=project, key=JOURNEY_KEY, name="Welcome", graph=WELCOME_GRAPH)
    workflow_publish(project=project, workflow=workflow, published_via="demo")
    newest = [person.external_id for person in people[-40:]]
    execution_start(project=project, workflow=workflow, audience={"external_ids": newest}, started_by="demo")

    if not Campaign.objects.for_project(project).filter(name=CAMPAIGN_NAME).exists():
        welcome = Template.objects.for_project(project).get(key="welcome")
        campaign = campaign_create(
            project=project, name=CAMPAIGN_NAME, template=welcome, audience_kind="segment", audience_segment=segments[1]
        )
        campaign_start(campaign=campaign)

    # Transactional traffic: order pushes and one-time codes, by email where there is no phone.
    for person in people[:60]:
        notification_publish(
            project=project, template="order-shipped", to=[person.external_id], channels=["push"],
            data={"order_id": f"A-{rng.randint(1000, 9999)}"},
        )  # fmt: skip
    for person in people[60:120]:
        notification_publish(
            project=project, template="one-time-code", to=[person.external_id], channels=["email"],
            priority="high", data={"code": f"{rng.randint(0, 999999):06d}"},
        )  # fmt: skip


def _subscribers(project: Project, rng: random.Random) -> list[Subscriber]:
    people = []
    changes = []
    for i in range(1, SUBSCRIBERS + 1):
        name = rng.choice(FIRST_NAMES)
        person = subscriber_identify(
            project=project,
            external_id=f"user-{i:04d}",
            email=f"{name.lower()}.{i}@example.com",
            timezone=rng.choice(TIMEZONES),
            attributes={"first_name": name, "plan": rng.choice(PLANS)},
        )
        people.append(person)
        tags = [f"plan-{person.attributes['plan']}", *rng.sample(INTERESTS, rng.randint(0, 2))]
        if rng.random() < 0.08:
            tags.append("churned")
        changes.append((person.pk, tags, []))
        if rng.random() < 0.6:
            platform = rng.choice(["ios", "android", "web"])
            device_register(project=project, subscriber=person, platform=platform, token=f"demo-{platform}-{i:04d}")
    tags_change_bulk(project=project, changes=changes, source="api", source_ref="demo")
    return people
