"""The blog: an index with RSS and Atom feeds, and posts with author, date, tags and hero image."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.templatetags.static import static
from django.utils import timezone
from modelcluster.contrib.taggit import ClusterTaggableManager
from modelcluster.fields import ParentalKey
from taggit.models import TaggedItemBase
from wagtail.admin.panels import FieldPanel, MultiFieldPanel
from wagtail.contrib.routable_page.models import RoutablePageMixin, path
from wagtail.fields import RichTextField, StreamField
from wagtail.models import Page
from wagtail.search import index

from cms import jsonld
from cms.blocks import DocsStreamBlock
from cms.models.seo import SeoMixin

POSTS_PER_PAGE = 10


class BlogIndexPage(RoutablePageMixin, SeoMixin, Page):
    intro = RichTextField(blank=True, features=["bold", "italic", "link"])

    content_panels = [*Page.content_panels, FieldPanel("intro")]
    max_count = 1
    parent_page_types = ["cms.HomePage"]
    subpage_types = ["cms.BlogPostPage"]

    def posts(self) -> models.QuerySet[BlogPostPage]:
        return BlogPostPage.objects.child_of(self).live().public().order_by("-date", "-pk")

    def seo_description(self) -> str:
        return self.search_description or self.plain(self.intro)

    @path("")
    def post_list(self, request: HttpRequest) -> HttpResponse:
        posts = self.posts()
        tag = request.GET.get("tag", "").strip()
        if tag:
            posts = posts.filter(tags__name=tag)
        paginator = Paginator(posts, POSTS_PER_PAGE)
        listing = paginator.get_page(request.GET.get("page"))
        return self.render(request, context_overrides={"listing": listing, "tag": tag})

    @path("feed/rss/", name="rss")
    def rss_feed(self, request: HttpRequest) -> HttpResponse:
        from cms.feeds import blog_feed

        return blog_feed(self, request, "rss")

    @path("feed/atom/", name="atom")
    def atom_feed(self, request: HttpRequest) -> HttpResponse:
        from cms.feeds import blog_feed

        return blog_feed(self, request, "atom")


class BlogPostTag(TaggedItemBase):
    content_object = ParentalKey("cms.BlogPostPage", related_name="tagged_items", on_delete=models.CASCADE)


class BlogPostPage(SeoMixin, Page):
    author = models.CharField(max_length=120)
    date = models.DateField("Post date", default=timezone.localdate)
    summary = models.CharField(max_length=300, help_text="One or two sentences for the listing, feeds and cards.")
    hero_image = models.ForeignKey(
        "wagtailimages.Image", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    hero_image_alt = models.CharField(max_length=200, blank=True, help_text="What the image shows, for screen readers.")
    tags = ClusterTaggableManager(through=BlogPostTag, blank=True)
    body = StreamField(DocsStreamBlock(), blank=True)

    content_panels = [
        *Page.content_panels,
        MultiFieldPanel([FieldPanel("author"), FieldPanel("date"), FieldPanel("tags")], heading="About the post"),
        FieldPanel("summary"),
        MultiFieldPanel([FieldPanel("hero_image"), FieldPanel("hero_image_alt")], heading="Hero image"),
        FieldPanel("body"),
    ]
    search_fields = [
        *Page.search_fields,
        index.SearchField("summary"),
        index.SearchField("body"),
        index.FilterField("date"),
        index.SearchField("author"),
    ]
    parent_page_types = ["cms.BlogIndexPage"]
    subpage_types: list[str] = []
    og_type = "article"

    def seo_description(self) -> str:
        return self.search_description or self.summary

    def og_image_url(self, request: Any) -> str | None:
        if not self.hero_image:
            return None
        return request.build_absolute_uri(self.hero_image.get_rendition("fill-1200x630").url)

    def page_json_ld(self, request: Any) -> list[dict[str, Any]]:
        return [
            jsonld.article(
                "BlogPosting",
                self,
                request,
                description=self.seo_description(),
                author=self.author,
                published=self.date,
                # Search engines want an image for a post: the site's logo when it has no hero.
                image=self.og_image_url(request) or request.build_absolute_uri(static("cms/logo.svg")),
            )
        ]
