"""Subscriber imports over HTTP: upload (202 + job) and progress."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.errors import ApplicationError
from apps.governance.api.docs import described
from apps.governance.scopes import READ, SUBSCRIBERS_WRITE
from apps.subscribers import selectors
from apps.subscribers.api import serializers as s
from apps.subscribers.api.base import SubscribersAPIView, problems
from apps.subscribers.services import import_create


class ImportCreateView(SubscribersAPIView):
    # Multipart (field ``file``) or a raw body typed text/csv or application/x-ndjson.
    # The body is never read whole: multipart parts spool to a temporary file and a raw
    # body is streamed straight into storage.

    required_scope = SUBSCRIBERS_WRITE
    secret_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="subscribers_import",
        tags=["imports"],
        summary="Upload a CSV or NDJSON file of subscribers (secret key); imported in the background",
        description=described(
            "Send the file as the multipart field `file`, or as the raw body typed text/csv or "
            "application/x-ndjson (then `?filename=` names it). Answers 202 with the job; poll "
            "the Location. 413 for a file over the upload limit; 415 for another content type.",
            SUBSCRIBERS_WRITE,
            secret_only=True,
        ),
        request={
            "multipart/form-data": s.ImportUploadIn,
            "text/csv": OpenApiTypes.BINARY,
            "application/x-ndjson": OpenApiTypes.BINARY,
        },
        parameters=[
            OpenApiParameter("filename", str, description="File name to record for a raw (non-multipart) body."),
            OpenApiParameter(
                "Location",
                str,
                OpenApiParameter.HEADER,
                response=[202],
                description="URL of the import job, e.g. /api/v1/imports/42.",
            ),
        ],
        responses={202: s.ImportJobOut, **problems(403, 413, 415, 422)},
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

    @extend_schema(
        operation_id="import_get",
        description=described(
            (
                "Counts of rows imported and rejected, the state of the job and each rejected row with "
                "why. 404 for a job of another project."
            ),
            READ,
        ),
        tags=["imports"],
        summary="An import job's progress and rejected rows",
        responses={200: s.ImportJobOut, **problems(403, 404)},
    )
    def get(self, request: Request, job_id: int) -> Response:
        return Response(s.import_out(selectors.import_get(self.project, job_id)))
