from typing import Any

app_name = "notifications_console"

urlpatterns: list[Any] = []
