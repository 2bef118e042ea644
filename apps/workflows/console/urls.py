from django.urls import include, path

from apps.workflows.console import versions, views

app_name = "workflows_console"

urlpatterns = [
    path("", views.workflow_list, name="list"),
    path("", include("apps.workflows.console.builder_urls")),
    path("", include("apps.workflows.console.runs_urls")),
    path("executions/<int:execution_id>/cancel", views.execution_cancel, name="execution_cancel"),
    path("journeys/<int:journey_id>/", views.journey_detail, name="journey"),
    path("<slug:key>/", views.workflow_detail, name="detail"),
    path("<slug:key>/publish", views.workflow_publish, name="publish"),
    path("<slug:key>/versions/<int:number>/", views.version_detail, name="version"),
    path("<slug:key>/versions/compare", versions.version_compare, name="version_compare"),
    path("<slug:key>/versions/<int:number>/restore", versions.version_restore, name="version_restore"),
]
