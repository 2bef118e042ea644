"""Public pages edited in Wagtail: the home page for now; docs, blog and legal follow."""

from __future__ import annotations

from wagtail.admin.panels import FieldPanel
from wagtail.fields import RichTextField
from wagtail.models import Page


class HomePage(Page):
    intro = RichTextField(blank=True)

    content_panels = [*Page.content_panels, FieldPanel("intro")]

    max_count = 1
