"""Wording for API operation descriptions: which keys may call an operation.

Derived from the scope ceilings, so the published contract says what the permission
check does (tests/test_openapi.py holds every operation to the scope its view declares)."""

from __future__ import annotations

from apps.governance.scopes import PUBLIC_CEILING


def key_access(scope: str, *, secret_only: bool = False) -> str:
    """One paragraph for an operation's description: the key types that may call it."""
    if scope == "*":
        return "**Keys:** any valid key (public, secret or restricted); no scope needed."
    if secret_only:
        return (
            f"**Keys:** needs `{scope}` and a secret-ceiling key: a secret key (`sk_`), or a restricted "
            f"key (`rk_`) under the secret ceiling granted `{scope}`. Public-ceiling keys are refused "
            "with 403 `secret_key_required` even when they hold the scope."
        )
    if scope in PUBLIC_CEILING:
        return (
            f"**Keys:** needs `{scope}`: public (`pk_`) and secret (`sk_`) keys hold it, and restricted "
            "keys (`rk_`) granted it. Safe to call from an app with a public key."
        )
    return (
        f"**Keys:** needs `{scope}`: a secret key (`sk_`), or a restricted key (`rk_`) granted it. "
        "Public keys never hold it (403 `missing_scope`)."
    )


def described(text: str, scope: str, *, secret_only: bool = False) -> str:
    """An operation's description: what it does and its notable errors, then who may call it."""
    return f"{text}\n\n{key_access(scope, secret_only=secret_only)}"
