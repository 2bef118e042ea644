"""Legal pages (terms, privacy, DPA, subprocessors), each a list of dated versions.

The page's own URL shows the version in effect today; every version also has a stable URL
(``versions/<label>/``) that keeps answering after a newer one takes effect, so what a
customer agreed to stays readable.
"""

from __future__ import annotations

import datetime
from typing import Any

from django.db import models
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from modelcluster.fields import ParentalKey
from wagtail.admin.forms import WagtailAdminPageForm
from wagtail.admin.panels import FieldPanel, InlinePanel
from wagtail.contrib.routable_page.models import RoutablePageMixin, path
from wagtail.fields import RichTextField
from wagtail.models import Orderable, Page
from wagtail.search import index

from cms.blocks import RICH_TEXT_FEATURES
from cms.models.seo import SeoMixin
from cms.navigation import site_menus


class LegalIndexPage(SeoMixin, Page):
    intro = RichTextField(blank=True, features=["bold", "italic", "link"])

    content_panels = [*Page.content_panels, FieldPanel("intro")]
    max_count = 1
    parent_page_types = ["cms.HomePage"]
    subpage_types = ["cms.LegalPage"]

    def documents(self) -> models.QuerySet[LegalPage]:
        return LegalPage.objects.child_of(self).live().public()

    def seo_description(self) -> str:
        return self.search_description or self.plain(self.intro) or "Terms, privacy and data processing at Tidings."


class LegalPageForm(WagtailAdminPageForm):
    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        versions = self.formsets["versions"]
        if not versions.is_valid():
            # Django's own "duplicate data for page and label" is correct but vague: name the label.
            seen: set[str] = set()
            for form in versions.forms:
                # The bound value: the formset drops a duplicate's label from cleaned_data.
                label = form["label"].value()
                if not label or getattr(form, "cleaned_data", {}).get("DELETE"):
                    continue
                if label in seen:
                    form.add_error(
                        "label",
                        f"Another version of this document already has the label “{label}”. "
                        "The label is part of the version's permanent address, so each must differ.",
                    )
                seen.add(label)
        return cleaned


class LegalPage(RoutablePageMixin, SeoMixin, Page):
    summary = models.CharField(max_length=300, blank=True)

    content_panels = [
        *Page.content_panels,
        FieldPanel("summary"),
        InlinePanel("versions", label="Version", min_num=1, heading="Versions (newest first)"),
    ]
    search_fields = [*Page.search_fields, index.SearchField("summary")]
    base_form_class = LegalPageForm
    parent_page_types = ["cms.LegalIndexPage"]
    subpage_types: list[str] = []

    def ordered_versions(self) -> list[LegalVersion]:
        return sorted(self.versions.all(), key=lambda v: (v.effective_date, v.pk or 0), reverse=True)

    def current_version(self, today: datetime.date | None = None) -> LegalVersion | None:
        today = today or timezone.localdate()
        return next((v for v in self.ordered_versions() if v.effective_date <= today), None)

    def upcoming_version(self, today: datetime.date | None = None) -> LegalVersion | None:
        today = today or timezone.localdate()
        upcoming = [v for v in self.ordered_versions() if v.effective_date > today]
        return upcoming[-1] if upcoming else None

    def seo_description(self) -> str:
        return self.search_description or self.summary or f"{self.title} of Tidings."

    def _render_version(self, request: HttpRequest, version: LegalVersion | None, *, is_current: bool) -> HttpResponse:
        # The page's own address is canonical for the version in effect; any other version's
        # stable address is its own canonical URL.
        canonical = self.get_full_url(request)
        if version is not None and not is_current:
            canonical = f"{canonical}versions/{version.label}/"
        return self.render(
            request,
            context_overrides={
                "version": version,
                "is_current": is_current,
                "current": self.current_version(),
                "upcoming": self.upcoming_version(),
                "all_versions": self.ordered_versions(),
                "canonical_url": canonical,
            },
        )

    @path("")
    def current(self, request: HttpRequest) -> HttpResponse:
        return self._render_version(request, self.current_version(), is_current=True)

    @path("versions/<slug:label>/", name="version")
    def version(self, request: HttpRequest, label: str) -> HttpResponse:
        found = next((v for v in self.ordered_versions() if v.label == label), None)
        if found is None:
            # A clear answer, not the site-wide "nothing here": which versions do exist.
            return TemplateResponse(
                request,
                "cms/legal_version_missing.html",
                {
                    "page": self,
                    "self": self,
                    "label": label,
                    "all_versions": self.ordered_versions(),
                    **site_menus(request, self),
                },
                status=404,
            )
        current = self.current_version()
        return self._render_version(request, found, is_current=current is not None and current.pk == found.pk)

    def get_sitemap_urls(self, request: HttpRequest | None = None) -> list[dict[str, Any]]:
        urls = super().get_sitemap_urls(request)
        base = self.get_full_url(request)
        urls += [
            {"location": f"{base}versions/{v.label}/", "lastmod": self.last_published_at} for v in self.versions.all()
        ]
        return urls


class LegalVersion(Orderable):
    page = ParentalKey(LegalPage, related_name="versions", on_delete=models.CASCADE)
    label = models.SlugField(
        max_length=40, help_text="Part of this version's permanent address, e.g. 2026-01-01. Never reuse one."
    )
    effective_date = models.DateField(help_text="The day this version takes effect.")
    change_summary = models.TextField(help_text="What changed since the version before, in a sentence or two.")
    body = RichTextField(features=RICH_TEXT_FEATURES)

    panels = [FieldPanel("label"), FieldPanel("effective_date"), FieldPanel("change_summary"), FieldPanel("body")]

    class Meta(Orderable.Meta):
        constraints = [models.UniqueConstraint(fields=["page", "label"], name="cms_legal_version_label_unique")]

    def __str__(self) -> str:
        return f"{self.page.title} {self.label}"
