from typing import Any

urlpatterns: list[Any] = []
