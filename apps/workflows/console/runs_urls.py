"""Starting runs and watching executions; included by ``apps.workflows.console.urls`` before the detail pages."""

from django.urls import path

from apps.workflows.console import execution_views, runs

urlpatterns = [
    path("executions/<int:execution_id>/", execution_views.execution_detail, name="execution"),
    path("executions/<int:execution_id>/live", execution_views.execution_live, name="execution_live"),
    path("<slug:key>/runs/new", runs.run_new, name="run_new"),
    path("<slug:key>/runs/start", runs.run_start, name="run_start"),
]
