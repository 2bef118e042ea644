"""Subscribers, tags and devices over HTTP. Views only translate; services decide."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.query import query_data
from apps.governance.api.docs import described
from apps.governance.scopes import DEVICES_WRITE, READ, SUBSCRIBERS_WRITE, TAGS_WRITE
from apps.subscribers import selectors
from apps.subscribers.api import serializers as s
from apps.subscribers.api.base import SubscribersAPIView, decode_cursor, page, problems
from apps.subscribers.services import (
    device_delete,
    device_register,
    subscriber_erase,
    subscriber_identify,
    subscriber_tags_change,
    subscriber_update,
)

EXTERNAL_ID = OpenApiParameter(
    "external_id", str, OpenApiParameter.PATH, description="The subscriber's external id (your user id)."
)
IDENTIFY_RULES = """Sending both ids merges the anonymous profile into the identified one.

**Public keys** (`pk_`, and restricted keys under the public ceiling) are safe inside apps:

- The answer carries only the subscriber's `id` and the ids sent, never personal data
  (keys holding `read`, every secret key, get the whole profile).
- A public key may set profile fields (email, phone, timezone, locale, attributes) on a
  subscriber this call creates, or on an anonymous one. Changing a subscriber that already
  exists with an external id (its fields, merging an anonymous profile into it) needs its
  `subscriber_hash`: the lowercase hex HMAC-SHA256 of the external_id, keyed with the
  project's identity-verification secret (console, API keys page), computed by your server
  and handed to your app at sign-in. Without it, or with a wrong one, the answer is 403
  `identity_verification_required` and nothing changes. The same rule holds for
  registering a device to, and tagging, an identified subscriber."""
TOKEN = OpenApiParameter("token", str, OpenApiParameter.PATH, description="The device's push token.")


def valid(serializer_class: type, data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class IdentifyView(SubscribersAPIView):
    required_scope = SUBSCRIBERS_WRITE

    @extend_schema(
        operation_id="subscribers_identify",
        tags=["subscribers"],
        summary="Create or update a subscriber by external_id and/or anonymous_id",
        description=described(IDENTIFY_RULES, SUBSCRIBERS_WRITE),
        request=s.IdentifyIn,
        responses={200: s.IdentifyOut, **problems(403, 422)},
    )
    def post(self, request: Request) -> Response:
        data = valid(s.IdentifyIn, request.data)
        external_id, anonymous_id = data.get("external_id"), data.get("anonymous_id")
        subscriber = subscriber_identify(
            project=self.project,
            external_id=external_id,
            anonymous_id=anonymous_id,
            email=data.get("email"),
            phone=data.get("phone"),
            timezone=data.get("timezone"),
            locale=data.get("locale"),
            attributes=data.get("attributes"),
            identity_verified=self.identity_verified(external_id, data.get("subscriber_hash")),
        )
        if not self.reads_people:
            return Response(s.subscriber_ids_out(subscriber, external_id=external_id, anonymous_id=anonymous_id))
        tags = selectors.subscriber_tag_names(self.project, [subscriber.pk]).get(subscriber.pk, set())
        return Response(s.subscriber_out(subscriber, tags))


class SubscriberListView(SubscribersAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="subscribers_list",
        description=described(
            (
                "Filter by tag, segment, email or creation time; `next_cursor` fetches the next page. "
                "422 for a cursor this API did not give out."
            ),
            READ,
        ),
        tags=["subscribers"],
        summary="List subscribers, newest id first, one cursor page at a time",
        parameters=[s.ListQuery],
        responses={200: s.SubscriberPageOut, **problems(403, 422)},
    )
    def get(self, request: Request) -> Response:
        q = valid(s.ListQuery, query_data(request.query_params))
        qs = selectors.subscriber_list(
            self.project,
            tag=q.get("tag"),
            segment_id=q.get("segment"),
            email=q.get("email"),
            created_after=q.get("created_after"),
            created_before=q.get("created_before"),
            after_id=decode_cursor(q.get("cursor")),
        )
        rows, next_cursor = page(qs, q["limit"])
        tags = selectors.subscriber_tag_names(self.project, [r.pk for r in rows])
        return Response(
            {"results": [s.subscriber_out(r, tags.get(r.pk, set())) for r in rows], "next_cursor": next_cursor}
        )


class SubscriberDetailView(SubscribersAPIView):
    required_scopes = {"GET": READ, "PATCH": SUBSCRIBERS_WRITE, "DELETE": SUBSCRIBERS_WRITE}
    secret_methods = frozenset({"PATCH", "DELETE"})

    @extend_schema(
        operation_id="subscriber_get",
        description=described(
            (
                "The profile, tags, devices, segment memberships and channel preferences. 404 for an "
                "external id this project does not have."
            ),
            READ,
        ),
        tags=["subscribers"],
        summary="One subscriber with tags, devices, segments and preferences",
        parameters=[EXTERNAL_ID],
        responses={200: s.SubscriberDetailOut, **problems(403, 404)},
    )
    def get(self, request: Request, external_id: str) -> Response:
        subscriber = selectors.subscriber_get(self.project, external_id)
        body = s.subscriber_out(
            subscriber, selectors.subscriber_tag_names(self.project, [subscriber.pk]).get(subscriber.pk, set())
        )
        body["devices"] = [s.device_out(d) for d in subscriber.devices.order_by("pk")]
        segments = selectors.subscriber_segments(self.project, subscriber)
        body["segments"] = [{"id": g.pk, "name": g.name} for g in segments]
        body["preferences"] = [
            {"channel": p.channel, "category": p.category, "opted_out": p.opted_out}
            for p in subscriber.preferences.order_by("channel", "category")
        ]
        return Response(body)

    @extend_schema(
        operation_id="subscriber_update",
        description=described(
            (
                "Changes only the fields sent; preferences opt the subscriber in or out per channel "
                "and category. 404 for an unknown subscriber; 422 names each invalid field."
            ),
            SUBSCRIBERS_WRITE,
            secret_only=True,
        ),
        tags=["subscribers"],
        summary="Change a subscriber's profile and channel preferences (secret key)",
        parameters=[EXTERNAL_ID],
        request=s.SubscriberPatchIn,
        responses={200: s.SubscriberDetailOut, **problems(403, 404, 422)},
    )
    def patch(self, request: Request, external_id: str) -> Response:
        data = valid(s.SubscriberPatchIn, request.data)
        subscriber = selectors.subscriber_get(self.project, external_id)
        subscriber = subscriber_update(project=self.project, subscriber=subscriber, **data)
        return self.get(request, external_id)

    @extend_schema(
        operation_id="subscriber_erase",
        description=described(
            (
                "Forgets the person: profile fields, ids, devices, tags, tag history, preferences and "
                "segment memberships are deleted; an anonymous row stays so delivery counts still add "
                "up. Cannot be undone. 404 for an unknown subscriber."
            ),
            SUBSCRIBERS_WRITE,
            secret_only=True,
        ),
        tags=["subscribers"],
        summary="Erase a subscriber and everything held about them (secret key)",
        parameters=[EXTERNAL_ID],
        responses={204: None, **problems(403, 404)},
    )
    def delete(self, request: Request, external_id: str) -> Response:
        subscriber = selectors.subscriber_get(self.project, external_id)
        subscriber_erase(project=self.project, subscriber=subscriber)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SubscriberExportView(SubscribersAPIView):
    required_scope = READ

    @extend_schema(
        operation_id="subscriber_export",
        description=described(
            "Everything held about the subscriber, for a data-access request. 404 for an unknown subscriber.", READ
        ),
        tags=["subscribers"],
        summary="Everything held about one subscriber (privacy export)",
        parameters=[EXTERNAL_ID],
        responses={200: s.SubscriberExportOut, **problems(403, 404)},
    )
    def get(self, request: Request, external_id: str) -> Response:
        subscriber = selectors.subscriber_get(self.project, external_id)
        return Response(selectors.subscriber_export(self.project, subscriber))


class SubscriberTagsView(SubscribersAPIView):
    required_scope = TAGS_WRITE

    @extend_schema(
        operation_id="subscriber_tags_change",
        tags=["subscribers"],
        summary="Add and remove tags; answers the tags and segments after the change",
        description=described(
            "With `?id_type=anonymous` the path names a visitor's anonymous id, so an app tags before "
            "login and the tags reach the merge. A public key tags an identified subscriber only with "
            "its `subscriber_hash` (403 `identity_verification_required`); an anonymous id already "
            "merged into an identified subscriber is tagged by that subscriber's external id.",
            TAGS_WRITE,
        ),
        parameters=[
            OpenApiParameter(
                "external_id",
                str,
                OpenApiParameter.PATH,
                description="The subscriber's external id, or its anonymous id with id_type=anonymous.",
            ),
            s.TagsQuery,
        ],
        request=s.TagsIn,
        responses={200: s.TagsOut, **problems(403, 404, 422)},
    )
    def post(self, request: Request, external_id: str) -> Response:
        data = valid(s.TagsIn, request.data)
        if valid(s.TagsQuery, query_data(request.query_params))["id_type"] == "anonymous":
            if data.get("subscriber_hash"):
                raise ValidationError({"subscriber_hash": "A subscriber_hash goes with the external_id it signs."})
            subscriber = selectors.subscriber_by_anonymous_id(self.project, external_id)
            verified = self.identity_verified(None, None)
        else:
            subscriber = selectors.subscriber_get(self.project, external_id)
            verified = self.identity_verified(external_id, data.get("subscriber_hash"))
        names = subscriber_tags_change(
            project=self.project,
            subscriber=subscriber,
            add=data["add"],
            remove=data["remove"],
            source="api",
            identity_verified=verified,
        )
        segments = selectors.subscriber_segments(self.project, subscriber)
        return Response({"tags": sorted(names), "segments": [{"id": g.pk, "name": g.name} for g in segments]})


class DeviceListView(SubscribersAPIView):
    required_scope = DEVICES_WRITE

    @extend_schema(
        operation_id="device_register",
        tags=["devices"],
        summary="Register (or move) a push token to a subscriber, creating the subscriber if new",
        description=described(
            "The owner is named by external_id or by a visitor's anonymous_id (the device follows the "
            "visitor into the identified subscriber at the merge). A public key registers a device to an "
            "identified subscriber that already exists only with its `subscriber_hash` "
            "(403 `identity_verification_required`).",
            DEVICES_WRITE,
        ),
        request=s.DeviceIn,
        responses={201: s.DeviceRegisteredOut, **problems(403, 422)},
    )
    def post(self, request: Request) -> Response:
        data = valid(s.DeviceIn, request.data)
        external_id = data.get("external_id")
        with transaction.atomic():
            owner = subscriber_identify(
                project=self.project,
                external_id=external_id,
                anonymous_id=data.get("anonymous_id"),
                identity_verified=self.identity_verified(external_id, data.get("subscriber_hash")),
                will_change=True,
            )
            device = device_register(
                project=self.project, subscriber=owner, platform=data["platform"], token=data["token"]
            )
        body = s.device_out(device)
        body["subscriber"] = {"external_id": owner.external_id, "anonymous_id": owner.anonymous_id}
        return Response(body, status=status.HTTP_201_CREATED)


class DeviceDetailView(SubscribersAPIView):
    required_scope = DEVICES_WRITE

    @extend_schema(
        operation_id="device_delete",
        description=described(
            "Removes the push token; later pushes skip it. 404 for a token this project does not have.", DEVICES_WRITE
        ),
        tags=["devices"],
        summary="Forget a push token",
        parameters=[TOKEN],
        responses={204: None, **problems(403, 404)},
    )
    def delete(self, request: Request, token: str) -> Response:
        device_delete(project=self.project, token=token)
        return Response(status=status.HTTP_204_NO_CONTENT)
