"""Segment rules: validation and compilation to one SQL predicate over subscribers.

Shape::

    {"op": "and" | "or", "groups": [
        {"all": ["vip", "beta"]},      # has every one of these tags
        {"any": ["pt", "br"]},         # has at least one
        {"none": ["churned"]},         # has none of them
        {"op": "or", "groups": [...]}, # nesting
    ]}

The compiled predicate refers to the subscriber row as ``s`` and only ever looks at that
subscriber's own tags, so the same SQL serves the full recompute (all subscribers of the
project) and the incremental refresh (the few whose tags just changed).
"""

from __future__ import annotations

from typing import Any

from apps.core.errors import ApplicationError
from apps.subscribers.validation import tag_problem

MAX_DEPTH = 5
MAX_PREDICATES = 100
KINDS = ("all", "any", "none")


def _fail(message: str, field: str, code: str = "invalid_segment_rules") -> ApplicationError:
    return ApplicationError(message, code=code, field=field)


def validate_rules(rules: Any, field: str = "rules") -> None:
    """Raise ApplicationError naming the exact place of the first problem."""
    count = [0]
    _validate_node(rules, field, 1, count)


def _validate_node(node: Any, field: str, depth: int, count: list[int]) -> None:
    if depth > MAX_DEPTH:
        raise _fail(f"Rules nest deeper than {MAX_DEPTH} levels.", field)
    if not isinstance(node, dict) or set(node) != {"op", "groups"}:
        raise _fail('A rule group must be {"op": "and"|"or", "groups": [...]}.', field)
    if node["op"] not in ("and", "or"):
        raise _fail(f"op must be 'and' or 'or', not {node['op']!r}.", f"{field}.op")
    groups = node["groups"]
    if not isinstance(groups, list) or not groups:
        raise _fail("groups must be a non-empty list.", f"{field}.groups")
    seen: dict[str, int] = {}
    for index, group in enumerate(groups):
        path = f"{field}.groups[{index}]"
        if isinstance(group, dict) and "op" in group:
            _validate_node(group, path, depth + 1, count)
            key = repr(_canonical(group))
        else:
            _validate_leaf(group, path, count)
            kind = next(iter(group))
            key = f"{kind}:{sorted(group[kind])}"
        if key in seen:
            raise _fail(f"groups[{index}] repeats groups[{seen[key]}].", path, code="duplicate_segment_predicate")
        seen[key] = index
    if node["op"] == "and":
        _check_contradictions(node, field)


def _validate_leaf(group: Any, path: str, count: list[int]) -> None:
    if not isinstance(group, dict) or len(group) != 1 or next(iter(group)) not in KINDS:
        raise _fail('A predicate must be exactly one of {"all": [...]}, {"any": [...]}, {"none": [...]}.', path)
    kind = next(iter(group))
    names = group[kind]
    if not isinstance(names, list) or not names:
        raise _fail(f"{kind} needs a non-empty list of tag names.", f"{path}.{kind}")
    seen: set[str] = set()
    for index, name in enumerate(names):
        problem = tag_problem(name)
        if problem:
            raise _fail(problem, f"{path}.{kind}[{index}]", code="invalid_tag")
        if name in seen:
            raise _fail(f"Tag {name!r} is listed twice.", f"{path}.{kind}[{index}]", code="duplicate_segment_predicate")
        seen.add(name)
    count[0] += len(names)
    if count[0] > MAX_PREDICATES:
        raise _fail(f"Rules may name at most {MAX_PREDICATES} tags.", path)


def _check_contradictions(node: dict[str, Any], field: str) -> None:
    """Within an AND, a tag both required and forbidden can never match anyone."""
    required: set[str] = set()
    forbidden: set[str] = set()
    for group in node["groups"]:
        if "all" in group:
            required.update(group["all"])
        elif "any" in group and len(group["any"]) == 1:
            required.update(group["any"])
        elif "none" in group:
            forbidden.update(group["none"])
    clash = sorted(required & forbidden)
    if clash:
        raise _fail(
            f"Tag {clash[0]!r} is both required and excluded in the same 'and' group: nobody can match.",
            f"{field}.groups",
            code="contradictory_segment_predicate",
        )


def _canonical(node: dict[str, Any]) -> Any:
    if "op" in node:
        return (node["op"], sorted(repr(_canonical(g)) for g in node["groups"]))
    kind = next(iter(node))
    return (kind, sorted(node[kind]))


def rule_tag_names(rules: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for group in rules.get("groups", []):
        if "op" in group:
            names |= rule_tag_names(group)
        else:
            names.update(next(iter(group.values())))
    return names


_HAS_TAG = (
    "EXISTS (SELECT 1 FROM subscribers_subscribertag st JOIN subscribers_tag t ON t.id = st.tag_id"
    " WHERE st.subscriber_id = s.id AND t.name {cmp})"
)


def compile_rules(rules: dict[str, Any]) -> tuple[str, list[Any]]:
    """SQL boolean expression over subscriber ``s`` and its parameters."""
    parts: list[str] = []
    params: list[Any] = []
    for group in rules["groups"]:
        if "op" in group:
            sql, sub = compile_rules(group)
        elif "all" in group:
            sql = "(" + " AND ".join(_HAS_TAG.format(cmp="= %s") for _ in group["all"]) + ")"
            sub = list(group["all"])
        elif "any" in group:
            sql, sub = _HAS_TAG.format(cmp="= ANY(%s)"), [list(group["any"])]
        else:
            sql, sub = "NOT " + _HAS_TAG.format(cmp="= ANY(%s)"), [list(group["none"])]
        parts.append(sql)
        params.extend(sub)
    joiner = " AND " if rules["op"] == "and" else " OR "
    return "(" + joiner.join(parts) + ")", params


def rules_match(rules: dict[str, Any], tags: set[str]) -> bool:
    """Whether a subscriber with exactly these tags matches: ``compile_rules`` in Python.

    For an import chunk the tags of every new subscriber are known already, so their
    membership needs no query (and no plan that stale statistics could spoil).
    """
    results = []
    for group in rules["groups"]:
        if "op" in group:
            results.append(rules_match(group, tags))
        elif "all" in group:
            results.append(all(name in tags for name in group["all"]))
        elif "any" in group:
            results.append(any(name in tags for name in group["any"]))
        else:
            results.append(not any(name in tags for name in group["none"]))
    return all(results) if rules["op"] == "and" else any(results)
