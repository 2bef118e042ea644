from django.urls import path

from apps.governance.console import views

app_name = "governance_console"

urlpatterns = [
    path("", views.key_list, name="keys"),
    path("<int:key_id>/revoke/", views.key_revoke, name="key_revoke"),
    path("<int:key_id>/rotate/", views.key_rotate, name="key_rotate"),
    path("identity-secret/rotate/", views.identity_secret_rotate_view, name="identity_secret_rotate"),
]
