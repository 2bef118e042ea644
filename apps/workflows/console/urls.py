from typing import Any

app_name = "workflows_console"

urlpatterns: list[Any] = []
