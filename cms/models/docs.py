"""Docs: one index, nested pages built from blocks, and the API reference from the schema."""

from __future__ import annotations

from typing import Any

from django.db import models
from wagtail.admin.panels import FieldPanel
from wagtail.fields import RichTextField, StreamField
from wagtail.models import Page
from wagtail.search import index

from cms import jsonld
from cms.blocks import DocsStreamBlock
from cms.models.seo import SeoMixin
from cms.openapi import api_operations_by_tag


class DocsSection(SeoMixin):
    """What every page under the docs index shares: the sidebar and previous/next."""

    def docs_index(self) -> Page:
        page: Page = self  # type: ignore[assignment]
        if isinstance(page, DocsIndexPage):
            return page
        return page.get_ancestors().type(DocsIndexPage).live().specific().last() or page

    def docs_sequence(self) -> list[Page]:
        # Depth-first in the editors' order: the order a reader goes through the docs.
        root = self.docs_index()
        return [root, *root.get_descendants().live().public().specific()]

    def sidebar(self) -> list[dict[str, Any]]:
        root = self.docs_index()
        nodes: dict[int, dict[str, Any]] = {}
        top: list[dict[str, Any]] = []
        for page in self.docs_sequence()[1:]:
            node = {"page": page, "children": []}
            nodes[page.pk] = node
            parent = nodes.get(page.get_parent().pk) if page.depth > root.depth + 1 else None
            (parent["children"] if parent else top).append(node)
        return top

    def neighbours(self) -> tuple[Page | None, Page | None]:
        sequence = self.docs_sequence()
        ids = [p.pk for p in sequence]
        at = ids.index(self.pk) if self.pk in ids else -1  # type: ignore[attr-defined]
        if at < 0:
            return None, None
        return (sequence[at - 1] if at > 0 else None), (sequence[at + 1] if at + 1 < len(sequence) else None)


class DocsIndexPage(DocsSection, Page):
    intro = RichTextField(blank=True, features=["bold", "italic", "link", "code"])

    content_panels = [*Page.content_panels, FieldPanel("intro")]
    max_count = 1
    parent_page_types = ["cms.HomePage"]
    subpage_types = ["cms.DocsPage", "cms.ApiReferencePage"]

    def seo_description(self) -> str:
        return self.search_description or self.plain(self.intro)


class DocsPage(DocsSection, Page):
    summary = models.CharField(max_length=300, blank=True, help_text="One sentence: what the reader will learn.")
    body = StreamField(DocsStreamBlock(), blank=True)

    content_panels = [*Page.content_panels, FieldPanel("summary"), FieldPanel("body")]
    search_fields = [*Page.search_fields, index.SearchField("summary"), index.SearchField("body")]

    parent_page_types = ["cms.DocsIndexPage", "cms.DocsPage"]
    subpage_types = ["cms.DocsPage"]
    og_type = "article"

    def seo_description(self) -> str:
        return self.search_description or self.summary or self.title

    def page_json_ld(self, request: Any) -> list[dict[str, Any]]:
        return [
            jsonld.article(
                "TechArticle",
                self,
                request,
                description=self.seo_description(),
                author=jsonld.ORGANIZATION_NAME,
                published=self.first_published_at,
            )
        ]


class ApiReferencePage(DocsSection, Page):
    intro = RichTextField(blank=True, features=["bold", "italic", "link", "code"])

    content_panels = [*Page.content_panels, FieldPanel("intro")]
    max_count = 1
    parent_page_types = ["cms.DocsIndexPage"]
    subpage_types: list[str] = []
    og_type = "article"

    def get_context(self, request: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context(request, *args, **kwargs)
        context["operation_groups"] = api_operations_by_tag()
        return context

    def seo_description(self) -> str:
        return self.search_description or self.plain(self.intro) or "Every operation of the Tidings API."

    def page_json_ld(self, request: Any) -> list[dict[str, Any]]:
        return [
            jsonld.article(
                "TechArticle",
                self,
                request,
                description=self.seo_description(),
                author=jsonld.ORGANIZATION_NAME,
                published=self.first_published_at,
            )
        ]
