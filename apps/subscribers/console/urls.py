from typing import Any

app_name = "subscribers_console"

urlpatterns: list[Any] = []
