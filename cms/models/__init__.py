"""Public pages edited in Wagtail; each module is one section of the site."""

from cms.models.blog import BlogIndexPage, BlogPostPage, BlogPostTag
from cms.models.docs import ApiReferencePage, DocsIndexPage, DocsPage
from cms.models.home import ChangelogPage, HomePage, PricingPage
from cms.models.legal import LegalIndexPage, LegalPage, LegalVersion

__all__ = [
    "ApiReferencePage",
    "BlogIndexPage",
    "BlogPostPage",
    "BlogPostTag",
    "ChangelogPage",
    "DocsIndexPage",
    "DocsPage",
    "HomePage",
    "LegalIndexPage",
    "LegalPage",
    "LegalVersion",
    "PricingPage",
]
