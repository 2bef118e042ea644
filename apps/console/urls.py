from allauth.account import views as account_views
from django.urls import path

from apps.accounts.console import views as account_pages
from apps.console import project_views, views

app_name = "console"

urlpatterns = [
    path("", views.home, name="home"),
    # allauth's sign-in and sign-out (the rest of its pages are included under /console/
    # after these), kept under the console's names for links and bookmarks.
    path("login/", account_views.login, name="login"),
    path("logout/", account_views.logout, name="logout"),
    path("account/", account_pages.my_account, name="my_account"),
    path("sent-mail/", account_pages.sent_mail, name="sent_mail"),
    path("sent-mail/templates/", account_pages.account_templates_edit, name="account_templates_edit"),
    path("switch-project/", views.switch_project, name="switch_project"),
    path("project/", project_views.project_settings, name="project_settings"),
]
