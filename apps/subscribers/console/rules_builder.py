"""The segment rule builder: segment rules as nested form rows, and back.

A group posts ``<p>.op`` ("and" / "or") and its members under ``<p>.g.<i>``; a member is
a rule (``.kind`` all/any/none and ``.tags``, comma-separated) or a nested group (its own
``.op``). The root prefix is ``r``. Every set of rules the segment format allows (up to
its nesting limit) round-trips through these fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.subscribers.rules import KINDS, MAX_DEPTH

ROOT = "r"
KIND_LABELS = {"all": "has all of the tags", "any": "has any of the tags", "none": "has none of the tags"}
MAX_MEMBERS = 50


def _indexes(post: Mapping[str, Any], prefix: str) -> list[int]:
    found = set()
    start = f"{prefix}.g."
    for name in post:
        if name.startswith(start):
            head = name[len(start) :].split(".", 1)[0]
            if head.isdigit() and int(head) < MAX_MEMBERS:
                found.add(int(head))
    return sorted(found)


def rules_from_post(post: Mapping[str, Any], prefix: str = ROOT, depth: int = 1) -> dict[str, Any]:
    """The rules the fields describe; ``validate_rules`` judges them (and names any problem)."""
    groups: list[Any] = []
    for i in _indexes(post, prefix):
        member = f"{prefix}.g.{i}"
        if f"{member}.op" in post and depth < MAX_DEPTH + 1:
            groups.append(rules_from_post(post, member, depth + 1))
        else:
            kind = str(post.get(f"{member}.kind", "all"))
            tags = [t.strip() for t in str(post.get(f"{member}.tags", "")).split(",") if t.strip()]
            groups.append({kind if kind in KINDS else "all": tags})
    op = str(post.get(f"{prefix}.op", "and"))
    return {"op": op if op in ("and", "or") else "and", "groups": groups}


def rules_tree(rules: Any, prefix: str = ROOT) -> dict[str, Any]:
    """What the template draws for ``rules`` (a group), with each member's field prefix."""
    rules = rules if isinstance(rules, dict) else {"op": "and", "groups": []}
    members = []
    for i, group in enumerate(rules.get("groups") or []):
        name = f"{prefix}.g.{i}"
        if isinstance(group, dict) and "op" in group:
            members.append({"group": rules_tree(group, name), "name": name})
        elif isinstance(group, dict) and len(group) == 1:
            kind, tags = next(iter(group.items()))
            members.append({"name": name, "kind": kind, "tags": ", ".join(str(t) for t in tags or [])})
    return {
        "name": prefix,
        "op": rules.get("op", "and"),
        "members": members,
        "kinds": [(k, KIND_LABELS[k]) for k in KINDS],
        "nested": prefix.count(".g.") + 1 < MAX_DEPTH,
        "root": prefix == ROOT,
    }


def rules_action(rules: dict[str, Any], action: str) -> dict[str, Any]:
    """``add_rule:<prefix>``, ``add_group:<prefix>`` or ``remove:<member prefix>``."""
    verb, _, where = action.partition(":")
    path = where.split(".g.")
    if not path or path[0] != ROOT or not all(p.isdigit() for p in path[1:]):
        return rules
    holder: Any = rules
    steps = [int(p) for p in path[1:]]
    target = steps[:-1] if verb == "remove" else steps
    for step in target:
        groups = holder.get("groups") or []
        if step >= len(groups) or not isinstance(groups[step], dict) or "op" not in groups[step]:
            return rules
        holder = groups[step]
    groups = holder.setdefault("groups", [])
    if verb == "add_rule" and len(groups) < MAX_MEMBERS:
        groups.append({"all": []})
    elif verb == "add_group" and len(groups) < MAX_MEMBERS:
        groups.append({"op": "or", "groups": [{"any": []}]})
    elif verb == "remove" and steps and steps[-1] < len(groups):
        groups.pop(steps[-1])
    return rules
