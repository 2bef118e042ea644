"""Console: the notification explorer and one notification's story."""

from __future__ import annotations

from collections import Counter

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.console.access import console_page
from apps.core.errors import NotFound
from apps.delivery.models import Delivery
from apps.notifications.console.forms import ExplorerFilterForm
from apps.notifications.selectors import notification_deliveries, notification_get, notification_search

PAGE_SIZE = 50


@console_page
def explorer(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    form = ExplorerFilterForm(request.GET or None)
    filters = {}
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        filters = {
            "notification_id": data.get("id"),
            "subscriber": data.get("subscriber") or "",
            "state": data.get("state") or "",
            "channel": data.get("channel") or "",
            "since": data.get("since"),
            "until": data.get("until"),
        }
    notifications = notification_search(project, **filters)
    page = Paginator(notifications, PAGE_SIZE).get_page(request.GET.get("page"))
    ids = [str(n.pk) for n in page]
    states: dict[str, Counter] = {}
    for origin_id, state in (
        Delivery.objects.for_project(project)
        .filter(origin_kind="notification", origin_id__in=ids)
        .values_list("origin_id", "state")
    ):
        states.setdefault(origin_id, Counter())[state] += 1
    rows = [(n, sorted(states.get(str(n.pk), Counter()).items())) for n in page]
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "notifications/explorer.html",
        {"section": "notifications", "form": form, "rows": rows, "page": page, "query": query.urlencode()},
        status=200 if not form.is_bound or form.is_valid() else 400,
    )


@console_page
def notification_detail(request: HttpRequest, notification_id: int) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    try:
        notification = notification_get(project, notification_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    return render(
        request,
        "notifications/detail.html",
        {
            "section": "notifications",
            "notification": notification,
            "deliveries": notification_deliveries(project, notification),
        },
    )
