from __future__ import annotations

from django.urls import path

from .views import receipt_webhook

app_name = "delivery_webhooks"

urlpatterns = [
    path("<int:connector_id>/<slug:provider>", receipt_webhook, name="receipt"),
]
