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
from apps.governance.api.docs import described
from apps.governance.scopes import READ, WORKFLOWS_START, WORKFLOWS_WRITE
from apps.workflows import selectors, services
from apps.workflows.api.schema import WorkflowDetailOut, WorkflowListOut, WorkflowVersionOut
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

    @extend_schema(
        operation_id="workflows_list",
        summary="List workflows",
        description=described(
            "Every workflow of the project with its draft graph and latest published version number.", READ
        ),
        responses=WorkflowListOut,
    )
    def get(self, request: Request) -> Response:
        return Response({"results": [workflow_data(w) for w in selectors.workflow_list(self.project)]})

    @extend_schema(
        operation_id="workflows_save_draft",
        summary="Create a workflow or save its draft",
        description=described(
            (
                "Creates the workflow `key` (201) or updates its name, re-entry rule or draft graph "
                "(200). Only the graph's shape is checked here (422 `invalid_graph`): a draft may be "
                "unfinished, and the answer's `draft_issues` lists what publishing would refuse."
            ),
            WORKFLOWS_WRITE,
        ),
        request=WorkflowInput,
        responses={200: WorkflowDetailOut, 201: WorkflowDetailOut},
    )
    def post(self, request: Request) -> Response:
        data = WorkflowInput(data=request.data)
        data.is_valid(raise_exception=True)
        workflow, created = services.workflow_save_draft(project=self.project, **data.validated_data)
        return Response(workflow_data(workflow, with_issues=True), status=201 if created else 200)


class WorkflowDetailView(ProjectAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="workflows_get",
        summary="One workflow with its draft and draft issues",
        description=described(
            (
                "The workflow, its draft graph and `draft_issues`: every problem publishing the draft "
                "would meet. 404 for a key this project does not have."
            ),
            READ,
        ),
        responses=WorkflowDetailOut,
    )
    def get(self, request: Request, key: str) -> Response:
        return Response(workflow_data(selectors.workflow_get(self.project, key), with_issues=True))


class PublishView(ProjectAPIView):
    required_scope = WORKFLOWS_WRITE

    @extend_schema(
        operation_id="workflows_publish",
        summary="Publish the draft as a new version",
        description=described(
            "Validate the draft and freeze it as the next immutable version. Refused with 409 "
            "`draft_unchanged` when the draft is the same as the latest version (nothing to publish) "
            "and 409 `workflow_archived` for an archived workflow; 422 `invalid_graph` lists every "
            "problem, each naming its node or edge.",
            WORKFLOWS_WRITE,
        ),
        request=None,
        responses={
            201: OpenApiResponse(WorkflowVersionOut, description="The new version."),
            **problem_responses(404, 409, 422),
        },
    )
    def post(self, request: Request, key: str) -> Response:
        workflow = selectors.workflow_get(self.project, key)
        version = services.workflow_publish(
            project=self.project, workflow=workflow, published_via=f"api key {self.api_key.masked}"
        )
        return Response(version_data(version), status=201)


class VersionView(ProjectAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="workflows_version_get",
        summary="One published version's graph",
        description=described(
            (
                "The frozen graph of version `number`, with who published it and how. Versions never "
                "change. 404 for an unknown workflow or version."
            ),
            READ,
        ),
        responses=WorkflowVersionOut,
    )
    def get(self, request: Request, key: str, number: int) -> Response:
        workflow = selectors.workflow_get(self.project, key)
        return Response(version_data(selectors.version_get(self.project, workflow, number)))


class WaitPreviewView(ProjectAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="workflows_wait_preview",
        summary="When a wait node would resume",
        description=described(
            (
                "Computes when the wait node `node` of this version would resume for a subscriber "
                "reaching it at `at` (default now), in the subscriber's timezone, a given `timezone`, "
                "or the project's. 422 `not_a_wait_node`, `invalid_timezone` or `timezone_required`; "
                "404 for an unknown workflow, version, node or subscriber."
            ),
            READ,
        ),
        parameters=[WaitPreviewInput],
        responses=dict,
    )
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
        summary="Start an execution of a workflow",
        description=described(
            (
                "Enters an audience (exactly one of `external_ids`, `segment`, `tag` or `everyone`) "
                "into the latest published version, or the `version` given. Answers 202 at once; "
                "journeys start in the background and `unknown_external_ids` lists ids this project "
                "does not have. 409 `workflow_not_published` or `workflow_archived`; 422 "
                "`invalid_audience`."
            ),
            WORKFLOWS_START,
        ),
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

    @extend_schema(
        operation_id="executions_get",
        summary="An execution's progress",
        description=described(
            (
                "State of the execution and how many journeys are at each step and in each state. 404 "
                "for an execution of another project."
            ),
            READ,
        ),
        responses=dict,
    )
    def get(self, request: Request, execution_id: int) -> Response:
        execution = selectors.execution_get(self.project, execution_id)
        return Response(selectors.execution_summary(self.project, execution))


class ExecutionCancelView(ProjectAPIView):
    required_scope = WORKFLOWS_START

    @extend_schema(
        operation_id="executions_cancel",
        summary="Cancel an execution",
        description=described(
            (
                "Stops every open journey of the execution; steps already sent stay sent. 409 "
                "`execution_finished` when it has already finished or been cancelled."
            ),
            WORKFLOWS_START,
        ),
        request=None,
        responses=dict,
    )
    def post(self, request: Request, execution_id: int) -> Response:
        execution = selectors.execution_get(self.project, execution_id)
        execution = services.execution_cancel(project=self.project, execution=execution)
        return Response(execution_data(execution))


class ExecutionSubscriberView(ProjectAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="executions_subscriber_journey",
        summary="One subscriber's journey in an execution",
        description=described(
            (
                "Where the subscriber is in the execution: the state of their journey and every step "
                "taken, with outcomes. 404 when the subscriber has no journey in it."
            ),
            READ,
        ),
        responses=dict,
    )
    def get(self, request: Request, execution_id: int, external_id: str) -> Response:
        execution = selectors.execution_get(self.project, execution_id)
        journey = selectors.journey_for(self.project, execution, external_id)
        return Response(selectors.journey_summary(self.project, journey))


class ExecutionSubscriberStopView(ProjectAPIView):
    required_scope = WORKFLOWS_START

    @extend_schema(
        operation_id="executions_subscriber_stop",
        summary="Stop one subscriber's journey",
        description=described(
            (
                "Ends this subscriber's journey in the execution, closing any open branch; the rest of "
                "the execution goes on. 409 `journey_finished` when the journey has already ended."
            ),
            WORKFLOWS_START,
        ),
        request=None,
        responses=dict,
    )
    def post(self, request: Request, execution_id: int, external_id: str) -> Response:
        execution = selectors.execution_get(self.project, execution_id)
        journey = selectors.journey_for(self.project, execution, external_id)
        if services.journeys_stop(project=self.project, journeys=[journey], reason="stopped via API") == 0:
            raise ApplicationError(
                f"The journey of {external_id!r} is already {journey.state}.", code="journey_finished", status=409
            )
        journey.refresh_from_db()
        return Response(selectors.journey_summary(self.project, journey))
