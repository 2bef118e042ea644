"""Input fields whose published schema is what they take.

Text fields take only text; boolean fields of a JSON body take only ``true`` or ``false``.

DRF's ``CharField`` (and the fields built on it) turns a JSON number into its digits, so
``{"tag": 0}`` is stored as the tag ``"0"`` while the published schema says ``type:
string``. These refuse anything but a string with the field's ``invalid`` error (a 422
naming the field), and otherwise behave exactly like DRF's. Query strings and form
fields are text already, so the same serializer serves a body or a query.

``JSONObjectField`` is DRF's ``JSONField`` documented as what the services it feeds read:
an object (a segment's rule group, a workflow graph). The untyped default lets a client
believe any JSON value, null included, is input.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class _OnlyText:
    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid")  # type: ignore[attr-defined]
        return super().to_internal_value(data)  # type: ignore[misc]


class CharField(_OnlyText, serializers.CharField):
    pass


class SlugField(_OnlyText, serializers.SlugField):
    pass


class URLField(_OnlyText, serializers.URLField):
    pass


class EmailField(_OnlyText, serializers.EmailField):
    pass


class BooleanField(serializers.BooleanField):
    """For JSON bodies: DRF would also take 0, 1, "yes", "off"... where the schema says boolean."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


@extend_schema_field({"type": "object", "additionalProperties": True})
class JSONObjectField(serializers.JSONField):
    pass
