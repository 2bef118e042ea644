"""factory_boy factories for the tenancy and governance rows every test needs."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from apps.governance.models import Membership, Role
from apps.projects.models import Organization, Project


class OrganizationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"Org {n}")
    slug = factory.Sequence(lambda n: f"org-{n}")


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"Project {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")
    timezone = "Europe/Lisbon"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct-horse-battery")

    @factory.post_generation
    def verified_email(obj, create: bool, extracted: object, **kwargs: object) -> None:
        # The console opens only to a verified address (apps.accounts.gate); pass
        # verified_email=False for a person who has not verified theirs yet.
        if create and obj.email and extracted is not False:
            from allauth.account.models import EmailAddress

            EmailAddress.objects.create(user=obj, email=obj.email, primary=True, verified=True)


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    organization = factory.SubFactory(OrganizationFactory)
    role = Role.OWNER
