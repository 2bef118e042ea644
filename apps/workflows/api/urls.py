from django.urls import path

from apps.workflows.api import views

urlpatterns = [
    path("workflows", views.WorkflowsView.as_view(), name="api-workflows"),
    path("workflows/<slug:key>", views.WorkflowDetailView.as_view(), name="api-workflow"),
    path("workflows/<slug:key>/publish", views.PublishView.as_view(), name="api-workflow-publish"),
    path("workflows/<slug:key>/versions/<int:number>", views.VersionView.as_view(), name="api-workflow-version"),
    path(
        "workflows/<slug:key>/versions/<int:number>/wait-preview",
        views.WaitPreviewView.as_view(),
        name="api-workflow-wait-preview",
    ),
    path("workflows/<slug:key>/executions", views.ExecutionsView.as_view(), name="api-workflow-executions"),
    path("executions/<int:execution_id>", views.ExecutionView.as_view(), name="api-execution"),
    path("executions/<int:execution_id>/cancel", views.ExecutionCancelView.as_view(), name="api-execution-cancel"),
    path(
        "executions/<int:execution_id>/subscribers/<str:external_id>",
        views.ExecutionSubscriberView.as_view(),
        name="api-execution-subscriber",
    ),
    path(
        "executions/<int:execution_id>/subscribers/<str:external_id>/stop",
        views.ExecutionSubscriberStopView.as_view(),
        name="api-execution-subscriber-stop",
    ),
]
