"""The home (marketing) page, pricing and changelog: the site's top level."""

from __future__ import annotations

from typing import Any

from django.db import models
from wagtail import blocks
from wagtail.admin.panels import FieldPanel
from wagtail.fields import RichTextField, StreamField
from wagtail.models import Page

from cms.blocks import RICH_TEXT_FEATURES
from cms.models.seo import SeoMixin
from cms.pricing import pricing_plans


class FeatureBlock(blocks.StructBlock):
    title = blocks.CharBlock(max_length=80)
    text = blocks.TextBlock(max_length=400)

    class Meta:
        icon = "tick"


class HomePage(SeoMixin, Page):
    hero_heading = models.CharField(max_length=160, blank=True, help_text="The big line; the title when empty.")
    intro = RichTextField(blank=True, features=["bold", "italic", "link"])
    features = StreamField([("feature", FeatureBlock())], blank=True)
    call_to_action_label = models.CharField(max_length=60, default="Start for free")
    call_to_action_url = models.CharField(max_length=300, default="/console/")

    content_panels = [
        *Page.content_panels,
        FieldPanel("hero_heading"),
        FieldPanel("intro"),
        FieldPanel("features"),
        FieldPanel("call_to_action_label"),
        FieldPanel("call_to_action_url"),
    ]

    max_count = 1
    parent_page_types = ["wagtailcore.Page"]
    subpage_types = [
        "cms.DocsIndexPage",
        "cms.BlogIndexPage",
        "cms.LegalIndexPage",
        "cms.PricingPage",
        "cms.ChangelogPage",
    ]

    def seo_description(self) -> str:
        return self.search_description or self.plain(self.intro)


class PricingPage(SeoMixin, Page):
    intro = RichTextField(blank=True, features=["bold", "italic", "link"])

    content_panels = [*Page.content_panels, FieldPanel("intro")]
    max_count = 1
    parent_page_types = ["cms.HomePage"]
    subpage_types: list[str] = []

    def get_context(self, request: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context(request, *args, **kwargs)
        context["plans"] = pricing_plans()
        return context

    def seo_description(self) -> str:
        return self.search_description or self.plain(self.intro)


class ChangelogEntryBlock(blocks.StructBlock):
    date = blocks.DateBlock()
    version = blocks.CharBlock(max_length=40, required=False)
    kind = blocks.ChoiceBlock(
        choices=[("added", "Added"), ("changed", "Changed"), ("fixed", "Fixed"), ("removed", "Removed")],
        default="added",
    )
    title = blocks.CharBlock(max_length=160)
    body = blocks.RichTextBlock(features=RICH_TEXT_FEATURES, required=False)

    class Meta:
        icon = "date"


class ChangelogPage(SeoMixin, Page):
    intro = RichTextField(blank=True, features=["bold", "italic", "link"])
    entries = StreamField([("entry", ChangelogEntryBlock())], blank=True, help_text="Newest first.")

    content_panels = [*Page.content_panels, FieldPanel("intro"), FieldPanel("entries")]
    max_count = 1
    parent_page_types = ["cms.HomePage"]
    subpage_types: list[str] = []

    def seo_description(self) -> str:
        return self.search_description or self.plain(self.intro)
