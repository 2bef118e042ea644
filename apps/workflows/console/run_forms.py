"""The console's "start a run" form: one audience, picked from the project, or pasted ids."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from apps.workflows.audience import MAX_EXTERNAL_IDS

AUDIENCE_CHOICES = [
    ("segment", "A segment"),
    ("tag", "Subscribers with a tag"),
    ("external_ids", "These external ids"),
    ("everyone", "Everyone in the project"),
]
# Pasted from a spreadsheet column or a comma separated list; ids themselves may hold spaces.
_ID_SEPARATORS = re.compile(r"[,\r\n]+")


class RunAudienceForm(forms.Form):
    # A segment is posted by id and checked against the project by the service (another
    # project's id is a 404, not a form error), so it is a plain integer here.
    kind = forms.ChoiceField(choices=AUDIENCE_CHOICES, widget=forms.RadioSelect)
    segment = forms.IntegerField(required=False, min_value=1)
    tag = forms.CharField(required=False, max_length=64)
    external_ids = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4}))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        kind = data.get("kind")
        if kind == "segment" and not data.get("segment"):
            self.add_error("segment", "Pick a segment.")
        if kind == "tag" and not data.get("tag"):
            self.add_error("tag", "Pick a tag.")
        if kind == "external_ids":
            ids = [part.strip() for part in _ID_SEPARATORS.split(data.get("external_ids") or "")]
            ids = [part for part in ids if part]
            if not ids:
                self.add_error("external_ids", "Paste at least one external id.")
            elif len(ids) > MAX_EXTERNAL_IDS:
                self.add_error("external_ids", f"At most {MAX_EXTERNAL_IDS} ids; use a segment or a tag for more.")
            data["id_list"] = ids
        return data

    def audience(self) -> dict[str, Any]:
        """The audience in the shape the start service (and the API) takes."""
        data = self.cleaned_data
        kind = data["kind"]
        if kind == "segment":
            return {"segment": data["segment"]}
        if kind == "tag":
            return {"tag": data["tag"]}
        if kind == "external_ids":
            return {"external_ids": data["id_list"]}
        return {"everyone": True}


class RunStartForm(RunAudienceForm):
    """The confirm step posts the same audience back, with the version it showed and its token."""

    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    token = forms.CharField(max_length=64, widget=forms.HiddenInput)
