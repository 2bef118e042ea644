"""The docs' blocks: highlighted code with a copy button, callouts, API operations from the schema."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from django.core.exceptions import ValidationError
from django.test import Client

from cms.blocks import ApiOperationBlock, DocsStreamBlock
from cms.openapi import api_document

pytestmark = pytest.mark.django_db


def test_a_code_block_is_highlighted_and_has_a_copy_button(site_client: Client) -> None:
    soup = BeautifulSoup(site_client.get("/docs/publishing/").content.decode(), "html.parser")
    block = soup.select_one('figure.code-block[data-language="python"]')
    assert block.figcaption.get_text(" ", strip=True).startswith("publish.py")
    assert block.select_one("button[data-copy-code]").get_text(" ", strip=True) == "Copy code"
    assert block.select_one(".highlight pre span.kn").get_text() == "import"  # Pygments' keyword token
    assert "requests.post(" in block.get_text()


def test_an_api_operation_block_renders_the_live_operation(site_client: Client) -> None:
    soup = BeautifulSoup(site_client.get("/docs/publishing/").content.decode(), "html.parser")
    section = soup.select_one("section.api-operation#op-notification_publish")
    operation = api_document()["paths"]["/api/v1/notifications"]["post"]
    assert section.select_one(".method").get_text() == "POST"
    assert section.select_one("code").get_text() == "/api/v1/notifications"
    assert operation["summary"] in section.get_text()
    fields = [
        row.td.code.get_text() for row in section.select("table:has(caption:-soup-contains('Request body')) tbody tr")
    ]
    assert {"template", "to", "channels"} <= set(fields)
    statuses = [row.td.get_text() for row in section.select("table:has(caption:-soup-contains('Responses')) tbody tr")]
    assert set(operation["responses"]) == set(statuses)
    assert section.select_one(".description strong")  # the Markdown description, rendered


def test_an_unknown_operation_is_refused_with_its_name() -> None:
    with pytest.raises(ValidationError) as refused:
        ApiOperationBlock().clean({"operation_id": "no_such_operation"})
    [message] = refused.value.block_errors["operation_id"].messages
    assert "no_such_operation is not one of the available choices" in message


def test_the_api_reference_lists_every_operation(site_client: Client) -> None:
    soup = BeautifulSoup(site_client.get("/docs/api-reference/").content.decode(), "html.parser")
    rendered = {s["id"] for s in soup.select("section.api-operation")}
    expected = {
        f"op-{op['operationId']}"
        for item in api_document()["paths"].values()
        for op in item.values()
        if "operationId" in op
    }
    assert rendered == expected


def test_docs_pages_link_previous_and_next_and_mark_the_sidebar(site_client: Client) -> None:
    soup = BeautifulSoup(site_client.get("/docs/api-keys/").content.decode(), "html.parser")
    assert soup.select_one("a[rel=prev]")["href"] == "/docs/getting-started/"
    assert soup.select_one("a[rel=next]")["href"] == "/docs/publishing/"
    assert soup.select_one(".docs-sidebar a[aria-current=page]").get_text() == "API keys"


def test_a_callout_keeps_its_kind_and_title() -> None:
    stream = DocsStreamBlock()
    value = stream.to_python(
        [{"type": "callout", "value": {"kind": "warning", "title": "Careful", "body": "<p>Mind the rate.</p>"}}]
    )
    html = stream.render(value)
    assert 'class="callout callout-warning"' in html and "Careful" in html and "Mind the rate." in html
