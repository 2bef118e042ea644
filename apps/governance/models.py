"""Who may do what: organization memberships with roles, project API keys, and the
identity-verification secret that lets a public key act for one identified subscriber."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from apps.core.models import ProjectScopedModel
from apps.governance.scopes import CEILINGS


class Role(models.TextChoices):
    """The built-in roles; their permissions are in ``apps.governance.catalogue``."""

    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    EDITOR = "editor", "Editor"
    VIEWER = "viewer", "Viewer"
    BILLING = "billing", "Billing"


# Roles that may manage credentials (API keys, later connectors) in the console.
KEY_MANAGER_ROLES = frozenset({Role.OWNER, Role.ADMIN})


class CustomRole(models.Model):
    """An organization's own role: a name and a set of catalogue permissions."""

    organization = models.ForeignKey("projects.Organization", on_delete=models.CASCADE, related_name="custom_roles")
    name = models.CharField(max_length=64)
    permissions = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="custom_role_name_unique_per_org")]

    def __str__(self) -> str:
        return f"{self.name} ({self.organization})"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey("projects.Organization", on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.EDITOR)
    # When set, the member holds this custom role's permissions instead of ``role``'s.
    custom_role = models.ForeignKey(
        CustomRole, null=True, blank=True, on_delete=models.PROTECT, related_name="memberships"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "organization"], name="membership_unique_user_org")]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} ({self.role})"

    @property
    def can_manage_keys(self) -> bool:
        return self.role in KEY_MANAGER_ROLES


class ApiKey(ProjectScopedModel):
    class Kind(models.TextChoices):
        PUBLIC = "public", "Public"
        SECRET = "secret", "Secret"
        RESTRICTED = "restricted", "Restricted"

    PREFIXES = {Kind.PUBLIC: "pk_", Kind.SECRET: "sk_", Kind.RESTRICTED: "rk_"}

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # For restricted keys: the type whose ceiling bounds ``scopes``.
    ceiling = models.CharField(max_length=16, choices=[("public", "Public"), ("secret", "Secret")])
    scopes = models.JSONField(default=list)
    key_hash = models.CharField(max_length=64, unique=True)
    display_prefix = models.CharField(max_length=16)
    last_four = models.CharField(max_length=4)
    rate_limit_per_minute = models.PositiveIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # Revocation may lie in the future: a rotated key keeps working through its grace period.
    revoked_at = models.DateTimeField(null=True, blank=True, db_index=True)
    replaced_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "created_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.masked})"

    @property
    def masked(self) -> str:
        return f"{self.display_prefix}…{self.last_four}"

    def is_active(self, now: timezone.datetime | None = None) -> bool:
        return self.revoked_at is None or self.revoked_at > (now or timezone.now())

    @property
    def status(self) -> str:
        if self.revoked_at is None:
            return "active"
        if self.revoked_at > timezone.now():
            return "expiring"
        return "rotated" if self.replaced_by_id else "revoked"

    @property
    def under_public_ceiling(self) -> bool:
        """Public keys, and restricted keys bounded by the public ceiling: safe in an app."""
        return "secret" not in (self.kind, self.ceiling)

    def effective_scopes(self) -> frozenset[str]:
        if self.kind == self.Kind.RESTRICTED:
            return frozenset(self.scopes) & CEILINGS[self.ceiling]
        return CEILINGS[self.kind]


class IdentitySecret(ProjectScopedModel):
    """The project's identity-verification secret, encrypted at rest (``apps.core.crypto``).

    The customer's server signs each of its users' external ids with it, as
    HMAC-SHA256 in lowercase hex (the *subscriber hash*), and hands the hash to its app;
    with it a public key may change that identified subscriber. Unlike an API key it
    must stay readable, because every hash is checked against it.
    """

    secret_encrypted = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project"], name="identity_secret_one_per_project")]

    def __str__(self) -> str:
        return f"identity secret of project {self.project_id}"
