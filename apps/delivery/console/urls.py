from typing import Any

app_name = "delivery_console"

urlpatterns: list[Any] = []
