"""Content-Security-Policy by path prefix (Django 5.2 has none of its own).

Settings: ``TIDINGS_CONTENT_SECURITY_POLICY`` maps a path prefix to a policy; the first
prefix that matches, in order, applies, and a response that set its own policy keeps it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.policies = list(settings.TIDINGS_CONTENT_SECURITY_POLICY.items())

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if HEADER not in response:
            path = request.path
            for prefix, policy in self.policies:
                if path.startswith(prefix):
                    response[HEADER] = policy
                    break
        return response
