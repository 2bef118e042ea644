"""WSGI entry point for the API process (README "Running in production").

``/api/v1/`` runs through ``TIDINGS_API_MIDDLEWARE`` only; every other path gets the full
stack, as under ``config.wsgi``.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

from apps.core.api_app import api_first_application

application = api_first_application()
