"""Provider receipt webhooks at stable per-connector URLs: /webhooks/<connector_id>/<provider>.

Each provider module verifies a request with the connector's own secrets and parses it
into ``ReceiptEvent``s for ``receipt_ingest``; the view owns everything else.
"""
