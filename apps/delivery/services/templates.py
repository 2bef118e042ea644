"""Templates, their immutable versions, and email layouts."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from apps.core.errors import ApplicationError, Conflict, NotFound
from apps.delivery.models import Layout, Template, TemplateVersion
from apps.delivery.services.content import CHANNELS, layout_html_validate, template_content_validate
from apps.projects.models import Project


@transaction.atomic
def template_create(*, project: Project, key: str, channel: str, name: str = "", description: str = "") -> Template:
    if channel not in CHANNELS:
        raise ApplicationError(f"Unknown channel {channel!r}.", code="invalid_channel", field="channel")
    taken = Conflict(f"A template with key {key!r} already exists.", code="template_exists", field="key")
    if Template.objects.for_project(project).filter(key=key).exists():
        raise taken
    try:
        # Two requests creating one key at once: the unique constraint decides, the loser hears 409.
        with transaction.atomic():
            return Template.objects.create(
                project=project, key=key, channel=channel, name=name or key, description=description
            )
    except IntegrityError:
        raise taken from None


@transaction.atomic
def template_version_create(
    *,
    template: Template,
    content: dict[str, Any],
    layout: Layout | None = None,
    strict: bool = False,
    publish: bool = False,
) -> TemplateVersion:
    """A new draft (or, with ``publish``, published) version, once its content is valid:
    what each channel needs, safe email HTML, and template syntax that compiles."""
    template_content_validate(content=content, strict=strict)
    if layout is not None and layout.project_id != template.project_id:
        raise NotFound("Layout not found.", code="layout_not_found", field="layout")
    # Lock the template so two editors never get the same version number.
    Template.objects.select_for_update().filter(pk=template.pk).first()
    number = (template.versions.aggregate(n=Max("number"))["n"] or 0) + 1
    return TemplateVersion.objects.create(
        project_id=template.project_id,
        template=template,
        number=number,
        content=content,
        layout=layout,
        strict=strict,
        published_at=timezone.now() if publish else None,
    )


@transaction.atomic
def template_version_publish(*, version: TemplateVersion) -> TemplateVersion:
    """Publish a draft once its content is valid by today's rules: a draft saved before a
    channel requirement existed must not reach senders and die there as a dead letter."""
    if version.published_at is not None:
        return version
    template_content_validate(content=version.content, strict=version.strict)
    version.published_at = timezone.now()
    version.save(update_fields=["published_at"])
    return version


@transaction.atomic
def layout_save(*, project: Project, name: str, html: str, layout: Layout | None = None) -> Layout:
    layout_html_validate(html=html)
    if layout is not None and layout.project_id != project.pk:
        raise NotFound("Layout not found.", code="layout_not_found")
    # A rename onto another layout's name, too, or the unique constraint answers a 500.
    taken = Layout.objects.for_project(project).filter(name=name)
    if layout is not None:
        taken = taken.exclude(pk=layout.pk)
    conflict = Conflict(f"A layout named {name!r} already exists.", code="layout_exists", field="name")
    if taken.exists():
        raise conflict
    try:
        # A concurrent save of the same name loses to the unique constraint with a 409, not a 500.
        with transaction.atomic():
            if layout is None:
                return Layout.objects.create(project=project, name=name, html=html)
            layout.name, layout.html = name, html
            layout.save(update_fields=["name", "html", "updated_at"])
            return layout
    except IntegrityError:
        raise conflict from None
