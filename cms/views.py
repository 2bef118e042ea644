"""The site's pages that are not Wagtail pages: search, robots.txt and the llms.txt pair."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET
from wagtail.contrib.sitemaps.views import sitemap as wagtail_sitemap
from wagtail.models import Page, Site

from cms.llms import llms_document
from cms.models import BlogPostPage, DocsPage
from cms.navigation import site_menus

RESULTS_PER_PAGE = 10
MAX_QUERY_LENGTH = 200


@require_GET
def search(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()
    error = ""
    results = None
    if len(query) > MAX_QUERY_LENGTH:
        error = f"Search for at most {MAX_QUERY_LENGTH} characters."
    elif query:
        site = Site.find_for_request(request)
        pages = Page.objects.live().public().type(DocsPage, BlogPostPage)
        if site is not None:
            pages = pages.descendant_of(site.root_page, inclusive=True)
        found = pages.specific().search(query)
        results = Paginator(found, RESULTS_PER_PAGE).get_page(request.GET.get("page"))
    site = Site.find_for_request(request)
    home = site.root_page.specific if site else None
    status = 400 if error else 200
    return TemplateResponse(
        request,
        "cms/search.html",
        {"query": query, "results": results, "error": error, "home": home, **site_menus(request)},
        status=status,
    )


@require_GET
def llms_txt(request: HttpRequest) -> HttpResponse:
    return HttpResponse(llms_document("llms.txt"), content_type="text/plain; charset=utf-8")


@require_GET
def llms_full_txt(request: HttpRequest) -> HttpResponse:
    return HttpResponse(llms_document("llms-full.txt"), content_type="text/plain; charset=utf-8")


@require_GET
def robots_txt(request: HttpRequest) -> HttpResponse:
    # The staff surfaces are no business of crawlers; everything public is in the sitemap.
    lines = [
        "User-agent: *",
        "Disallow: /console/",
        "Disallow: /cms/",
        "Disallow: /admin/",
        "Disallow: /api/v1/",
        "Disallow: /search/",
        "Allow: /",
        "",
        f"Sitemap: {request.build_absolute_uri('/sitemap.xml')}",
        "",
    ]
    return HttpResponse("\n".join(lines), content_type="text/plain; charset=utf-8")


sitemap = require_GET(wagtail_sitemap)
