from typing import Any

app_name = "campaigns_console"

urlpatterns: list[Any] = []
