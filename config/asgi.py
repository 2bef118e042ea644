"""ASGI entry point. Oversized request bodies are refused before Django reads them."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
django_application = get_asgi_application()

from apps.core.limits import BodySizeLimitASGI  # noqa: E402

application = BodySizeLimitASGI(django_application)
