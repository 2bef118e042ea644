from __future__ import annotations

from django import forms

from apps.delivery.models import Delivery
from apps.notifications.models import Notification
from apps.subscribers.models import Channel

STATE_CHOICES = [("", "Any state")]
STATE_CHOICES += [(f"{v}", f"Notification: {label}") for v, label in Notification.State.choices]
STATE_CHOICES += [(f"{v}", f"Delivery: {label}") for v, label in Delivery.State.choices]


class ExplorerFilterForm(forms.Form):
    id = forms.IntegerField(required=False, min_value=1, label="Notification id")
    subscriber = forms.CharField(required=False, max_length=255, label="Subscriber external id")
    state = forms.ChoiceField(required=False, choices=STATE_CHOICES)
    channel = forms.ChoiceField(required=False, choices=[("", "Any channel"), *Channel.choices])
    since = forms.DateTimeField(
        required=False, label="From", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    until = forms.DateTimeField(
        required=False, label="Until", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
