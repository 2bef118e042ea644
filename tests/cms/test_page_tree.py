"""Which page type may sit under which, and that editors can add and publish pages."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from wagtail.models import Page

from cms.models import (
    ApiReferencePage,
    BlogIndexPage,
    BlogPostPage,
    ChangelogPage,
    DocsIndexPage,
    DocsPage,
    HomePage,
    LegalIndexPage,
    LegalPage,
    PricingPage,
)

pytestmark = pytest.mark.django_db


def test_home_takes_the_site_sections_and_nothing_else(site_home: HomePage) -> None:
    allowed = set(HomePage.allowed_subpage_models())
    assert allowed == {DocsIndexPage, BlogIndexPage, LegalIndexPage, PricingPage, ChangelogPage}
    assert not DocsPage.can_create_at(site_home)
    assert not BlogPostPage.can_create_at(site_home)


def test_docs_nest_under_docs_and_posts_only_under_the_blog(site_home: HomePage) -> None:
    docs = DocsIndexPage.objects.get()
    blog = BlogIndexPage.objects.get()
    getting_started = DocsPage.objects.get(slug="getting-started")
    assert DocsPage.can_create_at(docs)
    assert DocsPage.can_create_at(getting_started)  # nested docs pages
    assert not DocsPage.can_create_at(blog)
    assert BlogPostPage.can_create_at(blog)
    assert not BlogPostPage.can_create_at(docs)
    assert not LegalPage.can_create_at(docs)
    assert LegalPage.can_create_at(LegalIndexPage.objects.get())


def test_section_indexes_and_the_api_reference_are_singletons(site_home: HomePage) -> None:
    docs = DocsIndexPage.objects.get()
    assert not DocsIndexPage.can_create_at(site_home)  # one exists already
    assert not ApiReferencePage.can_create_at(docs)
    assert not PricingPage.can_create_at(site_home)


def test_add_child_page_under_home_offers_the_section_types(site_home: HomePage, admin_client: Client) -> None:
    # Once answered "Sorry, you do not have permission": the home page had no type to add.
    LegalIndexPage.objects.get().delete()
    ChangelogPage.objects.get().delete()
    response = admin_client.get(f"/cms/pages/{site_home.pk}/add_subpage/")
    assert response.status_code == 200
    assert b"Legal index page" in response.content
    assert b"Changelog page" in response.content
    assert b"Blog post page" not in response.content


def editor(username: str = "ed") -> Any:
    user = get_user_model().objects.create_user(username=username, password="correct-horse-battery")
    user.groups.add(Group.objects.get(name="Editors"))
    return user


def test_an_editor_adds_and_publishes_a_docs_page(site_home: HomePage) -> None:
    client = Client()
    client.force_login(editor())
    docs = DocsIndexPage.objects.get()
    form = client.get(f"/cms/pages/add/cms/docspage/{docs.pk}/")
    assert form.status_code == 200
    response = client.post(
        f"/cms/pages/add/cms/docspage/{docs.pk}/",
        {
            "title": "Quiet hours",
            "slug": "quiet-hours",
            "summary": "Hold messages overnight.",
            "body-count": "0",
            "action-publish": "publish",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    page = DocsPage.objects.get(slug="quiet-hours")
    assert page.live
    assert page.get_parent().pk == docs.pk


def test_an_editor_cannot_put_a_blog_post_under_the_docs(site_home: HomePage) -> None:
    client = Client()
    client.force_login(editor("ed2"))
    docs = DocsIndexPage.objects.get()
    response = client.post(
        f"/cms/pages/add/cms/blogpostpage/{docs.pk}/",
        {"title": "Misplaced", "slug": "misplaced", "action-publish": "publish"},
        follow=True,
    )
    assert b"Sorry, you do not have permission" in response.content
    assert not Page.objects.filter(slug="misplaced").exists()
