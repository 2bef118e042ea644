"""Sign-in forms that say when django-axes has locked signing in, and how long for.

The lock itself is django-axes' (settings ``AXES_*``): its backend refuses every password
while the account or the client is locked, which Django reports as a plain failed
sign-in. These forms turn that into a form error naming the lock, on every sign-in page
(console through allauth, ``apps.accounts.forms``; Django admin; CMS), so a person sees
why and for how long instead of a bare error page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from wagtail.admin.forms.auth import LoginForm as WagtailLoginForm

LOCKED_STATUS = 429


def sign_in_lock_duration() -> str:
    cool_off = settings.AXES_COOLOFF_TIME
    seconds = int(cool_off.total_seconds()) if isinstance(cool_off, timedelta) else 0
    if seconds >= 120:
        return f"{seconds // 60} minutes"
    if seconds >= 60:
        return "1 minute"
    return f"{seconds} seconds"


def sign_in_lock_message() -> str:
    return (
        "Signing in is locked: too many failed attempts for this account or from your network. "
        f"Try again in {sign_in_lock_duration()}; every attempt made before then starts the wait again."
    )


def is_sign_in_locked(request: HttpRequest | None) -> bool:
    return bool(getattr(request, "axes_locked_out", False))


class SignInLockMixin:
    """Reports a refusal caused by the lock as the lock, and warns as the lock nears."""

    request: HttpRequest | None

    def clean(self) -> dict[str, Any]:
        try:
            return super().clean()  # type: ignore[misc]
        except ValidationError as invalid:
            if is_sign_in_locked(self.request):
                raise ValidationError(sign_in_lock_message(), code="locked") from None
            failures = getattr(self.request, "axes_failures_since_start", None)
            left = int(settings.AXES_FAILURE_LIMIT) - failures if isinstance(failures, int) else None
            if left is not None and 0 < left <= 2:
                attempts = "attempt" if left == 1 else "attempts"
                raise ValidationError(
                    [
                        *invalid.error_list,
                        ValidationError(
                            f"{left} more failed {attempts} will lock signing in for {sign_in_lock_duration()}.",
                            code="lock_near",
                        ),
                    ]
                ) from None
            raise


class AdminSignInForm(SignInLockMixin, AdminAuthenticationForm):
    pass


class CmsSignInForm(SignInLockMixin, WagtailLoginForm):
    pass


def sign_in_locked_response(request: HttpRequest, response: HttpResponse | None) -> HttpResponse:
    """The answer to a sign-in refused by the lock: the sign-in page the view rendered,
    with its form error; only the status changes, so clients reading statuses see it too."""
    if isinstance(response, HttpResponse) and response.status_code == 200:
        response.status_code = LOCKED_STATUS
        return response
    return HttpResponse(sign_in_lock_message(), status=LOCKED_STATUS, content_type="text/plain; charset=utf-8")


class SignInLockMiddleware:
    """Stands in for ``axes.middleware.AxesMiddleware``, last in MIDDLEWARE.

    django-axes 8.3.1's middleware hands the credentials to the lockout answer where the
    view's response belongs when it runs async (jazzband/django-axes#1494), which under
    ASGI, how the web process serves, turned every lock into a 500. This one keeps the
    page in both modes and does no I/O, so it is safe on the event loop.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        if iscoroutinefunction(self):
            return self._acall(request)
        return self._answer(request, self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        return self._answer(request, await self.get_response(request))

    @staticmethod
    def _answer(request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if settings.AXES_ENABLED and is_sign_in_locked(request):
            return sign_in_locked_response(request, response)
        return response
