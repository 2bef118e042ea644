"""Reads for the "Sent mail" page: recent account email, as each message went out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from apps.accounts.mail import ORIGIN_KIND
from apps.accounts.platform import platform_project
from apps.delivery.models import Delivery
from apps.delivery.selectors import sent_content_by_delivery

_URL = re.compile(r"https?://[^\s<>\"']+")


class _Hrefs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [value for name, value in attrs if name == "href" and value]


@dataclass
class SentMail:
    delivery: Delivery
    subject: str = ""
    text: str = ""
    html: str = ""
    # Every http(s) link of the message, in order, each once: what a newcomer clicks.
    links: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.delivery.origin_id


def message_links(text: str, html: str) -> list[str]:
    parser = _Hrefs()
    parser.feed(html or "")
    found = [href for href in parser.hrefs if href.startswith(("http://", "https://"))]
    found += [url.rstrip(".,;)") for url in _URL.findall(text or "")]
    return list(dict.fromkeys(found))


def sent_account_mail(*, limit: int = 50, to: str = "") -> list[SentMail]:
    """The latest account emails of the platform project, newest first, with the content
    each was sent with (empty while a message is still queued or if it failed)."""
    project = platform_project()
    if project is None:
        return []
    deliveries = Delivery.objects.for_project(project).filter(origin_kind=ORIGIN_KIND)
    if to:
        deliveries = deliveries.filter(destination__iexact=to.strip())
    rows = list(deliveries.order_by("-created_at", "-id")[:limit])
    contents = sent_content_by_delivery(project, [row.pk for row in rows])
    mails = []
    for row in rows:
        content = contents.get(row.pk, {})
        subject, text, html = (str(content.get(name) or "") for name in ("subject", "text", "html"))
        mails.append(SentMail(row, subject, text, html, message_links(text, html)))
    return mails
