"""Writes of the delivery app. Import from here: ``from apps.delivery.services import ...``."""

from apps.delivery.services.connectors import connector_config, connector_create, connector_resolve
from apps.delivery.services.content import (
    UnsafeHtml,
    html_validate,
    layout_html_validate,
    template_content_validate,
)
from apps.delivery.services.enqueue import (
    DeliveryRequest,
    deliveries_cancel,
    deliveries_enqueue,
    deliveries_enqueue_for_subscribers,
)
from apps.delivery.services.receipts import IngestResult, receipt_ingest
from apps.delivery.services.sent_content import sent_content_prune
from apps.delivery.services.suppression import suppression_add, suppression_remove, suppressions_add_bulk
from apps.delivery.services.templates import (
    layout_save,
    template_create,
    template_version_create,
    template_version_publish,
)

__all__ = [
    "DeliveryRequest",
    "IngestResult",
    "UnsafeHtml",
    "connector_config",
    "connector_create",
    "connector_resolve",
    "deliveries_cancel",
    "deliveries_enqueue",
    "deliveries_enqueue_for_subscribers",
    "html_validate",
    "layout_html_validate",
    "layout_save",
    "receipt_ingest",
    "sent_content_prune",
    "suppression_add",
    "suppression_remove",
    "suppressions_add_bulk",
    "template_content_validate",
    "template_create",
    "template_version_create",
    "template_version_publish",
]
