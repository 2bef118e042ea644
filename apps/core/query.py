"""Query strings as serializer input."""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from rest_framework import serializers


def query_data(query: QueryDict) -> dict[str, str | list[str]]:
    """The parameters of a query string, for ``Serializer(data=...)``.

    Given the ``QueryDict`` itself, DRF reads it like an HTML form: an optional field sent
    empty (``?tag=``) counts as not sent, so ``?tag=`` lists everyone while the published
    schema says a tag is at least one character. As a plain mapping, an empty value is a
    value, and a field that needs one refuses it with the parameter's name. A repeated
    parameter stays a list, which a single-valued field refuses.
    """
    return {name: values[0] if len(values) == 1 else values for name, values in query.lists()}


class QueryParameters(serializers.Serializer):
    """A query string's serializer: a parameter it does not name is refused (422
    ``unknown_parameter``), so a misspelt filter (``?limt=5``, ``?chanel=sms``) is not a
    silent no-op that answers everything, and the published ``additionalProperties: false``
    holds."""

    def to_internal_value(self, data: Any) -> Any:
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError(
                {"query": [f"Unknown query parameter: {', '.join(repr(name) for name in unknown)}."]},
                code="unknown_parameter",
            )
        return super().to_internal_value(data)
