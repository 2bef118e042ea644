"""The platform's own tenant: the organization and project that send account email.

Account email (verification, password reset, invites…) goes through the same delivery
machinery as customer messages, so it needs a project of its own, with an email connector
and branded templates. It is made on demand by ``platform_project_ensure`` and found by
its organization's slug (``TIDINGS_PLATFORM_ORGANIZATION_SLUG``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection, transaction

from apps.accounts.mail_templates import ACCOUNT_MAIL_CONTENT, LAYOUT_HTML, LAYOUT_NAME, template_key
from apps.delivery.models import Connector, Layout, Template
from apps.delivery.services import connector_create, layout_save, template_create, template_version_create
from apps.projects.models import Organization, Project

PLATFORM_ORGANIZATION_NAME = "Tidings platform"
PLATFORM_PROJECT_SLUG = "account-mail"
# Any constant distinct from other advisory locks: serialises the first, creating call.
_ENSURE_LOCK = 0x7464_6163  # "tdac"


def platform_project() -> Project | None:
    """The platform project if it exists (no writes): for pages that only read it."""
    return (
        Project.objects.select_related("organization")
        .filter(organization__slug=settings.TIDINGS_PLATFORM_ORGANIZATION_SLUG, slug=PLATFORM_PROJECT_SLUG)
        .first()
    )


def is_platform_project(project: Project) -> bool:
    return project.slug == PLATFORM_PROJECT_SLUG and (
        project.organization.slug == settings.TIDINGS_PLATFORM_ORGANIZATION_SLUG
    )


@transaction.atomic
def platform_project_ensure() -> Project:
    """The platform project, with its email connector and account templates, made if missing.

    Idempotent and safe to call from many processes at once: the first call to find
    something missing takes a transaction-scoped advisory lock, so two first sends never
    create two organizations. Templates already there are left as staff edited them.
    """
    project = platform_project()
    if project is not None and _complete(project):
        return project
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_ENSURE_LOCK])
    organization, _ = Organization.objects.get_or_create(
        slug=settings.TIDINGS_PLATFORM_ORGANIZATION_SLUG, defaults={"name": PLATFORM_ORGANIZATION_NAME}
    )
    project, _ = Project.objects.get_or_create(
        organization=organization, slug=PLATFORM_PROJECT_SLUG, defaults={"name": "Account mail", "timezone": "UTC"}
    )
    _connector_ensure(project)
    _templates_ensure(project)
    return project


def _complete(project: Project) -> bool:
    provider = settings.TIDINGS_ACCOUNT_MAIL_PROVIDER
    has_connector = (
        Connector.objects.for_project(project).filter(channel="email", provider=provider, is_default=True).exists()
    )
    templates = Template.objects.for_project(project).filter(key__startswith="account-").count()
    return has_connector and templates >= len(ACCOUNT_MAIL_CONTENT)


def _connector_ensure(project: Project) -> None:
    """The connector the settings name is the default email connector: dry-run unless a
    real provider is configured, and a provider named later takes over from the dry run."""
    provider = settings.TIDINGS_ACCOUNT_MAIL_PROVIDER
    existing = Connector.objects.for_project(project).filter(channel="email", provider=provider).first()
    if existing is None:
        connector_create(
            project=project,
            channel="email",
            provider=provider,
            credentials=dict(settings.TIDINGS_ACCOUNT_MAIL_CREDENTIALS),
            settings={"from_email": settings.TIDINGS_ACCOUNT_MAIL_FROM, **settings.TIDINGS_ACCOUNT_MAIL_SETTINGS},
            name=f"Account mail ({provider})",
            is_default=True,
        )
    elif not existing.is_default:
        Connector.objects.for_project(project).filter(channel="email", is_default=True).update(is_default=False)
        Connector.objects.for_project(project).filter(pk=existing.pk).update(is_default=True)


def _templates_ensure(project: Project) -> None:
    # Through the template services, so the seeded HTML passes the same safety checks as
    # anything staff save later.
    layout = Layout.objects.for_project(project).filter(name=LAYOUT_NAME).first()
    if layout is None:
        layout = layout_save(project=project, name=LAYOUT_NAME, html=LAYOUT_HTML)
    for kind, (name, content) in ACCOUNT_MAIL_CONTENT.items():
        key = template_key(kind)
        template = Template.objects.for_project(project).filter(key=key).first()
        if template is None:
            template = template_create(
                project=project, key=key, channel="email", name=name, description=f"Account email: {kind}"
            )
        if not template.versions.exists():
            template_version_create(template=template, content={"email": content}, layout=layout, publish=True)
