"""The template version editor's per-channel fields, and how they become stored content.

The engine reads one JSON object per version, one block per channel (see
``apps.delivery.channels.base.OutboundMessage``). The editor shows each block's keys as
fields and assembles the same object back. Keys it has no field for (``from_email``,
``headers``, ``platform``…) travel in a hidden copy of the content the page was opened
with, so saving an unchanged draft stores what was there; so does a key that was
present but empty. Whether the content is complete, safe and compiles is decided where it
always was, ``template_content_validate``; this module only maps its errors to fields.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django import forms

from apps.delivery.models import Layout
from apps.subscribers.models import Channel

CODE_ATTRS = {"class": "code", "spellcheck": "false", "data-code-editor": "", "autocapitalize": "off"}
_EMPTY: tuple[Any, ...] = ("", [], {}, None)


class EditorText(forms.CharField):
    """Text kept as written: no stripping, and the browser's CRLF line ends back to LF."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> str:
        return super().to_python(value).replace("\r\n", "\n")


class EditorJSON(forms.CharField):
    """A small JSON value; ``kind`` (``dict``, ``list``) is the type it must have."""

    def __init__(self, *, kind: type | None = None, kind_error: str = "", **kwargs: Any) -> None:
        self.kind, self.kind_error = kind, kind_error
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 4, **CODE_ATTRS}))
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value, indent=2, ensure_ascii=False)

    def to_python(self, value: Any) -> Any:
        value = super().to_python(value)
        if not value.strip():
            return None
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}).") from exc
        if self.kind is not None and not isinstance(parsed, self.kind):
            raise forms.ValidationError(self.kind_error)
        return parsed


class EditorLines(EditorText):
    """A list of texts, one per line (the values of an approved WhatsApp template)."""

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(str(v) for v in value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value)
        return text.split("\n") if text else []


@dataclass(frozen=True)
class Key:
    """One key of a channel block and the form field that edits it."""

    channel: str
    key: str

    @property
    def field(self) -> str:
        return f"{self.channel}_{self.key}"


def _text(label: str, rows: int = 0, **kwargs: Any) -> EditorText:
    widget = forms.Textarea(attrs={"rows": rows}) if rows else forms.TextInput()
    return EditorText(label=label, widget=widget, **kwargs)


def _fields() -> dict[Key, forms.Field]:
    return {
        Key("email", "subject"): _text("Subject"),
        Key("email", "preheader"): _text("Preheader", help_text="The line inboxes show after the subject."),
        Key("email", "html"): EditorText(
            label="HTML", widget=forms.Textarea(attrs={"rows": 16, **CODE_ATTRS}), help_text="Tab inserts spaces."
        ),
        Key("email", "text"): _text("Text", rows=8, help_text="The plain-text part, for clients that show no HTML."),
        Key("push", "title"): _text("Title"),
        Key("push", "body"): _text("Body", rows=3),
        Key("push", "image"): _text("Image URL"),
        Key("push", "data"): EditorJSON(
            label="Data",
            kind=dict,
            kind_error="Push data must be a JSON object of keys and values.",
            help_text='A JSON object, e.g. {"order_id": "{{ order_id }}"}.',
        ),
        Key("sms", "text"): EditorText(label="Body", widget=forms.Textarea(attrs={"rows": 4, "data-sms-counter": ""})),
        Key("whatsapp", "template"): _text("Approved template name"),
        Key("whatsapp", "language"): _text("Language", help_text="The approved template's language code, e.g. en_US."),
        Key("whatsapp", "variables"): EditorLines(
            label="Variables",
            widget=forms.Textarea(attrs={"rows": 3}),
            help_text="One value per line, in the order of the template's placeholders.",
        ),
        Key("slack", "text"): _text("Text", rows=4),
        Key("slack", "blocks"): EditorJSON(label="Blocks", help_text="Optional Block Kit blocks, a JSON list."),
        Key("teams", "text"): _text("Text", rows=4),
        Key("teams", "card"): EditorJSON(label="Adaptive Card", help_text="Optional, a JSON object."),
        Key("webhook", "body"): EditorJSON(label="Body", help_text="The JSON the receiver expects."),
    }


EDITOR_KEYS: tuple[Key, ...] = tuple(_fields())
CHANNEL_LABELS = dict(Channel.choices)


class VersionForm(forms.Form):
    """A new version from per-channel fields; ``stored_content()`` is what the engine will read."""

    channels = forms.MultipleChoiceField(
        choices=Channel.choices, required=False, widget=forms.CheckboxSelectMultiple, label="Channels"
    )
    original = forms.CharField(required=False, widget=forms.HiddenInput)
    layout = forms.ModelChoiceField(queryset=Layout.objects.none(), required=False)
    strict = forms.BooleanField(
        required=False, help_text="A missing variable fails the delivery instead of rendering empty."
    )
    publish = forms.BooleanField(required=False, help_text="Publish at once (published versions never change).")

    def __init__(self, *args: Any, project: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key, field in _fields().items():
            self.fields[key.field] = field
        if project is not None:
            self.fields["layout"].queryset = Layout.objects.for_project(project).order_by("name")

    @staticmethod
    def initial_for(content: dict[str, Any]) -> dict[str, Any]:
        """Field values that show ``content``, and the copy that keeps what has no field."""
        initial: dict[str, Any] = {
            "channels": list(content),
            "original": json.dumps(content, ensure_ascii=False),
        }
        for key in EDITOR_KEYS:
            block = content.get(key.channel)
            if isinstance(block, dict) and key.key in block:
                initial[key.field] = block[key.key]
        return initial

    def _original(self) -> dict[str, Any]:
        try:
            original = json.loads(self.cleaned_data.get("original") or "{}")
        except json.JSONDecodeError:
            return {}
        return original if isinstance(original, dict) else {}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        ticked = set(cleaned.get("channels") or [])
        for key in EDITOR_KEYS:
            if key.channel not in ticked:
                self.errors.pop(key.field, None)  # a channel left out is not checked
        # The Cloud API looks an approved template up by name and language together.
        if "whatsapp" in (cleaned.get("channels") or []) and not (cleaned.get("whatsapp_language") or "").strip():
            self.add_error(
                "whatsapp_language", "whatsapp.language: WhatsApp needs the language of the approved template."
            )
        return cleaned

    def stored_content(self) -> dict[str, Any]:
        """The content to store: for each channel ticked, its kept block with the fields' values."""
        original = self._original()
        content: dict[str, Any] = {}
        for channel in self.cleaned_data.get("channels") or []:
            kept = original.get(channel)
            block = dict(kept) if isinstance(kept, dict) else {}
            for key in EDITOR_KEYS:
                if key.channel != channel:
                    continue
                value = self.cleaned_data.get(key.field)
                if value not in _EMPTY:
                    block[key.key] = value
                elif block.get(key.key) not in _EMPTY:
                    # Emptied in the editor: the key goes; one stored empty stays as it was.
                    del block[key.key]
            content[channel] = block
        return content

    def channel_sections(self) -> list[dict[str, Any]]:
        """The fields grouped by channel, for the template (the created-for channel first)."""
        ticked = set(self.data.getlist("channels") if self.is_bound else self.initial.get("channels") or [])
        for name in self.errors:
            if name in self.fields:
                # Screen readers announce the error with its field.
                attrs = self.fields[name].widget.attrs
                attrs.update({"aria-invalid": "true", "aria-describedby": f"{self[name].auto_id}-error"})
        sections = []
        for value, label in Channel.choices:
            fields = [self[key.field] for key in EDITOR_KEYS if key.channel == value]
            sections.append({"channel": value, "label": label, "fields": fields, "included": value in ticked})
        return sections

    def add_content_error(self, field: str | None, message: str) -> None:
        """Place an error the content rules raised (``email.subject``, ``push.data.k``…) at its field."""
        name = None
        if field:
            channel, _, rest = field.partition(".")
            key = rest.split(".")[0].split("[")[0]
            if f"{channel}_{key}" in self.fields:
                name = f"{channel}_{key}"
        self.add_error(name, message)


class RawVersionForm(forms.Form):
    """The whole content as one JSON object: what scripts and older pages post."""

    content = EditorJSON(
        required=True, kind=dict, kind_error="Must be a JSON object.", widget=forms.Textarea(attrs={"rows": 12})
    )
    layout = forms.ModelChoiceField(queryset=Layout.objects.none(), required=False)
    strict = forms.BooleanField(required=False)
    publish = forms.BooleanField(required=False)

    def __init__(self, *args: Any, project: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if project is not None:
            self.fields["layout"].queryset = Layout.objects.for_project(project).order_by("name")

    def stored_content(self) -> dict[str, Any]:
        return self.cleaned_data["content"] or {}

    def add_content_error(self, field: str | None, message: str) -> None:
        self.add_error("content", message)
