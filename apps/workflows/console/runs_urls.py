"""Starting runs; included by ``apps.workflows.console.urls`` before the detail pages."""

from django.urls import path

from apps.workflows.console import runs

urlpatterns = [
    path("<slug:key>/runs/new", runs.run_new, name="run_new"),
    path("<slug:key>/runs/start", runs.run_start, name="run_start"),
]
