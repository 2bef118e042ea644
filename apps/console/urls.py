from django.urls import path

from apps.console import project_views, views

app_name = "console"

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("switch-project/", views.switch_project, name="switch_project"),
    path("project/", project_views.project_settings, name="project_settings"),
]
