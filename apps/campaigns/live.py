"""Server-sent events for live campaign progress.

Under ASGI the stream is an async generator, so a watching browser holds no worker
thread. Under WSGI (the test server, ``runserver``) Django would buffer an async
generator to the end, so the same events come from a plain generator instead.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse

from apps.campaigns.models import Campaign
from apps.campaigns.selectors import campaign_progress


def _interval() -> float:
    return float(getattr(settings, "TIDINGS_CAMPAIGN_STREAM_INTERVAL", 1.0))


def _max_seconds() -> float:
    # The browser's EventSource reconnects by itself; a bounded stream frees the server.
    return float(getattr(settings, "TIDINGS_CAMPAIGN_STREAM_MAX_SECONDS", 300))


def snapshot(project_id: int, campaign_id: int) -> tuple[str, bool]:
    campaign = Campaign.objects.for_project(project_id).get(pk=campaign_id)
    data = campaign_progress(campaign)
    return f"event: progress\ndata: {json.dumps(data)}\n\n", campaign.is_terminal


def _sync_events(project_id: int, campaign_id: int) -> Iterator[str]:
    yield "retry: 2000\n\n"
    deadline = time.monotonic() + _max_seconds()
    while True:
        chunk, terminal = snapshot(project_id, campaign_id)
        yield chunk
        if terminal or time.monotonic() > deadline:
            return
        time.sleep(_interval())


async def _async_events(project_id: int, campaign_id: int) -> AsyncIterator[str]:
    yield "retry: 2000\n\n"
    deadline = time.monotonic() + _max_seconds()
    read = sync_to_async(snapshot)
    while True:
        chunk, terminal = await read(project_id, campaign_id)
        yield chunk
        if terminal or time.monotonic() > deadline:
            return
        await asyncio.sleep(_interval())


def event_stream(request: HttpRequest, *, project_id: int, campaign_id: int) -> StreamingHttpResponse:
    content: Any
    if isinstance(request, ASGIRequest):
        content = _async_events(project_id, campaign_id)
    else:
        content = _sync_events(project_id, campaign_id)
    response = StreamingHttpResponse(content, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
