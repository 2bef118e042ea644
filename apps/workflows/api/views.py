"""Workflows as code: drafts, publishing, versions, executions and their progress."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api_schema import problem_responses
from apps.core.errors import ApplicationError
from apps.core.query import query_data
from apps.governance.api.base import ProjectAPIView
from apps.governance.scopes import READ, WORKFLOWS_START, WORKFLOWS_WRITE
from apps.workflows import selectors, services
from apps.workflows.api.serializers import ExecutionInput, WaitPreviewInput, WorkflowInput
from apps.workflows.graph import graph_issues
from apps.workflows.models import Execution, Workflow, WorkflowVersion
from apps.workflows.preview import wait_preview


def workflow_data(workflow: Workflow, *, with_issues: bool = False) -> dict[str, Any]:
    latest = workflow.versions.order_by("-number").values_list("number", flat=True).first()
    data: dict[str, Any] = {
        "key": workflow.key,
        "name": workflow.name,
        "allow_reentry": workflow.allow_reentry,
        "draft_graph": workflow.draft_graph,
        "latest_version": latest,
        "updated_at": workflow.updated_at,
    }
    if with_issues:
        # The draft may be unfinished; report what publishing would refuse.
        data["draft_issues"] = [i.as_dict() for i in graph_issues(workflow.draft_graph, project=workflow.project)]
    return data


def version_data(version: WorkflowVersion) -> dict[str, Any]:
    return {
        "workflow": version.workflow.key,
        "number": version.number,
        "graph": version.graph,
        "published_at": version.published_at,
        "published_by": version.published_by.get_username() if version.published_by else None,
        "published_via": version.published_via,
    }


def execution_data(execution: Execution) -> dict[str, Any]:
    return {
        "id": execution.pk,
        "workflow": execution.workflow.key,
        "version": execution.version.number,
        "state": execution.state,
        "unknown_external_ids": execution.unknown_external_ids,
    }


class WorkflowsView(ProjectAPIView):
    required_scopes = {"POST": WORKFLOWS_WRITE, "GET": READ}

    @extend_schema(operation_id="workflows_list", responses=dict)
    def get(self, request: Request) -> Response:
        return Response({"results": [workflow_data(w) for w in selectors.workflow_list(self.project)]})

    @extend_schema(
        operation_id="workflows_save_draft",
        request=WorkflowInput,
        responses={
            200: OpenApiResponse(dict, description="The draft of an existing workflow, saved."),
            201: OpenApiResponse(dict, description="A new workflow, with this draft."),
        },
    )
    def post(self, request: Request) -> Response:
        data = WorkflowInput(data=request.data)
        data.is_valid(raise_exception=True)
        workflow, created = services.workflow_save_draft(project=self.project, **data.validated_data)
        return Response(workflow_data(workflow, with_issues=True), status=201 if created else 200)


class WorkflowDetailView(ProjectAPIView):
    required_scope = READ

    @extend_schema(operation_id="workflows_get", responses=dict)
    def get(self, request: Request, key: str) -> Response:
        return Response(workflow_data(selectors.workflow_get(self.project, key), with_issues=True))


class PublishView(ProjectAPIView):
    required_scope = WORKFLOWS_WRITE

    @extend_schema(
        operation_id="workflows_publish",
        description=(
            "Validate the draft and freeze it as the next immutable version. Refused with 409 "
            "`draft_unchanged` when the draft is the same as the latest version (nothing to publish) "
            "and 409 `workflow_archived` for an archived workflow; 422 `invalid_graph` lists every "
            "problem, each naming its node or edge."
        ),
        request=None,
        responses={201: OpenApiResponse(dict, description="The new version."), **problem_responses(404, 409, 422)},
    )
    def post(self, request: Request, key: str) -> Response:
        workflow = selectors.workflow_get(self.project, key)
        version = services.workflow_publish(
            project=self.project, workflow=workflow, published_via=f"api key {self.api_key.masked}"
        )
        return Response(version_data(version), status=201)


class VersionView(ProjectAPIView):
    required_scope = READ

    @extend_schema(operation_id="workflows_version_get", responses=dict)
    def get(self, request: Request, key: str, number: int) -> Response:
        workflow = selectors.workflow_get(self.project, key)
        return Response(version_data(selectors.version_get(self.project, workflow, number)))


class WaitPreviewView(ProjectAPIView):
    required_scope = READ

    @extend_schema(operation_id="workflows_wait_preview", parameters=[WaitPreviewInput], responses=dict)
    def get(self, request: Request, key: str, number: int) -> Response:
        query = WaitPreviewInput(data=query_data(request.query_params))
        query.is_valid(raise_exception=True)
        workflow = selectors.workflow_get(self.project, key)
        version = selectors.version_get(self.project, workflow, number)
        params = query.validated_data
        return Response(
            wait_preview(
                project=self.project,
                version=version,
                node_id=params["node"],
                external_id=params.get("subscriber"),
                at=params.get("at") or timezone.now(),
                timezone_name=params.get("timezone"),
            )
        )


class ExecutionsView(ProjectAPIView):
    required_scope = WORKFLOWS_START

    @extend_schema(
        operation_id="workflows_execute",
        request=ExecutionInput,
        responses={202: OpenApiResponse(dict, description="The execution, started; journeys follow.")},
    )
    def post(self, request: Request, key: str) -> Response:
        data = ExecutionInput(data=request.data)
        data.is_valid(raise_exception=True)
        params = dict(data.validated_data)
        version = params.pop("version", None)
        workflow = selectors.workflow_get(self.project, key)
        execution = services.execution_start(
            project=self.project,
            workflow=workflow,
            audience=params,
            version_number=version,
            started_by=f"api key {self.api_key.masked}",
        )
        return Response(execution_data(execution), status=202)


class ExecutionView(ProjectAPIView):
    required_scope = READ

    @extend_schema(operation_id="executions_get", responses=dict)
    def get(self, request: Request, execution_id: int) -> Response:
        execution = selectors.execution_get(self.project, execution_id)
        return Response(selectors.execution_summary(self.project, execution))


class ExecutionCancelView(ProjectAPIView):
    required_scope = WORKFLOWS_START

    @extend_schema(operation_id="executions_cancel", request=None, responses=dict)
    def post(self, request: Request, execution_id: int) -> Response:
        execution = selectors.execution_get(self.project, execution_id)
        execution = services.execution_cancel(project=self.project, execution=execution)
        return Response(execution_data(execution))


class ExecutionSubscriberView(ProjectAPIView):
    required_scope = READ

    @extend_schema(operation_id="executions_subscriber_journey", responses=dict)
    def get(self, request: Request, execution_id: int, external_id: str) -> Response:
        execution = selectors.execution_get(self.project, execution_id)
        journey = selectors.journey_for(self.project, execution, external_id)
        return Response(selectors.journey_summary(self.project, journey))


class ExecutionSubscriberStopView(ProjectAPIView):
    required_scope = WORKFLOWS_START

    @extend_schema(operation_id="executions_subscriber_stop", request=None, responses=dict)
    def post(self, request: Request, execution_id: int, external_id: str) -> Response:
        execution = selectors.execution_get(self.project, execution_id)
        journey = selectors.journey_for(self.project, execution, external_id)
        if services.journeys_stop(project=self.project, journeys=[journey], reason="stopped via API") == 0:
            raise ApplicationError(
                f"The journey of {external_id!r} is already {journey.state}.", code="journey_finished", status=409
            )
        journey.refresh_from_db()
        return Response(selectors.journey_summary(self.project, journey))
