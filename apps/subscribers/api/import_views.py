"""Subscriber imports over HTTP: upload (202 + job) and progress."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.errors import ApplicationError
from apps.governance.scopes import READ, SUBSCRIBERS_WRITE
from apps.subscribers import selectors
from apps.subscribers.api import serializers as s
from apps.subscribers.api.base import SubscribersAPIView
from apps.subscribers.services import import_create


class ImportCreateView(SubscribersAPIView):
    """Multipart (field ``file``) or a raw body typed text/csv or application/x-ndjson.

    The body is never read whole: multipart parts spool to a temporary file and a raw body
    is streamed straight into storage.
    """

    required_scope = SUBSCRIBERS_WRITE
    secret_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="subscribers_import",
        request={
            "text/csv": OpenApiTypes.BINARY,
            "application/x-ndjson": OpenApiTypes.BINARY,
            "multipart/form-data": OpenApiTypes.OBJECT,
        },
        responses=OpenApiTypes.OBJECT,
    )
    def post(self, request: Request) -> Response:
        django_request = request._request
        content_type = request.content_type or ""
        if content_type.startswith("multipart/form-data"):
            upload = django_request.FILES.get("file")
            if upload is None:
                raise ApplicationError("Attach the file as the multipart field 'file'.", field="file")
            job = import_create(
                project=self.project,
                stream=upload,
                file_name=upload.name or "",
                content_type=upload.content_type or "",
            )
        else:
            name = request.query_params.get("filename", "")
            job = import_create(project=self.project, stream=django_request, file_name=name, content_type=content_type)
        response = Response(s.import_out(job), status=status.HTTP_202_ACCEPTED)
        response["Location"] = f"/api/v1/imports/{job.pk}"
        return response


class ImportDetailView(SubscribersAPIView):
    required_scope = READ

    @extend_schema(operation_id="import_get", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, job_id: int) -> Response:
        return Response(s.import_out(selectors.import_get(self.project, job_id)))
