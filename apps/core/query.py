"""Query strings as serializer input."""

from __future__ import annotations

from django.http import QueryDict


def query_data(query: QueryDict) -> dict[str, str | list[str]]:
    """The parameters of a query string, for ``Serializer(data=...)``.

    Given the ``QueryDict`` itself, DRF reads it like an HTML form: an optional field sent
    empty (``?tag=``) counts as not sent, so ``?tag=`` lists everyone while the published
    schema says a tag is at least one character. As a plain mapping, an empty value is a
    value, and a field that needs one refuses it with the parameter's name. A repeated
    parameter stays a list, which a single-valued field refuses.
    """
    return {name: values[0] if len(values) == 1 else values for name, values in query.lists()}
